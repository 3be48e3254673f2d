// SPDX-License-Identifier: Apache-2.0
import TiltCore
import XCTest

@testable import TiltConfig

/// Decks are deck files in the deck directory: the names the config and clients may give.
final class DeckConfigTests: XCTestCase {
    func parse(_ text: String) throws -> Configuration {
        try Configuration.parse(text: text, file: "/etc/tiltd/tiltd.toml")
    }

    func testADeckNameIsLookedUpInTheDeckDirectoryBesideTheConfig() throws {
        let c = try parse("[game]\ndeck = \"animals.txt\"\nfallback_deck = \"cafes.json\"\n")
        XCTAssertEqual(c.deckDirectory, "/etc/tiltd/decks")
        XCTAssertEqual(c.game.deck, "animals.txt")
        XCTAssertEqual(c.deckPath(c.game.deck!), "/etc/tiltd/decks/animals.txt")
        XCTAssertEqual(c.deckPath(c.game.fallbackDeck!), "/etc/tiltd/decks/cafes.json")
        // Rendered and read back (check-config's output is a config), the name stays a name.
        XCTAssertEqual(try parse(EffectiveConfig.render(c)).game, c.game)
    }

    func testDeckDirAndPathsAreTheOwnersChoice() throws {
        let c = try parse("[game]\ndeck_dir = \"mine\"\ndeck = \"./party/list.txt\"\n[mqtt]\nroom_deck = \"a.txt\"\n")
        XCTAssertEqual(c.deckDirectory, "/etc/tiltd/mine")
        XCTAssertEqual(c.deckPath(c.game.deck!), "/etc/tiltd/./party/list.txt")
        XCTAssertEqual(c.deckPath(c.mqtt.roomDeck!), "/etc/tiltd/mine/a.txt")
        XCTAssertEqual(try parse("[game]\ndeck = \"nearby\"\n").game.deck, "nearby")
    }

    func testADeckNameThatIsNoDeckFileIsRefusedWithItsLine() {
        // The config itself was a deck a config (and a client) could name.
        for bad in ["tiltd.toml", ".hidden.txt", "..", "notes", ".txt", "a\\u0001b.txt"] {
            do {
                _ = try parse("[game]\n\ndeck = \"\(bad)\"\n")
                XCTFail("accepted deck \(bad)")
            } catch let e as ConfigError {
                XCTAssertEqual(e.line, 3, "\(e)")
                XCTAssertEqual(e.key, "game.deck", "\(e)")
            } catch {
                XCTFail("unexpected \(error)")
            }
        }
    }

    func testAClientNamesOnlyDeckFilesInTheDeckDirectory() throws {
        let c = try parse("")
        XCTAssertEqual(try c.clientDeckPath("party.json").get(), "/etc/tiltd/decks/party.json")
        XCTAssertEqual(try c.clientDeckPath("Café Liste.txt").get(), "/etc/tiltd/decks/Café Liste.txt")
        let long = String(repeating: "a", count: DeckFileName.maxBytes) + ".txt"
        for bad in ["tiltd.toml", "../tiltd.toml", "/etc/passwd", "sub/a.txt", "..", ".", "", ".txt", ".a.txt", long] {
            guard case .failure = c.clientDeckPath(bad) else { return XCTFail("accepted \(bad)") }
        }
    }
}

/// `[socket] group` names a group of this machine: check-config accepted any name and the daemon
/// then stopped at start (found by ConfigEdgeTests with `group = "#"`).
final class SocketGroupConfigTests: XCTestCase {
    func testAnUnknownSocketGroupIsRefusedWithItsLine() throws {
        XCTAssertThrowsError(try Configuration.parse(text: "[socket]\ngroup = \"#\"\n", file: "/etc/tiltd/tiltd.toml"))
        {
            XCTAssertTrue("\($0)".hasPrefix("/etc/tiltd/tiltd.toml:2: socket.group: no group named \"#\""), "\($0)")
        }
        XCTAssertEqual(
            try Configuration.parse(text: "[socket]\ngroup = \"root\"\n", file: "/etc/tiltd/tiltd.toml").socket.group,
            "root")
    }
}
