// SPDX-License-Identifier: Apache-2.0
/// Why a request was refused. `code` is stable (clients switch on it); `message` is for people.
public struct ProtocolError: Error, Sendable, Equatable {
    /// A stable, machine-readable error code. Every code the daemon can send is declared here,
    /// once, with its meaning: the `help` reply, the catalogue (`CommandCatalogue`) and the
    /// table in docs/protocol.md all come from `Code.all`.
    public struct Code: RawRepresentable, Sendable, Equatable, Hashable, ExpressibleByStringLiteral {
        /// The code on the wire, e.g. `"bad_argument"`.
        public var rawValue: String
        /// Wraps a code; prefer the constants below, which are the documented ones.
        public init(rawValue: String) { self.rawValue = rawValue }
        /// Wraps a code literal.
        public init(stringLiteral v: String) { rawValue = v }

        // Any line.
        /// The line is not JSON.
        public static let invalidJSON: Code = "invalid_json"
        /// A line over `[socket] max_line_bytes`.
        public static let lineTooLong: Code = "line_too_long"
        /// JSON, but not an object.
        public static let notAnObject: Code = "not_an_object"
        /// `cmd` names no command.
        public static let unknownCommand: Code = "unknown_command"
        /// A field is missing, of the wrong type, out of range, or not taken by the command.
        public static let badArgument: Code = "bad_argument"
        /// A command that needs trust, from an untrusted peer.
        public static let forbidden: Code = "forbidden"
        /// The part needed is not there (no samples yet, quests disabled, the store failing).
        public static let unavailable: Code = "unavailable"
        /// A bug.
        public static let internalError: Code = "internal"
        // Game.
        /// `game.start` while a round runs.
        public static let roundInProgress: Code = "round_in_progress"
        /// `game.stop` with no round running.
        public static let notRunning: Code = "not_running"
        /// A round length out of range.
        public static let invalidRoundLength: Code = "invalid_round_length"
        /// The deck has no usable prompts.
        public static let emptyDeck: Code = "empty_deck"
        /// The deck file cannot be read or parsed.
        public static let deckUnavailable: Code = "deck_unavailable"
        /// Game rules that do not validate.
        public static let invalidConfiguration: Code = "invalid_configuration"
        /// A restart before any round.
        public static let nothingToRestart: Code = "nothing_to_restart"
        /// `game.start` with the `nod` vocabulary on an IMU without a gyroscope.
        public static let needsGyro: Code = "needs_gyro"
        // Credits.
        /// A redeem larger than the balance.
        public static let insufficientCredits: Code = "insufficient_credits"
        // Quests.
        /// `quest.complete` without a position fix.
        public static let noFix: Code = "no_fix"
        /// The fix's uncertainty is above half a quest cell.
        public static let uncertain: Code = "uncertain"
        /// The named cell is not the one the wearer is in.
        public static let notInCell: Code = "not_in_cell"
        /// The cell's quest was completed recently.
        public static let coolingDown: Code = "cooling_down"
        /// `calibrate.gyro`: the device moved (or turned) during the measurement; nothing measured.
        public static let calibrationRefused: Code = "calibration_refused"
        // Reload.
        /// The new configuration is invalid or cannot be applied; nothing changed.
        public static let reloadRefused: Code = "reload_refused"

        // Gateways: what `tiltd web` refuses a browser with before the daemon sees the command
        // (docs/web.md); not in `all`, which is the daemon's.
        /// A command a browser may not send at all.
        public static let notAllowed: Code = "not_allowed"
        /// A command a browser may send only once paired.
        public static let notPaired: Code = "not_paired"

        /// Every code, in the order docs/protocol.md lists them, with what it means.
        public static let all: [(code: Code, meaning: String)] = [
            (invalidJSON, "the line is not JSON (the message says where)"),
            (notAnObject, "JSON, but not an object"),
            (lineTooLong, "over `max_line_bytes`"),
            (unknownCommand, "`cmd` names no command"),
            (badArgument, "a field is missing, of the wrong type, out of range, or not taken by the command"),
            (forbidden, "a command that changes state, from an untrusted peer"),
            (
                unavailable,
                "the part needed is not there (no attitude yet, quests disabled, the store failing, the daemon starting)"
            ),
            (roundInProgress, "`game.start` while a round runs"),
            (notRunning, "`game.stop` with no round running"),
            (invalidRoundLength, "a round length out of range"),
            (emptyDeck, "the deck has no usable prompts"),
            (deckUnavailable, "the deck file cannot be read, is too large or does not parse"),
            (needsGyro, "`game.start` with `gestures` `nod`, or `calibrate.gyro`, on an IMU without a gyroscope"),
            (insufficientCredits, "a redeem larger than the balance"),
            (noFix, "`quest.complete` with no position fix"),
            (uncertain, "the fix is too uncertain (eph above half a cell)"),
            (notInCell, "the named cell is not the wearer's"),
            (coolingDown, "the cell's quest was completed recently"),
            (
                calibrationRefused,
                "`calibrate.gyro`: the device moved during the measurement (the message says how and when)"
            ),
            (
                reloadRefused,
                "the new configuration is invalid or cannot be applied (file:line: key: reason); nothing changed"
            ),
            (internalError, "a bug: please report it"),
        ]
    }

    /// The stable code.
    public var code: Code
    /// What went wrong, for people.
    public var message: String
    /// An error with `code` and a message for people.
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }

    /// The reply line refusing a request, as a gateway (the MQTT bridge, `tiltd web`) sends it
    /// itself: the daemon's reply shape (`Event.reply(id:cmd:error:)`, docs/protocol.md) without
    /// `seq`. `cmd` is nil when the request named no known command.
    public func replyObject(id: JSONValue, cmd: String?) -> JSONObject {
        [
            "class": "reply", "id": id, "cmd": cmd.map { .string($0) } ?? .null, "ok": false,
            "error": .object(["code": .string(code.rawValue), "message": .string(message)]),
        ]
    }
}
