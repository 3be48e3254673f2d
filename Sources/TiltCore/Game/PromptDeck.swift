// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// Something that supplies the prompts for a round: a deck file, or (with the GPS issue) the
/// places near the current fix.
///
/// The game asks once, when a round starts, and keeps its own shuffled copy, so a provider may
/// be a snapshot of changing data (the places near the fix at that moment).
public protocol PromptProvider: Sendable {
    /// A short name shown to clients ("animals.txt", "places-near-me").
    var deckName: String { get }
    /// The prompts for a new round. Order does not matter (the game shuffles); blank strings and
    /// duplicates are dropped by the game. Throws when the provider has nothing to offer
    /// (e.g. no GPS fix yet), with an error the daemon reports to the client.
    func prompts() throws -> [String]
}

/// Why a deck could not be read. Each case says where the problem is, so a user can fix the file.
public enum DeckError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The deck has no prompts after blank lines and comments are removed.
    case empty
    /// The text starts with `[` but is not valid JSON.
    case invalidJSON(String)
    /// The JSON is valid but is not an array of strings; `index` is the first offending element
    /// (nil when the top level itself is not an array).
    case notStringArray(index: Int?, found: String)
    /// A prompt is longer than `PromptDeck.maxPromptLength` characters (`line` is 1-based for
    /// text decks, the 0-based array index for JSON decks).
    case promptTooLong(line: Int)
    /// More than `PromptDeck.maxPrompts` prompts.
    case tooManyPrompts(Int)

    /// A message for the user, naming the place of the problem.
    public var description: String {
        switch self {
        case .empty: return "the deck has no prompts"
        case .invalidJSON(let m): return "the deck looks like JSON but is not valid: \(m)"
        case .notStringArray(let i?, let found): return "deck element \(i) is a \(found), expected a string"
        case .notStringArray(nil, let found): return "a JSON deck must be an array of strings, got a \(found)"
        case .promptTooLong(let line):
            return "prompt at \(line) is longer than \(PromptDeck.maxPromptLength) characters"
        case .tooManyPrompts(let n): return "the deck has \(n) prompts, more than \(PromptDeck.maxPrompts)"
        }
    }
}

/// A fixed list of prompts, from a text file (one a line) or a JSON array of strings.
///
/// Text format: one prompt per line; surrounding white space is trimmed; blank lines and lines
/// whose first non-blank character is `#` are ignored. JSON format: the text's first non-blank
/// character is `[` and the whole text is an array of strings. Duplicates are dropped (first one
/// kept) so a round can never show the same prompt twice.
public struct PromptDeck: PromptProvider, Equatable {
    /// Longest prompt accepted, in characters: a prompt is read off a screen at a glance.
    public static let maxPromptLength = 200
    /// Most prompts accepted: far more than any round uses, small enough to bound memory.
    public static let maxPrompts = 10_000

    /// See `PromptProvider.deckName`.
    public var deckName: String
    /// The distinct prompts, in file order.
    public private(set) var entries: [String]

    /// A deck from a list of prompts (trimmed, blanks and duplicates dropped); throws `.empty`
    /// if nothing is left.
    public init(name: String, prompts: [String]) throws(DeckError) {
        deckName = name
        entries = []
        var seen = Set<String>()
        for (i, p) in prompts.enumerated() {
            let s = p.trimming(\.isWhitespace)
            if s.isEmpty { continue }
            if s.count > PromptDeck.maxPromptLength { throw .promptTooLong(line: i) }
            if seen.insert(s).inserted { entries.append(s) }
        }
        if entries.count > PromptDeck.maxPrompts { throw .tooManyPrompts(entries.count) }
        if entries.isEmpty { throw .empty }
    }

    /// Parses a deck file's contents, choosing JSON when the first non-blank character is `[`.
    public init(name: String, text: String) throws(DeckError) {
        let firstNonBlank = text.unicodeScalars.first { !$0.properties.isWhitespace }
        if firstNonBlank == "[" {
            try self.init(name: name, json: text)
        } else {
            try self.init(name: name, lines: text)
        }
    }

    /// Parses the text format (one prompt a line, `#` comments).
    public init(name: String, lines text: String) throws(DeckError) {
        var prompts: [String] = []
        // Split on any line ending (\n, \r\n, \r) so files from any editor read the same.
        for (n, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let line = raw.trimming(\.isWhitespace)
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.count > PromptDeck.maxPromptLength { throw .promptTooLong(line: n + 1) }
            prompts.append(line)
        }
        try self.init(name: name, prompts: prompts)
    }

    /// Parses the JSON format (an array of strings).
    public init(name: String, json text: String) throws(DeckError) {
        let value: JSONValue
        do { value = try JSONParser.parse(text) } catch { throw .invalidJSON(error.description) }
        guard let array = value.arrayValue else { throw .notStringArray(index: nil, found: value.typeName) }
        var prompts: [String] = []
        prompts.reserveCapacity(array.count)
        for (i, v) in array.enumerated() {
            guard let s = v.stringValue else { throw .notStringArray(index: i, found: v.typeName) }
            prompts.append(s)
        }
        try self.init(name: name, prompts: prompts)
    }

    /// See `PromptProvider.prompts()`.
    public func prompts() -> [String] { entries }

    /// The number of distinct prompts.
    public var count: Int { entries.count }
}
