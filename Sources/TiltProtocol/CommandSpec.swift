// SPDX-License-Identifier: Apache-2.0
/// Who may send a command.
public enum Trust: String, Sendable, Equatable {
    /// Anyone who can open the socket (reads and per-connection settings).
    case anyone
    /// root, the daemon's own user, `[socket] trusted_uids` / `trusted_gids`: commands that
    /// change state shared by every client.
    case trusted
}

/// One argument a command takes: its name, type and bounds, and what it means.
public struct ArgumentSpec: Sendable {
    /// The JSON type and the values accepted.
    public enum Kind: Sendable {
        /// Any JSON number within the range.
        case number(ClosedRange<Double>)
        /// A whole JSON number within the range.
        case wholeNumber(ClosedRange<Double>)
        /// `true` or `false`.
        case bool
        /// A string of at most `maxLength` UTF-8 bytes.
        case string(maxLength: Int)
        /// An array of at most `maxCount` strings, each one of `allowed` (any when nil); `noun`
        /// names one element in error messages ("unknown class \"x\"").
        case strings(maxCount: Int, allowed: [String]?, noun: String)
        /// A JSON object of at most `maxBytes` bytes once encoded (the command checks its fields).
        case object(maxBytes: Int)
    }

    /// The field name in the request object.
    public let name: String
    /// The accepted values.
    public let kind: Kind
    /// What it does, and its default when absent (for `help` and docs/protocol.md).
    public let meaning: String
    /// The error code of a number outside its range (`bad_argument` unless the command has a
    /// code of its own for it, as `game.start` has `invalid_round_length`).
    public let outOfRange: ProtocolError.Code

    /// Declares an argument.
    public init(_ name: String, _ kind: Kind, _ meaning: String, outOfRange: ProtocolError.Code = .badArgument) {
        self.name = name; self.kind = kind; self.meaning = meaning; self.outOfRange = outOfRange
    }

    /// The type as written in docs/protocol.md and `help`: "number 5–3600", "string ≤ 64".
    public var typeText: String {
        func n(_ x: Double) -> String { x == x.rounded() && abs(x) < 1e15 ? String(Int64(x)) : String(x) }
        switch kind {
        case .number(let r): return "number \(n(r.lowerBound))–\(n(r.upperBound))"
        case .wholeNumber(let r): return "integer \(n(r.lowerBound))–\(n(r.upperBound))"
        case .bool: return "bool"
        case .string(let max): return "string ≤ \(max) bytes"
        case .strings(let max, _, let noun): return "array of ≤ \(max) \(noun) names"
        case .object(let max): return "object ≤ \(max) bytes"
        }
    }
}

/// One field of a successful reply.
public struct ReplyField: Sendable {
    /// The field name in the reply object.
    public let name: String
    /// What it holds.
    public let meaning: String

    /// Declares a reply field.
    public init(_ name: String, _ meaning: String) { self.name = name; self.meaning = meaning }
}

/// Everything about one command, declared once in `CommandCatalogue`: the request parser, the
/// `help` reply, the `forbidden` check and the table in docs/protocol.md all read it.
public struct CommandSpec: Sendable {
    /// The command's name on the wire (`cmd`).
    public let name: String
    /// One line on what it does.
    public let summary: String
    /// Who may send it.
    public let trust: Trust
    /// The fields it takes besides `cmd` and `id`; any other field is refused.
    public let arguments: [ArgumentSpec]
    /// The fields of its `ok: true` reply.
    public let reply: [ReplyField]
    /// The error codes it may answer with besides the ones any line may get
    /// (`CommandCatalogue.commonErrors`, and `forbidden` for trusted commands).
    public let errors: [ProtocolError.Code]

    /// Declares a command.
    public init(
        _ name: String, _ summary: String, trust: Trust, arguments: [ArgumentSpec] = [],
        reply: [ReplyField] = [], errors: [ProtocolError.Code] = []
    ) {
        self.name = name; self.summary = summary; self.trust = trust
        self.arguments = arguments; self.reply = reply; self.errors = errors
    }

    /// The argument called `name`, if the command takes one.
    public func argument(_ name: String) -> ArgumentSpec? { arguments.first { $0.name == name } }

    /// Every code a reply to this command may carry, in `ProtocolError.Code.all` order.
    public var allErrors: [ProtocolError.Code] {
        var codes = Set(CommandCatalogue.commonErrors + errors)
        if trust == .trusted { codes.insert(.forbidden) }
        return ProtocolError.Code.all.map(\.code).filter { codes.contains($0) }
    }

    /// This command as the `help` reply describes it.
    public var json: JSONObject {
        var o = JSONObject()
        o["name"] = .string(name)
        o["summary"] = .string(summary)
        o["trust"] = .string(trust.rawValue)
        o["arguments"] = .array(
            arguments.map { a in
                .object(["name": .string(a.name), "type": .string(a.typeText), "meaning": .string(a.meaning)])
            })
        o["reply"] = .array(reply.map { .object(["name": .string($0.name), "meaning": .string($0.meaning)]) })
        o["errors"] = .array(allErrors.map { .string($0.rawValue) })
        return o
    }

    /// This command's row of the table in docs/protocol.md.
    public var markdownRow: String { markdownRow(trust: true) }

    /// The row, with or without the trust column (the room's commands are allowed by `[mqtt]
    /// allowed_commands`, not by the socket's trust).
    public func markdownRow(trust withTrust: Bool) -> String {
        func code(_ s: String) -> String { "`\(s)`" }
        let args =
            arguments.isEmpty ? "—" : arguments.map { "\(code($0.name)) (\($0.typeText))" }.joined(separator: ", ")
        let reply = reply.isEmpty ? "—" : reply.map { code($0.name) }.joined(separator: ", ")
        let errs = errors.isEmpty ? "—" : errors.map { code($0.rawValue) }.joined(separator: ", ")
        return "| \(code(name)) |" + (withTrust ? " \(trust.rawValue) |" : "")
            + " \(args) | \(reply) | \(errs) | \(summary) |"
    }
}
