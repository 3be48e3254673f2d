// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// Turns the wearer's attitude into answers for a shared round, with the same rules as the
/// daemon's own game (`[game]` thresholds, hold, neutral, debounce): it runs a `TiltGame` over
/// the daemon's attitude stream whose "prompts" are placeholders — which prompt is on screen is
/// the room's business (`RoomMember`); the game only says when the head answered, and how.
struct DecisionDetector {
    private let rules: TiltGame.Rules
    private var game: TiltGame
    /// The room round and prompt index the local round started at, and answers since.
    private var following: (round: Int, index: Int)?
    private var answered = 0
    /// Prompts left when a restart waits for the next attitude (a round starts at a sample time).
    private var startPending: Int?
    /// Whether the last `update` showed a prompt or the neutral pose (the view changes).
    private(set) var promptChanged = false

    init(rules: TiltGame.Rules) throws {
        self.rules = rules
        game = try TiltGame(configuration: rules)
    }

    /// Whether a prompt is on screen (the head has come back to neutral since the last answer).
    var promptShown: Bool { game.phase == .prompt }

    /// Forgets everything (no round is followed).
    mutating func reset() {
        game = try! TiltGame(configuration: rules)  // the rules were valid in init
        following = nil
        answered = 0
        startPending = nil
    }

    /// Makes sure the local round follows room round `round` from prompt `index` on; restarts
    /// it if it followed something else (the host counted differently, a new round began).
    mutating func follow(round: Int, index: Int, promptsLeft: Int) {
        if let f = following, f.round == round, f.index + answered == index { return }
        reset()
        guard promptsLeft > 0 else { return }
        following = (round, index)
        startPending = promptsLeft
    }

    /// Feeds one attitude; returns the answer the head just gave, if any.
    mutating func update(_ a: Attitude) -> Decision? {
        promptChanged = false
        if let n = startPending {
            startPending = nil
            let deck = try! PromptDeck(name: "room", prompts: (0..<n).map { "#\($0)" })  // n ≥ 1, short, distinct
            _ = try? game.start(at: a.t, roundSeconds: TiltGame.Rules.roundSecondsRange.upperBound, deck: deck)
        }
        for e in game.update(a) {
            switch e.kind {
            case .correct, .skip:
                answered += 1
                return e.kind == .correct ? .correct : .skip
            case .prompt, .neutral:
                promptChanged = true
            default:
                break
            }
        }
        return nil
    }

    /// The attitude in a daemon `attitude` line, read with the protocol's typed body.
    static func attitude(from line: DaemonLine) -> Attitude? {
        guard case .attitude(let body) = line.body, let t = line.tNs else { return nil }
        let q = body.q
        return Attitude(t: t, q: Quaternion(w: q.w, x: q.x, y: q.y, z: q.z), atRest: body.atRest, gyroBias: .zero)
    }
}
