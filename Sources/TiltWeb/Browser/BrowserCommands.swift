// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// What a browser may ask of the daemon through `tiltd web`, decided from the socket's one
/// command catalogue (`CommandCatalogue`): a message is parsed and checked exactly as the daemon
/// parses a line (`Request.parse`: known command, declared arguments, types and bounds), then
/// re-encoded by this process with its own id. Anyone who sees the page may send the catalogue's
/// read-only commands except `watch` (it would change the stream every browser shares); a paired
/// browser may also send the game's (`game.*`). The daemon's other trusted commands (credits,
/// quests, snooze, reload) never come from a browser.
public enum BrowserCommands {
    /// Read-only catalogue commands a browser may send.
    public static var open: [String] {
        CommandCatalogue.commands.filter { $0.trust == .anyone && $0.name != "watch" }.map(\.name)
    }
    /// Catalogue commands a paired browser may send too: the game's.
    public static var pairedOnly: [String] {
        CommandCatalogue.commands.filter { $0.trust == .trusted && $0.name.hasPrefix("game.") }.map(\.name)
    }

    /// Why a browser's command was refused before reaching the daemon (the daemon's own codes,
    /// plus `not_allowed` and `not_paired`).
    public struct Refusal: Error, Equatable {
        /// The error code sent back to the browser (e.g. `not_paired`).
        public var code: String
        /// A human-readable explanation for the browser.
        public var message: String
        /// A refusal with `code` and `message`.
        public init(code: String, message: String) { self.code = code; self.message = message }
    }

    /// A refusal with the request's id and command name, as far as they could be read.
    public struct Refused: Error, Equatable {
        /// The browser's request id (null when it could not be read).
        public var id: JSONValue
        /// The command name, when it could be read.
        public var cmd: String?
        /// Why the command was refused.
        public var refusal: Refusal
        init(_ id: JSONValue, _ cmd: String?, _ refusal: Refusal) {
            self.id = id; self.cmd = cmd; self.refusal = refusal
        }
    }

    /// A command checked for forwarding: the browser's id (echoed back) and the daemon's fields.
    public struct Checked: Equatable {
        /// The id the browser gave; its reply is sent back with it.
        public var browserID: JSONValue
        /// The catalogue command's name (`cmd`).
        public var name: String
        /// The request for the daemon (`cmd` and the arguments); the link adds its own id.
        public var fields: JSONObject
    }

    /// Checks one message from a browser that is `paired` or not. The id and command name are
    /// returned with a refusal when they could be read, for the error reply.
    public static func check(_ text: String, paired: Bool) -> Result<Checked, Refused> {
        switch Request.parse(Array(text.utf8)) {
        case .failure(let e):
            return .failure(
                Refused(e.id ?? .null, e.cmd, Refusal(code: e.error.code.rawValue, message: e.error.message)))
        case .success(let request):
            let id = request.id ?? .null
            let name = request.command.name
            guard open.contains(name) || pairedOnly.contains(name) else {
                return .failure(
                    Refused(
                        id, name,
                        Refusal(
                            code: ProtocolError.Code.notAllowed.rawValue,
                            message:
                                "\(name) cannot be sent from a browser; allowed: \((open + pairedOnly).joined(separator: ", "))"
                        )))
            }
            if pairedOnly.contains(name) && !paired {
                return .failure(
                    Refused(
                        id, name,
                        Refusal(
                            code: ProtocolError.Code.notPaired.rawValue,
                            message: "\(name) needs this browser to be paired: enter the code `tiltd web` printed")))
            }
            var fields = JSONObject()
            fields["cmd"] = .string(name)
            for (k, v) in request.command.arguments.entries { fields[k] = v }
            return .success(Checked(browserID: id, name: name, fields: fields))
        }
    }

    /// A reply line in the daemon's format for a refusal made here.
    public static func refusalLine(_ r: Refusal, id: JSONValue, cmd: String?) -> String {
        JSONValue.object(ProtocolError(.init(rawValue: r.code), r.message).replyObject(id: id, cmd: cmd)).jsonText
    }
}
