// SPDX-License-Identifier: Apache-2.0
/// The names a client may give a deck file (`game.start`'s `deck`): a plain file name in the
/// deck directory with a deck's suffix. The directory is the owner's (`[game] deck_dir`); a name
/// cannot leave it or reach anything that is not a deck — before this rule a client could name
/// the config itself (with its `pairing_code`) and have its lines sent as prompts to every client.
public enum DeckFileName {
    /// The suffixes of deck files: text (one prompt a line) and a JSON array of strings.
    public static let suffixes = [".txt", ".json"]
    /// The longest name accepted, in UTF-8 bytes (a Linux file name's limit).
    public static let maxBytes = 255

    /// Why `name` is not a deck file name, or nil when it is one.
    public static func problem(_ name: String) -> String? {
        if name.isEmpty { return "a deck name is empty" }
        if name.utf8.count > maxBytes { return "a deck name is longer than \(maxBytes) bytes" }
        // No directories: neither "/" nor a dot-name ("..", ".hidden.txt": hidden files are not
        // decks someone meant to offer).
        if name.contains("/") { return "a deck name has no \"/\": decks are files in the deck directory" }
        if name.hasPrefix(".") { return "a deck name does not start with \".\"" }
        if name.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            return "a deck name has no control characters"
        }
        guard let suffix = suffixes.first(where: { name.hasSuffix($0) }), name.count > suffix.count else {
            return "a deck name ends in \(suffixes.joined(separator: " or ")), got \"\(name)\""
        }
        return nil
    }
}
