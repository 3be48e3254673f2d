// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// "Events caused by a command follow its reply" (docs/protocol.md, "Commands"), on the real
/// daemon: the asking client reads the reply first, then what the command made every client see.
final class CommandOrderDaemonTests: ReplayDaemonTestCase {
    override var tempTag: String { "order" }

    /// The daemon on the demo head recording, and a client that has read its hello.
    func startDaemon(config: String) throws -> LineClient {
        try startReplayDaemon(config: config)
    }

    /// Sends `line` and reads until both the reply with `id` and the line `caused` matches; returns
    /// the reply and whether it came first.
    func replyAndCause(
        _ c: LineClient, _ line: String, id: Int, caused: (JSONValue) -> Bool
    ) throws -> (reply: JSONValue, replyFirst: Bool) {
        try c.send(line)
        var reply: JSONValue?
        var causeSeen = false
        var replyFirst = false
        while reply == nil || !causeSeen {
            guard let v = try c.readJSON(timeout: 10) else { throw RigError("the daemon closed the connection") }
            if v["class"] == "reply", v["id"] == .int(Int64(id)) {
                reply = v
                replyFirst = !causeSeen
            } else if caused(v) {
                causeSeen = true
            }
        }
        return (reply!, replyFirst)
    }

    func testReloadRepliesBeforeTheConfigStatusLineApplyingAndRefusing() throws {
        let config = try writeDaemonConfig(in: dir)
        let c = try startDaemon(config: config)
        let isConfigStatus = { (v: JSONValue) in v["class"] == "status" && v["source"] == "config" }

        let applied = try replyAndCause(c, #"{"cmd":"reload","id":1}"#, id: 1, caused: isConfigStatus)
        XCTAssertEqual(applied.reply["ok"], .bool(true), "\(applied.reply)")
        XCTAssertTrue(applied.replyFirst, "the reload reply comes before its config status line")

        try "[socket\n".write(toFile: config, atomically: true, encoding: .utf8)
        let refused = try replyAndCause(c, #"{"cmd":"reload","id":2}"#, id: 2, caused: isConfigStatus)
        XCTAssertEqual(refused.reply["error"]?["code"], "reload_refused", "\(refused.reply)")
        XCTAssertTrue(refused.replyFirst, "the refusal comes before its config status line")
    }

    func testGameStartRepliesBeforeTheFallbackDeckStatus() throws {
        let c = try startDaemon(config: try writeDaemonConfig(in: dir))
        _ = try c.next("attitude", timeout: 10)
        // No GPS: a "nearby" deck has no fix to draw from, so the fallback deck is used.
        let started = try replyAndCause(c, #"{"cmd":"game.start","id":3,"deck":"nearby"}"#, id: 3) {
            $0["class"] == "status" && $0["source"] == "game" && $0["state"] == "fallback"
        }
        XCTAssertEqual(started.reply["ok"], .bool(true), "\(started.reply)")
        XCTAssertNotNil(started.reply["deck_note"], "\(started.reply)")
        XCTAssertTrue(started.replyFirst, "the game.start reply comes before the fallback status line")
    }

    func testAClientNamesADeckByFileNameOnly() throws {
        // A client (a paired browser too) may start rounds: a deck it names must be a deck file in
        // the deck directory, never a path — before, "/etc/passwd" was read and sent to every
        // client line by line as prompts, and kept in the history.
        let c = try startDaemon(config: try writeDaemonConfig(in: dir))
        _ = try c.next("attitude", timeout: 10)
        for (id, deck) in [(4, "/etc/hostname"), (5, "../../etc/hostname"), (6, "sub/deck.txt")] {
            let reply = try c.request(#"{"cmd":"game.start","id":\#(id),"deck":"\#(deck)"}"#, id: id, timeout: 10)
            XCTAssertEqual(reply["error"]?["code"], "bad_argument", "\(deck): \(reply)")
        }
        try FileManager.default.createDirectory(atPath: "\(dir)/decks", withIntermediateDirectories: true)
        try "Café\nBakery\n".write(toFile: "\(dir)/decks/cafes.txt", atomically: true, encoding: .utf8)
        let named = try c.request(#"{"cmd":"game.start","id":7,"deck":"cafes.txt"}"#, id: 7, timeout: 10)
        XCTAssertEqual(named["ok"], .bool(true), "\(named)")
        XCTAssertEqual(named["deck"], "cafes.txt", "\(named)")
    }

    func testAClientCannotNameTheConfigOrAnyFileBesideItAsADeck() throws {
        // Before, any file in the config's directory was a deck to a client: the config itself
        // (with the web screen's pairing code) went out line by line as prompts. Now decks are
        // `.txt`/`.json` files in the deck directory (`decks` beside the config by default).
        let code = "493817"
        let config = "\(dir)/tiltd.toml"
        try """
        # tiltd's config: its first line a comment, so as a text deck its lines are prompts
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        [web]
        pairing_code = "\(code)"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let c = try startDaemon(config: config)
        _ = try c.next("attitude", timeout: 10)
        try "okapi\n".write(toFile: "\(dir)/beside.txt", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: "\(dir)/decks", withIntermediateDirectories: true)
        // A link in the deck directory to the config is refused when read (same file).
        try FileManager.default.createSymbolicLink(atPath: "\(dir)/decks/linked.txt", withDestinationPath: config)
        try "okapi\n".write(toFile: "\(dir)/decks/notes.md", atomically: true, encoding: .utf8)
        let refusals: [(String, String)] = [
            ("tiltd.toml", "bad_argument"), ("..", "bad_argument"), (".", "bad_argument"),
            (".hidden.txt", "bad_argument"), ("notes.md", "bad_argument"), ("", "bad_argument"),
            (".txt", "bad_argument"), ("beside.txt", "deck_unavailable"), ("linked.txt", "deck_unavailable"),
        ]
        for (i, (deck, code)) in refusals.enumerated() {
            let id = 10 + i
            let reply = try c.request(#"{"cmd":"game.start","id":\#(id),"deck":"\#(deck)"}"#, id: id, timeout: 10)
            XCTAssertEqual(reply["error"]?["code"], .string(code), "\(deck): \(reply)")
        }
        // Nothing the daemon sent since carries the code (no round started with the config's lines).
        let status = try c.request(#"{"cmd":"status","id":99}"#, id: 99, timeout: 10)
        XCTAssertEqual(status["game"]?["state"], "idle", "\(status)")
        let history = try c.request(#"{"cmd":"history","id":100,"n":10}"#, id: 100, timeout: 10)
        XCTAssertFalse("\(history)".contains(code), "\(history)")
    }
}
