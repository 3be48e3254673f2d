// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform

extension ConfigKey {
    /// A deck: a deck file's name (`DeckFileName`), looked up in `[game] deck_dir`; a path with a
    /// "/" (the owner's choice, relative to this file); or, when `orNearby`, "nearby". A name is
    /// kept as written so that `Configuration.deckPath(_:)` finds it in the deck directory the
    /// daemon has when the round starts (a reload may change `deck_dir`).
    static func deck(
        _ name: String, _ path: WritableKeyPath<Value, String?>, orNearby: Bool,
        default d: String = "built-in list", _ meaning: String
    ) -> ConfigKey {
        custom(
            name, path, type: orNearby ? "deck name, path or `\"nearby\"`" : "deck name or path", default: d,
            meaning,
            read: { (t, v, ctx) throws(ConfigError) in
                guard let s = try t.optionalString(name) else { return v }
                if orNearby && s == "nearby" { return s }
                if s.contains("/") { return ctx.resolve(s) }
                if let why = DeckFileName.problem(s) { throw t.error(name, why) }
                return s
            },
            render: { v in v.map { ["\(name) = \(TOMLText.quote($0))"] } ?? [] })
    }
}

extension Configuration {
    /// The deck directory: `[game] deck_dir`, else `decks` beside the config file
    /// (`/etc/tiltd/decks` for the installed config).
    public var deckDirectory: String {
        game.deckDir ?? PathName.appending("decks", to: PathName.directory(of: sourceFile ?? Self.defaultPath))
    }

    /// The file of a deck the config names (`deck`, `fallback_deck`, `room_deck`): a path as
    /// written (made absolute when read), a name inside `deckDirectory`.
    public func deckPath(_ deck: String) -> String {
        deck.contains("/") ? deck : PathName.appending(deck, to: deckDirectory)
    }

    /// The file of a deck a client names (`game.start`'s `deck`), or why it may not: only a deck
    /// file's name (`DeckFileName`), inside `deckDirectory` — never a path, a dot-name or the
    /// config (which has no deck suffix; the daemon also refuses a deck that is the config's file
    /// under another name, `BoundedFile`).
    public func clientDeckPath(_ name: String) -> Result<String, DeckNameError> {
        if let why = DeckFileName.problem(name) { return .failure(DeckNameError(message: why)) }
        return .success(PathName.appending(name, to: deckDirectory))
    }
}

/// A deck name a client may not use (`Configuration.clientDeckPath(_:)`).
public struct DeckNameError: Error, Sendable, Equatable {
    /// What is wrong, for the client's `bad_argument` reply.
    public var message: String
}
