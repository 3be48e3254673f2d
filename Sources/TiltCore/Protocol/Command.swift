/// A client request, parsed and validated. Parsing is pure so it can be fuzzed and tested
/// against docs/protocol.md without a daemon.
public enum Command: Sendable, Equatable {
    /// Changes what this client receives. Nil fields keep their current value.
    case watch(Watch)
    case status
    case ping
    case gameStart(roundSeconds: Double?, deck: String?, gestures: TiltGame.Configuration.Gestures? = nil)
    case gameStop
    case gameReset
    case gameNeutral
    case history(limit: Int)
    case snooze(distanceMeters: Double?)
    case credits
    case creditsRedeem(amount: Int?, requestID: String?)
    case questComplete(cell: String?)

    /// The `watch` command's fields.
    public struct Watch: Sendable, Equatable {
        public var classes: Set<EventClass>?
        public var attitudeHz: Double?
        public var samples: Bool?
        public init(classes: Set<EventClass>? = nil, attitudeHz: Double? = nil, samples: Bool? = nil) {
            self.classes = classes; self.attitudeHz = attitudeHz; self.samples = samples
        }
    }

    /// The command's name on the wire.
    public var name: String {
        switch self {
        case .watch: return "watch"
        case .status: return "status"
        case .ping: return "ping"
        case .gameStart: return "game.start"
        case .gameStop: return "game.stop"
        case .gameReset: return "game.reset"
        case .gameNeutral: return "game.neutral"
        case .history: return "history"
        case .snooze: return "snooze"
        case .credits: return "credits"
        case .creditsRedeem: return "credits.redeem"
        case .questComplete: return "quest.complete"
        }
    }

    /// Commands that change the daemon's state: only trusted peers may send them.
    public var isMutating: Bool {
        switch self {
        case .watch, .status, .ping, .history, .credits: return false
        default: return true
        }
    }

    /// Every command name, for `unknown_command` messages and the protocol test.
    public static let names = ["watch", "status", "ping", "game.start", "game.stop", "game.reset", "game.neutral",
                               "history", "snooze", "credits", "credits.redeem", "quest.complete"]
}

/// Why a request was refused. `code` is stable (clients switch on it); `message` is for people.
public struct ProtocolError: Error, Sendable, Equatable {
    /// A stable, machine-readable error code. Open-ended: the game and the store add their own
    /// (`round_in_progress`, `insufficient_credits`, …), all listed in docs/protocol.md.
    public struct Code: RawRepresentable, Sendable, Equatable, Hashable, ExpressibleByStringLiteral {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public init(stringLiteral v: String) { rawValue = v }

        public static let invalidJSON: Code = "invalid_json"
        public static let lineTooLong: Code = "line_too_long"
        public static let notAnObject: Code = "not_an_object"
        public static let unknownCommand: Code = "unknown_command"
        public static let badArgument: Code = "bad_argument"
        public static let forbidden: Code = "forbidden"
        public static let unavailable: Code = "unavailable"
        public static let conflict: Code = "conflict"
        public static let internalError: Code = "internal"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) { self.code = code; self.message = message }
}

/// A parsed request line: its id (echoed in the reply, any JSON scalar) and the command.
public struct Request: Sendable, Equatable {
    public var id: JSONValue?
    public var command: Command

    /// The longest id echoed back, so a reply cannot be made huge by its request.
    public static let maxIDLength = 128

    /// Parses one line (without its newline). On failure returns the error and whatever id could
    /// be read, so the error reply still echoes it.
    public static func parse<C: Collection>(_ line: C) -> Result<Request, RequestError> where C.Element == UInt8 {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            return .failure(RequestError(id: nil, cmd: nil, error: ProtocolError(.invalidJSON, error.description)))
        }
        guard case .object(let o) = value else {
            return .failure(RequestError(id: nil, cmd: nil, error: ProtocolError(.notAnObject, "a request is a JSON object like {\"cmd\":\"ping\"}")))
        }
        var id: JSONValue? = o["id"]
        if let i = id {
            switch i {
            case .int, .double, .null, .bool: break
            case .string(let s) where s.utf8.count <= maxIDLength: break
            default:
                id = nil
                return .failure(RequestError(id: nil, cmd: nil, error: ProtocolError(.badArgument, "id must be a number or a string of at most \(maxIDLength) bytes")))
            }
        }
        guard let cmdValue = o["cmd"] else {
            return .failure(RequestError(id: id, cmd: nil, error: ProtocolError(.badArgument, "missing \"cmd\"")))
        }
        guard let cmd = cmdValue.stringValue else {
            return .failure(RequestError(id: id, cmd: nil, error: ProtocolError(.badArgument, "\"cmd\" must be a string")))
        }
        do {
            return .success(Request(id: id, command: try parseCommand(cmd, o)))
        } catch {
            return .failure(RequestError(id: id, cmd: Command.names.contains(cmd) ? cmd : nil, error: error))
        }
    }

    static func parseCommand(_ cmd: String, _ o: JSONObject) throws(ProtocolError) -> Command {
        var f = Fields(o)
        let command: Command
        switch cmd {
        case "watch":
            var w = Command.Watch()
            if let cls = try f.strings("classes") {
                var set = Set<EventClass>()
                for c in cls {
                    guard let e = EventClass(rawValue: c) else {
                        throw ProtocolError(.badArgument, "unknown class \"\(c)\" (known: \(EventClass.allCases.map(\.rawValue).joined(separator: ", ")))")
                    }
                    set.insert(e)
                }
                w.classes = set
            }
            w.attitudeHz = try f.number("attitude_hz", in: 0...1000)
            w.samples = try f.bool("samples")
            command = .watch(w)
        case "status": command = .status
        case "ping": command = .ping
        case "game.start":
            let seconds = try f.number("round_s", in: 5...3600), deck = try f.string("deck", maxLength: 4096)
            var gestures: TiltGame.Configuration.Gestures?
            if let g = try f.string("gestures", maxLength: 16) {
                guard let v = TiltGame.Configuration.Gestures(rawValue: g) else {
                    throw ProtocolError(.badArgument, "\"gestures\" must be \"tilt\" or \"nod\", got \"\(g)\"")
                }
                gestures = v
            }
            command = .gameStart(roundSeconds: seconds, deck: deck, gestures: gestures)
        case "game.stop": command = .gameStop
        case "game.reset": command = .gameReset
        case "game.neutral": command = .gameNeutral
        case "history": command = .history(limit: Int(try f.number("n", in: 1...1000) ?? 10))
        case "snooze": command = .snooze(distanceMeters: try f.number("distance_m", in: 1...100_000))
        case "credits": command = .credits
        case "credits.redeem":
            let amount = try f.number("amount", in: 1...1_000_000)
            if let a = amount, a != a.rounded() { throw ProtocolError(.badArgument, "\"amount\" must be a whole number") }
            command = .creditsRedeem(amount: amount.map { Int($0) }, requestID: try f.string("request_id", maxLength: 128))
        case "quest.complete": command = .questComplete(cell: try f.string("cell", maxLength: 64))
        default:
            throw ProtocolError(.unknownCommand, "unknown command \"\(cmd.prefix(64))\"; known: \(Command.names.joined(separator: ", "))")
        }
        try f.finish(cmd)
        return command
    }

    /// Typed access to a request's fields that also rejects fields the command does not take.
    struct Fields {
        let o: JSONObject
        var used: Set<String> = ["cmd", "id"]
        init(_ o: JSONObject) { self.o = o }

        mutating func number(_ k: String, in range: ClosedRange<Double>) throws(ProtocolError) -> Double? {
            used.insert(k)
            guard let v = o[k] else { return nil }
            guard let d = v.doubleValue else { throw ProtocolError(.badArgument, "\"\(k)\" must be a number, got \(v.typeName)") }
            guard range.contains(d) else { throw ProtocolError(.badArgument, "\"\(k)\" must be within \(range.lowerBound)…\(range.upperBound)") }
            return d
        }
        mutating func bool(_ k: String) throws(ProtocolError) -> Bool? {
            used.insert(k)
            guard let v = o[k] else { return nil }
            guard let b = v.boolValue else { throw ProtocolError(.badArgument, "\"\(k)\" must be true or false, got \(v.typeName)") }
            return b
        }
        mutating func string(_ k: String, maxLength: Int) throws(ProtocolError) -> String? {
            used.insert(k)
            guard let v = o[k] else { return nil }
            guard let s = v.stringValue else { throw ProtocolError(.badArgument, "\"\(k)\" must be a string, got \(v.typeName)") }
            guard s.utf8.count <= maxLength else { throw ProtocolError(.badArgument, "\"\(k)\" is longer than \(maxLength) bytes") }
            return s
        }
        mutating func strings(_ k: String) throws(ProtocolError) -> [String]? {
            used.insert(k)
            guard let v = o[k] else { return nil }
            guard let a = v.arrayValue, a.count <= 64 else { throw ProtocolError(.badArgument, "\"\(k)\" must be an array of strings") }
            var out: [String] = []
            for e in a {
                guard let s = e.stringValue else { throw ProtocolError(.badArgument, "\"\(k)\" must be an array of strings") }
                out.append(s)
            }
            return out
        }
        func finish(_ cmd: String) throws(ProtocolError) {
            if let extra = o.keys.first(where: { !used.contains($0) }) {
                throw ProtocolError(.badArgument, "\(cmd) takes no field \"\(extra.prefix(64))\"")
            }
        }
    }
}

/// A request that failed to parse.
public struct RequestError: Error, Sendable, Equatable {
    public var id: JSONValue?
    public var cmd: String?
    public var error: ProtocolError
}

extension Event {
    /// A successful reply to `cmd`, with result fields.
    public static func reply(id: JSONValue?, cmd: String, result: JSONObject = JSONObject()) -> Event {
        var o = JSONObject()
        o["id"] = id ?? .null
        o["cmd"] = .string(cmd)
        o["ok"] = .bool(true)
        for (k, v) in result.entries { o[k] = v }
        return Event(.reply, t: nil, fields: o)
    }

    /// An error reply.
    public static func reply(id: JSONValue?, cmd: String?, error: ProtocolError) -> Event {
        var o = JSONObject()
        o["id"] = id ?? .null
        o["cmd"] = cmd.map { .string($0) } ?? .null
        o["ok"] = .bool(false)
        o["error"] = .object(["code": .string(error.code.rawValue), "message": .string(error.message)])
        return Event(.reply, t: nil, fields: o)
    }
}
