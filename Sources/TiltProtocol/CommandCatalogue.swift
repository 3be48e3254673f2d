// SPDX-License-Identifier: Apache-2.0
/// Every command the daemon answers, declared once. The request parser (`Request.parse`), the
/// `help` reply, the trust check and the command table in docs/protocol.md come from this list
/// (the room's commands, which `tiltd mqtt` answers, are `roomCommands`)
/// (`CatalogueDocTests` fails when the table and the list differ). A new command is one entry
/// here plus its handler in the component that owns it.
public enum CommandCatalogue {
    /// Codes any command may answer with.
    public static let commonErrors: [ProtocolError.Code] = [.badArgument, .unavailable, .internalError]

    /// The commands, in the order `help` and docs/protocol.md list them.
    public static let commands: [CommandSpec] = [
        CommandSpec(
            "ping", "answers at once: is the daemon alive", trust: .anyone,
            reply: [ReplyField("pong", "true")]),
        CommandSpec(
            "help", "this catalogue: every command, its arguments, trust, reply fields and errors", trust: .anyone,
            arguments: [ArgumentSpec("command", .string(maxLength: 64), "describe only this command")],
            reply: [ReplyField("commands", "one object per command: name, summary, trust, arguments, reply, errors")]),
        CommandSpec(
            "watch", "changes what this client receives; omitted fields keep their value", trust: .anyone,
            arguments: [
                ArgumentSpec(
                    "classes", .strings(maxCount: 64, allowed: EventClass.allCases.map(\.rawValue), noun: "class"),
                    "event classes to receive (hello, reply and gap always come)"),
                ArgumentSpec(
                    Command.Watch.Key.attitudeHz, .number(0...1000),
                    "attitude rate; above 0 adds attitude to the classes, 0 removes it"),
                ArgumentSpec("samples", .bool, "raw calibrated samples on or off (adds or removes sample)"),
            ],
            reply: [ReplyField("watch", "the settings in force: classes, attitude_hz, samples")]),
        CommandSpec(
            "status", "the daemon's state: sources, game, fix, places", trust: .anyone,
            reply: [
                ReplyField("version", "tiltd's version"), ReplyField("sources", "each source's latest status"),
                ReplyField("samples", "samples processed"),
                ReplyField("sample_rate_hz", "measured over the last second"),
                ReplyField("heading", "the heading's source and the magnetic model's declination at the latest fix"),
                ReplyField("clients", "connected clients"),
                ReplyField("dropped_lines", "lines dropped for connected clients"),
                ReplyField("samples_skipped", "samples dropped because the event loop was behind"),
                ReplyField("game", "the game state"), ReplyField("fix", "the latest fix"),
                ReplyField("places", "places loaded"), ReplyField("inside", "fences the wearer is inside"),
                ReplyField("snoozing", "whether place events are snoozed"),
                ReplyField("room", "the shared round last shown with room.show (absent before)"),
            ]),
        CommandSpec(
            "stats", "counters for monitoring since the daemon started", trust: .anyone,
            reply: [
                ReplyField("uptime_s", "seconds since start (monotonic clock)"),
                ReplyField("sample_rate_hz", "measured over the last second"),
                ReplyField("samples", "samples processed"),
                ReplyField("samples_dropped", "samples dropped because the event loop was behind"),
                ReplyField("clients", "connected clients"),
                ReplyField("lines_dropped", "lines dropped for slow clients, per event class, since start"),
                ReplyField("fanout_writes", "how lines go out: \"io_uring\", or \"write (…)\" and why not io_uring"),
                ReplyField(
                    "fanout_registered_clients", "clients whose socket is in io_uring's registered-file table"),
                ReplyField("decisions", "game decisions per kind (correct, skip)"),
                ReplyField("rounds", "rounds started and ended"),
                ReplyField("fix_age_s", "seconds since the latest fix arrived (absent before the first)"),
                ReplyField("reloads", "reloads applied and refused, and the last one's result"),
            ]),
        CommandSpec(
            "game.start", "starts a round", trust: .trusted,
            arguments: [
                ArgumentSpec(
                    "round_s", .number(roundSecondsRange), "round length (default [game] round_s)",
                    outOfRange: .invalidRoundLength),
                ArgumentSpec(
                    "deck", .string(maxLength: 4096),
                    "\"nearby\" or a deck file's name in the deck directory ([game] deck_dir: .txt or .json, no path)"),
                ArgumentSpec(
                    "gestures", .string(maxLength: 16), "\"tilt\" or \"nod\" for this round (default [game] gestures)"),
            ],
            reply: [
                ReplyField("round", "the round's number"), ReplyField("deck", "the deck's name"),
                ReplyField("deck_note", "why the fallback deck is used"),
            ],
            errors: [.roundInProgress, .invalidRoundLength, .emptyDeck, .deckUnavailable, .needsGyro]),
        CommandSpec(
            "game.stop", "ends the running round early; it is stored", trust: .trusted,
            reply: [ReplyField("round", "the round stopped")], errors: [.notRunning]),
        CommandSpec(
            "game.reset", "drops any running round (not stored), the neutral pose and last_round", trust: .trusted),
        CommandSpec(
            "game.neutral", "captures the current head pose as neutral", trust: .trusted,
            reply: [ReplyField("captured", "whether the pose was taken (the game event says why not)")]),
        CommandSpec(
            "history", "the last finished rounds, newest first", trust: .anyone,
            arguments: [ArgumentSpec("n", .number(1...1000), "how many (default 10)")],
            reply: [ReplyField("rounds", "their result objects")]),
        CommandSpec(
            "snooze", "stops fix and place events until the wearer has moved", trust: .trusted,
            arguments: [
                ArgumentSpec("distance_m", .number(1...100_000), "metres to move (default [snooze] distance_m)")
            ],
            reply: [ReplyField("until_moved_m", "the distance in force")]),
        CommandSpec(
            "credits", "the credit balance and the credits earned per place", trust: .anyone,
            reply: [ReplyField("balance", "credits"), ReplyField("places", "fence, name and count per place")]),
        CommandSpec(
            "credits.redeem", "spends credits, atomically and once per request_id", trust: .trusted,
            arguments: [
                ArgumentSpec(
                    "amount", .wholeNumber(1...1_000_000), "credits to spend (default [credits] redeem_amount)"),
                ArgumentSpec("request_id", .string(maxLength: 128), "makes a retry safe: a repeat spends nothing"),
            ],
            reply: [
                ReplyField("redeemed", "credits spent (0 for a repeat)"), ReplyField("balance", "after the redeem"),
                ReplyField("request_id", "the request's id"), ReplyField("already_applied", "true for a repeat"),
            ],
            errors: [.insufficientCredits]),
        CommandSpec(
            "quest.complete", "completes the quest of the wearer's cell", trust: .trusted,
            arguments: [
                ArgumentSpec("cell", .string(maxLength: 64), "the cell's id or name, which must be the wearer's")
            ],
            reply: [
                ReplyField("cell", "the cell's id"), ReplyField("xp", "XP granted"),
                ReplyField("visits", "completions of this cell"),
            ],
            errors: [.noFix, .uncertain, .notInCell, .coolingDown]),
        CommandSpec(
            "room.show", "shows a shared round (from `tiltd mqtt`) to every client as a game line of kind shared",
            trust: .trusted,
            arguments: [
                ArgumentSpec(
                    "view", .object(maxBytes: 65_536),
                    "the round as this device sees it: room, state, players, … (docs/mqtt.md)")
            ],
            reply: [ReplyField("shown", "true: the game line went to every client")]),
        CommandSpec(
            "calibrate.gyro",
            "measures the gyro bias from the running IMU while the device is held still (`tiltd calibrate gyro` writes it)",
            trust: .trusted,
            arguments: [
                ArgumentSpec("seconds", .number(1...120), "seconds to hold still (default 5)"),
                ArgumentSpec("settle", .number(0...60), "seconds skipped first, to let go of the device (default 1)"),
            ],
            reply: [
                ReplyField("gyro_bias", "[x, y, z] rad/s: the mean rate while still, the bias to subtract"),
                ReplyField("noise", "RMS deviation of the rate from it, rad/s"),
                ReplyField("samples", "samples averaged"), ReplyField("seconds", "still time covered"),
                ReplyField("previous", "the gyro_bias in force, [x, y, z] rad/s"),
            ],
            errors: [.calibrationRefused, .needsGyro]),
        CommandSpec(
            "reload", "re-reads the config file and applies all of it, or nothing", trust: .trusted,
            reply: [
                ReplyField("file", "the file read"), ReplyField("changed", "the sections that changed"),
                ReplyField("notes", "what takes effect later (game rules: from the next round)"),
            ],
            errors: [.reloadRefused]),
    ]

    /// The shared room's commands (docs/mqtt.md): `tiltd mqtt` answers them on `<prefix>/cmd`
    /// itself, next to the daemon's, and the daemon does not know them. The same parser checks
    /// them (`Request.parse(_:serving: .bridge)`).
    public static let roomCommands: [CommandSpec] = [
        CommandSpec(
            "room.start", "starts a shared round of this device's room (its host only)", trust: .trusted,
            arguments: [
                ArgumentSpec(
                    "round_s", .number(roundSecondsRange), "round length (default [mqtt] room_round_s)",
                    outOfRange: .invalidRoundLength)
            ],
            reply: [ReplyField("round", "the round's number"), ReplyField("deck_size", "prompts in its deck")],
            errors: [.roundInProgress, .invalidRoundLength, .deckUnavailable]),
        CommandSpec(
            "room.stop", "ends the room's running round for everyone (its host only)", trust: .trusted,
            reply: [ReplyField("round", "the round stopped"), ReplyField("deck_size", "prompts in its deck")],
            errors: [.notRunning]),
        CommandSpec(
            "room.restart", "stops the room's running round and starts a new one (its host only)", trust: .trusted,
            arguments: [
                ArgumentSpec(
                    "round_s", .number(roundSecondsRange), "round length (default [mqtt] room_round_s)",
                    outOfRange: .invalidRoundLength)
            ],
            reply: [ReplyField("round", "the new round's number"), ReplyField("deck_size", "prompts in its deck")],
            errors: [.invalidRoundLength, .deckUnavailable]),
        CommandSpec(
            "room.state", "the room as its host keeps it, and the refusals counted by code", trust: .anyone,
            reply: [ReplyField("room", "the room's state (docs/mqtt.md)"), ReplyField("refused", "refusals by code")]),
    ]

    /// The length a round may have, seconds: `game.start` and `room.start` (`round_s`), and the
    /// game's rules (`TiltGame.Rules.roundSecondsRange`, `[game] round_s`, `[mqtt] room_round_s`).
    public static let roundSecondsRange: ClosedRange<Double> = 5...3600
    /// `roundSecondsRange` as messages write it: "5…3600".
    public static var roundSecondsText: String {
        // bounded: the range is the constant above, whole seconds.
        "\(Int64(roundSecondsRange.lowerBound))…\(Int64(roundSecondsRange.upperBound))"
    }

    /// Who answers a request: which commands its parser knows.
    public enum Listener: Sendable {
        /// The daemon's socket: `commands`.
        case daemon
        /// `tiltd mqtt`'s command topic: `commands` and `roomCommands`.
        case bridge

        /// The commands it knows, in catalogue order.
        public var commands: [CommandSpec] {
            switch self {
            case .daemon: CommandCatalogue.commands
            case .bridge: CommandCatalogue.commands + CommandCatalogue.roomCommands
            }
        }
    }

    private static let byName: [String: CommandSpec] = Dictionary(uniqueKeysWithValues: commands.map { ($0.name, $0) })
    private static let roomByName: [String: CommandSpec] = Dictionary(
        uniqueKeysWithValues: roomCommands.map { ($0.name, $0) })

    /// The daemon's command called `name`, if there is one.
    public static func spec(_ name: String) -> CommandSpec? { byName[name] }

    /// The command called `name` that `listener` answers, if there is one.
    public static func spec(_ name: String, for listener: Listener) -> CommandSpec? {
        switch listener {
        case .daemon: byName[name]
        case .bridge: byName[name] ?? roomByName[name]
        }
    }

    /// Every command name, in catalogue order.
    public static var names: [String] { commands.map(\.name) }

    /// The command table of docs/protocol.md, exactly.
    public static var markdownTable: String {
        ([
            "| command | trust | arguments | reply fields | errors besides the common ones | what |",
            "|---|---|---|---|---|---|",
        ] + commands.map(\.markdownRow)).joined(separator: "\n")
    }

    /// The room's command table of docs/mqtt.md, exactly.
    public static var roomMarkdownTable: String {
        ([
            "| command | arguments | reply fields | errors besides the common ones | what |",
            "|---|---|---|---|---|",
        ] + roomCommands.map { $0.markdownRow(trust: false) }).joined(separator: "\n")
    }

    /// The error-code table of docs/protocol.md, exactly.
    public static var errorTable: String {
        (["| code | meaning |", "|---|---|"]
            + ProtocolError.Code.all.map { "| `\($0.code.rawValue)` | \($0.meaning) |" })
            .joined(separator: "\n")
    }
}
