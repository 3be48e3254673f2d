// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// Checks a payload that arrived on `<prefix>/cmd` before anything acts on it: size, JSON, an
/// object with a `cmd`, and the command in `[mqtt] allowed_commands`. A refusal is a reply in
/// the socket protocol's format, published on `<prefix>/reply`; nothing else happens.
struct CommandGate {
    let allowed: Set<String>
    let maxPayloadBytes: Int
    /// The bridge's own commands (the room's); the rest go to the daemon.
    let bridgeCommands: Set<String>

    /// What to do with a payload.
    enum Verdict: Equatable {
        /// Refused: publish this reply.
        case refuse(JSONObject)
        /// A bridge command (`room.*`) with its parsed fields.
        case bridge(cmd: String, id: JSONValue, fields: JSONObject)
        /// A daemon command: forward it (with the bridge's own request id in place of `id`).
        case daemon(cmd: String, id: JSONValue, fields: JSONObject)
    }

    func check(_ payload: [UInt8]) -> Verdict {
        if payload.count > maxPayloadBytes {
            return .refuse(
                Self.reply(
                    id: .null, cmd: nil, code: .lineTooLong,
                    "the payload is \(payload.count) bytes, more than [mqtt] max_payload_bytes (\(maxPayloadBytes))"))
        }
        let value: JSONValue
        do { value = try JSONParser.parse(payload) } catch {
            return .refuse(Self.reply(id: .null, cmd: nil, code: .invalidJSON, error.description))
        }
        guard let o = value.objectValue else {
            return .refuse(
                Self.reply(id: .null, cmd: nil, code: .notAnObject, "expected a JSON object, got \(value.typeName)"))
        }
        let id = o["id"] ?? .null
        guard Request.isValidID(id) else {
            return .refuse(Self.reply(id: .null, cmd: nil, code: .badArgument, Request.invalidIDMessage))
        }
        guard let cmd = o["cmd"]?.stringValue else {
            return .refuse(
                Self.reply(id: id, cmd: nil, code: .badArgument, "\"cmd\" must be a string naming a command"))
        }
        guard (Command.names + Array(bridgeCommands)).contains(cmd) else {
            return .refuse(
                Self.reply(id: id, cmd: nil, code: .unknownCommand, "unknown command \"\(cmd.prefix(64))\""))
        }
        guard allowed.contains(cmd) else {
            return .refuse(
                Self.reply(
                    id: id, cmd: cmd, code: .forbidden,
                    "\(cmd) is not in [mqtt] allowed_commands on this device"))
        }
        return bridgeCommands.contains(cmd)
            ? .bridge(cmd: cmd, id: id, fields: o) : .daemon(cmd: cmd, id: id, fields: o)
    }

    /// A reply line in the socket protocol's shape (TiltProtocol's encoder).
    static func reply(id: JSONValue, cmd: String?, code: ProtocolError.Code, _ message: String) -> JSONObject {
        ProtocolError(code, message).replyObject(id: id, cmd: cmd)
    }

    /// A successful reply with `fields`.
    static func ok(id: JSONValue, cmd: String, _ fields: JSONObject = [:]) -> JSONObject {
        Event.replyObject(id: id, cmd: cmd, result: fields)
    }
}
