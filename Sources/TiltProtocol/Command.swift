// SPDX-License-Identifier: Apache-2.0
/// A client request's command, parsed and checked against its `CommandSpec`: `arguments` holds
/// only fields the command takes, each of the declared type and within its bounds. Parsing is
/// pure so it can be fuzzed and tested against docs/protocol.md without a daemon.
public struct Command: Sendable, Equatable {
    /// The command's name on the wire; always one of `CommandCatalogue.names`.
    public let name: String
    /// The checked arguments, in request order.
    public let arguments: JSONObject

    /// A command with already checked arguments (tests, and the parser).
    public init(_ name: String, _ arguments: JSONObject = JSONObject()) {
        self.name = name; self.arguments = arguments
    }

    /// The catalogue entry.
    public var spec: CommandSpec {
        guard let s = CommandCatalogue.spec(name, for: .bridge) else {
            preconditionFailure("\(name) is not in CommandCatalogue")
        }
        return s
    }

    /// Commands that change the daemon's state: only trusted peers may send them.
    public var isMutating: Bool { spec.trust == .trusted }

    /// Every command name, for `unknown_command` messages and the protocol test.
    public static var names: [String] { CommandCatalogue.names }

    private func arg(_ key: String) -> JSONValue? {
        assert(spec.argument(key) != nil, "\(name) declares no argument \(key) in CommandCatalogue")
        return arguments[key]
    }
    /// A number argument, if given.
    public func number(_ key: String) -> Double? { arg(key)?.doubleValue }
    /// A number argument as a whole number (truncated), if given.
    public func int(_ key: String) -> Int? { number(key).map { Int($0) } }
    /// A boolean argument, if given.
    public func bool(_ key: String) -> Bool? { arg(key)?.boolValue }
    /// A string argument, if given.
    public func string(_ key: String) -> String? { arg(key)?.stringValue }
    /// A string-array argument, if given.
    public func strings(_ key: String) -> [String]? { arg(key)?.arrayValue?.compactMap(\.stringValue) }

    /// The `watch` command's fields. Nil fields keep their current value.
    public struct Watch: Sendable, Equatable {
        /// The classes to receive.
        public var classes: Set<EventClass>?
        /// The attitude rate, Hz (0 = none).
        public var attitudeHz: Double?
        /// Raw samples on or off.
        public var samples: Bool?
        /// A watch change.
        public init(classes: Set<EventClass>? = nil, attitudeHz: Double? = nil, samples: Bool? = nil) {
            self.classes = classes; self.attitudeHz = attitudeHz; self.samples = samples
        }
        /// The fields of a parsed `watch` command.
        public init(_ c: Command) {
            self.init(
                classes: c.strings(Key.classes).map { Set($0.compactMap(EventClass.init(rawValue:))) },
                attitudeHz: c.number(Key.attitudeHz), samples: c.bool(Key.samples))
        }

        /// The argument names, declared once: the catalogue, the parser, the encoders below, and the
        /// config keys that set a client's attitude rate (`[socket]`, `[web]`, `[mqtt]`) use them.
        public enum Key {
            /// Event classes to receive.
            public static let classes = "classes"
            /// The attitude rate, Hz.
            public static let attitudeHz = "attitude_hz"
            /// Raw samples on or off.
            public static let samples = "samples"
        }

        /// The request's fields (without `cmd` and `id`), as a client sends them: only those set,
        /// the classes in `EventClass.allCases` order.
        public var fields: JSONObject {
            var o = JSONObject()
            if let classes {
                o[Key.classes] = .array(
                    EventClass.allCases.filter { classes.contains($0) }.map { .string($0.rawValue) })
            }
            if let attitudeHz { o[Key.attitudeHz] = .number(attitudeHz) }
            if let samples { o[Key.samples] = .bool(samples) }
            return o
        }

        /// The settings in force as the `watch` reply echoes them (its `watch` field).
        public static func state(classes: Set<EventClass>, attitudeHz: Double, samples: Bool) -> JSONObject {
            Watch(classes: classes, attitudeHz: attitudeHz, samples: samples).fields
        }
    }
}

/// A parsed request line: its id (echoed in the reply, any JSON scalar) and the command.
public struct Request: Sendable, Equatable {
    /// The client's `id`, echoed in the reply.
    public var id: JSONValue?
    /// What to do.
    public var command: Command

    /// A request (tests, and the parser).
    public init(id: JSONValue?, command: Command) { self.id = id; self.command = command }

    /// The longest id echoed back, so a reply cannot be made huge by its request.
    public static let maxIDLength = 128
    /// Whether `id` may be a request's id: a number or a string of at most `maxIDLength` bytes
    /// (null counts as none). The socket and the MQTT bridge's command topic check the same.
    public static func isValidID(_ id: JSONValue) -> Bool {
        switch id {
        case .int, .double, .null: return true
        case .string(let s): return s.utf8.count <= maxIDLength
        default: return false
        }
    }
    /// Why an id was refused.
    public static let invalidIDMessage = "id must be a number or a string of at most \(maxIDLength) bytes"

    /// Parses one line (without its newline) as `listener` reads it (the daemon's commands, or
    /// the bridge's with the room's). On failure returns the error and whatever id could be read,
    /// so the error reply still echoes it.
    public static func parse<C: Collection>(
        _ line: C, serving listener: CommandCatalogue.Listener = .daemon
    ) -> Result<Request, RequestError> where C.Element == UInt8 {
        parseHead(line, serving: listener).flatMap { $0.request() }
    }

    /// Parses one line up to its command, without checking the arguments: for a listener that
    /// decides on the command first (the bridge's `[mqtt] allowed_commands`, before the
    /// arguments, as the daemon's trust check does).
    public static func parseHead<C: Collection>(
        _ line: C, serving listener: CommandCatalogue.Listener = .daemon
    ) -> Result<Head, RequestError> where C.Element == UInt8 {
        let value: JSONValue
        do {
            value = try JSONParser.parse(line)
        } catch {
            return .failure(RequestError(id: nil, cmd: nil, error: ProtocolError(.invalidJSON, error.description)))
        }
        guard case .object(let o) = value else {
            return .failure(
                RequestError(
                    id: nil, cmd: nil,
                    error: ProtocolError(.notAnObject, "a request is a JSON object like {\"cmd\":\"ping\"}")))
        }
        let id: JSONValue? = o["id"]
        if let i = id, !isValidID(i) {
            return .failure(RequestError(id: nil, cmd: nil, error: ProtocolError(.badArgument, invalidIDMessage)))
        }
        guard let cmdValue = o["cmd"] else {
            return .failure(RequestError(id: id, cmd: nil, error: ProtocolError(.badArgument, "missing \"cmd\"")))
        }
        guard let cmd = cmdValue.stringValue else {
            return .failure(
                RequestError(id: id, cmd: nil, error: ProtocolError(.badArgument, "\"cmd\" must be a string")))
        }
        guard let spec = CommandCatalogue.spec(cmd, for: listener) else {
            let known = listener.commands.map(\.name).joined(separator: ", ")
            return .failure(
                RequestError(
                    id: id, cmd: nil,
                    error: ProtocolError(.unknownCommand, "unknown command \"\(cmd.prefix(64))\"; known: \(known)")))
        }
        return .success(Head(id: id, spec: spec, object: o))
    }

    /// A request line read up to its command (`parseHead`): the arguments are not checked yet.
    public struct Head: Sendable {
        /// The client's `id`.
        public var id: JSONValue?
        /// The command it names.
        public var spec: CommandSpec
        /// The whole request object.
        public var object: JSONObject

        /// The request with its arguments checked against the command's declaration.
        public func request() -> Result<Request, RequestError> {
            do {
                return .success(Request(id: id, command: try check(object, against: spec)))
            } catch {
                return .failure(RequestError(id: id, cmd: spec.name, error: error))
            }
        }
    }

    /// Checks each declared argument in catalogue order (type, then bounds), then refuses any
    /// field the command does not take.
    static func check(_ o: JSONObject, against spec: CommandSpec) throws(ProtocolError) -> Command {
        var args = JSONObject()
        for a in spec.arguments {
            guard let v = o[a.name] else { continue }
            args[a.name] = try checkArgument(a, v)
        }
        if let extra = o.keys.first(where: { $0 != "cmd" && $0 != "id" && spec.argument($0) == nil }) {
            throw ProtocolError(.badArgument, "\(spec.name) takes no field \"\(extra.prefix(64))\"")
        }
        return Command(spec.name, args)
    }

    static func checkArgument(_ a: ArgumentSpec, _ v: JSONValue) throws(ProtocolError) -> JSONValue {
        let k = a.name
        switch a.kind {
        case .number(let range), .wholeNumber(let range):
            guard let d = v.doubleValue else {
                throw ProtocolError(.badArgument, "\"\(k)\" must be a number, got \(v.typeName)")
            }
            guard range.contains(d) else {
                throw ProtocolError(a.outOfRange, "\"\(k)\" must be within \(range.lowerBound)…\(range.upperBound)")
            }
            if case .wholeNumber = a.kind, d != d.rounded() {
                throw ProtocolError(.badArgument, "\"\(k)\" must be a whole number")
            }
            return v
        case .bool:
            guard v.boolValue != nil else {
                throw ProtocolError(.badArgument, "\"\(k)\" must be true or false, got \(v.typeName)")
            }
            return v
        case .string(let maxLength):
            guard let s = v.stringValue else {
                throw ProtocolError(.badArgument, "\"\(k)\" must be a string, got \(v.typeName)")
            }
            guard s.utf8.count <= maxLength else {
                throw ProtocolError(.badArgument, "\"\(k)\" is longer than \(maxLength) bytes")
            }
            return v
        case .object(let maxBytes):
            guard v.objectValue != nil else {
                throw ProtocolError(.badArgument, "\"\(k)\" must be an object, got \(v.typeName)")
            }
            guard v.jsonText.utf8.count <= maxBytes else {
                throw ProtocolError(.badArgument, "\"\(k)\" is larger than \(maxBytes) bytes")
            }
            return v
        case .strings(let maxCount, let allowed, let noun):
            guard let arr = v.arrayValue, arr.count <= maxCount else {
                throw ProtocolError(.badArgument, "\"\(k)\" must be an array of strings")
            }
            for e in arr {
                guard let s = e.stringValue else {
                    throw ProtocolError(.badArgument, "\"\(k)\" must be an array of strings")
                }
                if let allowed, !allowed.contains(s) {
                    throw ProtocolError(
                        .badArgument, "unknown \(noun) \"\(s)\" (known: \(allowed.joined(separator: ", ")))")
                }
            }
            return v
        }
    }
}

/// A request that failed to parse.
public struct RequestError: Error, Sendable, Equatable {
    /// The request's id, when it could be read.
    public var id: JSONValue?
    /// The command's name, when it names one.
    public var cmd: String?
    /// Why it was refused.
    public var error: ProtocolError
}
