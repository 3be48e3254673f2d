import TiltCore

/// What a browser may ask of the daemon through `tiltd web`. Only commands of the socket's
/// catalogue (`Command.names`) pass, re-encoded by this process with its own id; the daemon
/// validates their arguments as for any client and its error reply goes back to the browser.
public enum BrowserCommands {
    /// Commands that change the game: a paired browser only.
    public static let pairedOnly: [String] = ["game.start", "game.stop", "game.reset", "game.neutral"]
    /// Commands that only read: anyone who can see the page.
    public static let open: [String] = ["status", "history", "ping"]

    /// Why a browser's command was refused before reaching the daemon.
    public struct Refusal: Error, Equatable {
        public var code: String
        public var message: String
        public init(code: String, message: String) { self.code = code; self.message = message }
        init(_ code: String, _ message: String) { self.code = code; self.message = message }
    }

    /// A command checked for forwarding: the browser's id (echoed back) and the daemon's fields.
    public struct Checked: Equatable {
        public var browserID: JSONValue
        public var name: String
        public var fields: JSONObject
    }

    /// Checks one message (already parsed as an object) from a browser that is `paired` or not.
    public static func check(_ o: JSONObject, paired: Bool) -> Result<Checked, Refusal> {
        let id = o["id"] ?? .null
        switch id {
        case .int, .null: break
        case .string(let s) where s.utf8.count <= 64: break
        default: return .failure(Refusal("bad_argument", "id must be an integer or a short string"))
        }
        guard let name = o["cmd"]?.stringValue else { return .failure(Refusal("bad_argument", "missing \"cmd\"")) }
        let known = Command.names.contains(name)
        guard known, pairedOnly.contains(name) || open.contains(name) else {
            return .failure(Refusal("not_allowed", "\"\(name.prefix(64))\" cannot be sent from a browser; allowed: \((open + pairedOnly).joined(separator: ", "))"))
        }
        if pairedOnly.contains(name) && !paired {
            return .failure(Refusal("not_paired", "\(name) needs this browser to be paired: enter the code `tiltd web` printed"))
        }
        var fields = JSONObject()
        fields["cmd"] = .string(name)
        for (k, v) in o.entries where k != "cmd" && k != "id" {
            guard k.utf8.count <= 32, fields.keys.count < 8 else { return .failure(Refusal("bad_argument", "too many or too long fields")) }
            switch v {
            case .int, .double, .bool: fields[k] = v
            case .string(let s) where s.utf8.count <= 256: fields[k] = v
            default: return .failure(Refusal("bad_argument", "\"\(k.prefix(32))\" must be a number, a boolean or a short string"))
            }
        }
        return .success(Checked(browserID: id, name: name, fields: fields))
    }

    /// A reply line in the daemon's format for a refusal made here.
    public static func refusalLine(_ r: Refusal, id: JSONValue, cmd: String?) -> String {
        let o: JSONObject = ["class": "reply", "id": id, "cmd": cmd.map { .string($0) } ?? .null, "ok": false,
                             "error": .object(["code": .string(r.code), "message": .string(r.message)])]
        return jsonText(.object(o))
    }
}
