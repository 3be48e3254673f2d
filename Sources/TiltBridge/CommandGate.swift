// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// Checks a payload that arrived on `<prefix>/cmd` before anything acts on it: size, JSON, an
/// object with a `cmd`, and the command in `[mqtt] allowed_commands`, all with the protocol's one
/// parser (`Request.parseHead`, the catalogue and its room commands); a room command's arguments
/// likewise, a daemon command's with the line the daemon will read and its line limit, so that
/// nothing the daemon would count as a bad line is forwarded — the daemon disconnects a client
/// after `[socket] max_bad_lines` of them, and a peer fuzzing the command topic would otherwise
/// cost the bridge its link. A refusal is a reply in the socket protocol's format, published on
/// `<prefix>/reply`; nothing else happens.
struct CommandGate {
    let allowed: Set<String>
    let maxPayloadBytes: Int
    /// The bridge's own commands (the room's: `CommandCatalogue.roomCommands`); the rest go to the daemon.
    let bridgeCommands: Set<String>
    /// The daemon's `[socket] max_line_bytes` (the same config file): longer lines are bad lines.
    var maxLineBytes = Int.max

    /// What to do with a payload.
    enum Verdict: Equatable {
        /// Refused: publish this reply.
        case refuse(JSONObject)
        /// A bridge command (`room.*`) with its checked arguments.
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
        // The command first (JSON, an object, its id, a command the bridge serves), then whether
        // this device allows it, and only then its arguments: a forbidden command is forbidden
        // whatever its fields, as on the daemon's socket.
        let head: Request.Head
        switch Request.parseHead(payload, serving: .bridge) {
        case .failure(let e): return .refuse(Self.reply(e))
        case .success(let h): head = h
        }
        let id = head.id ?? .null
        let cmd = head.spec.name
        guard allowed.contains(cmd) else {
            return .refuse(
                Self.reply(
                    id: id, cmd: cmd, code: .forbidden,
                    "\(cmd) is not in [mqtt] allowed_commands on this device"))
        }
        if bridgeCommands.contains(cmd) {
            switch head.request() {
            case .failure(let e): return .refuse(Self.reply(e))
            case .success(let r): return .bridge(cmd: cmd, id: id, fields: r.command.arguments)
            }
        }
        // The line as the daemon will read it: these fields with the bridge's own id in place of
        // the sender's (`DaemonClient`: its prefix and a counter; the longest one stands in), checked
        // by the daemon's own parser, so the verdict is the daemon's (numbers as written back, too).
        var forwarded = head.object
        forwarded["id"] = .string(Self.longestForwardedID)
        let line = Array(JSONValue.object(forwarded).jsonText.utf8)
        if case .failure(let e) = Request.parse(line) {
            return .refuse(Self.reply(id: id, cmd: e.cmd, code: e.error.code, e.error.message))
        }
        // `room.show` may be longer (the daemon frames it up to its view's bound).
        if cmd != "room.show", line.count > maxLineBytes {
            return .refuse(
                Self.reply(
                    id: id, cmd: cmd, code: .lineTooLong,
                    "the command would be a line of \(line.count) bytes, more than the daemon's [socket] max_line_bytes (\(maxLineBytes))"
                ))
        }
        return .daemon(cmd: cmd, id: id, fields: head.object)
    }

    /// A refusal of the parser's, with the sender's id (null when it could not be read).
    static func reply(_ e: RequestError) -> JSONObject {
        reply(id: e.id ?? .null, cmd: e.cmd, code: e.error.code, e.error.message)
    }

    /// The longest id the bridge's `DaemonClient` gives a request ("mqtt-" and a counter).
    static let longestForwardedID = "mqtt-" + String(UInt64.max)

    /// A reply line in the socket protocol's shape (TiltProtocol's encoder).
    static func reply(id: JSONValue, cmd: String?, code: ProtocolError.Code, _ message: String) -> JSONObject {
        ProtocolError(code, message).replyObject(id: id, cmd: cmd)
    }

    /// A successful reply with `fields`.
    static func ok(id: JSONValue, cmd: String, _ fields: JSONObject = [:]) -> JSONObject {
        Event.replyObject(id: id, cmd: cmd, result: fields)
    }
}
