// SPDX-License-Identifier: Apache-2.0
import TiltProtocol

/// Why a game command was refused. `code` and `message` go into the error reply.
public enum GameError: Error, Equatable, Sendable, CustomStringConvertible {
    /// `start` while a round runs (use `stop` or `restart`).
    case roundInProgress
    /// `stop` with no round running.
    case notRunning
    /// `restart` before any round was started.
    case nothingToRestart
    /// The deck had no usable prompts.
    case emptyDeck(deck: String)
    /// The prompt provider failed (e.g. a places deck without a GPS fix).
    case deckUnavailable(deck: String, reason: String)
    /// A round length outside `Rules.roundSecondsRange`.
    case invalidRoundLength(Double)
    /// A configuration value out of range; `field` is its config/protocol name.
    case invalidConfiguration(field: String, reason: String)
    /// The `nod` vocabulary was asked for but the IMU has no gyroscope.
    case needsGyro

    /// The error reply's code (declared with the others in `ProtocolError.Code`).
    public var code: ProtocolError.Code {
        switch self {
        case .roundInProgress: return .roundInProgress
        case .notRunning: return .notRunning
        case .nothingToRestart: return .nothingToRestart
        case .emptyDeck: return .emptyDeck
        case .deckUnavailable: return .deckUnavailable
        case .invalidRoundLength: return .invalidRoundLength
        case .invalidConfiguration: return .invalidConfiguration
        case .needsGyro: return .needsGyro
        }
    }

    /// A message for people.
    public var message: String {
        switch self {
        case .roundInProgress: return "a round is in progress; stop it first (game.stop)"
        case .notRunning: return "no round is running"
        case .nothingToRestart: return "no round has been started yet"
        case .emptyDeck(let d): return "deck \(d) has no prompts"
        case .deckUnavailable(let d, let r): return "deck \(d) is unavailable: \(r)"
        case .invalidRoundLength(let s): return "round length \(s) s is outside \(CommandCatalogue.roundSecondsText) s"
        case .invalidConfiguration(let f, let r): return "\(f) \(r)"
        case .needsGyro: return "the nod vocabulary needs a gyroscope and this IMU has none; use gestures \"tilt\""
        }
    }

    /// Same as `message`.
    public var description: String { message }
}
