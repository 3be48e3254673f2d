// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltProtocol
import XCTest

@testable import TiltCore

/// Replays the protocol fuzz inputs (Tests/TiltCoreTests/Fixtures/fuzz): the edge cases the
/// fuzz corpus was seeded with, plus any crash scripts/fuzz finds (it copies them there).
/// Every input must give a request or an error, never a crash, and whatever JSON the parser
/// accepts must survive a write/parse round trip unchanged.
final class FuzzRegressionTests: XCTestCase {
    static let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/fuzz")

    func fixtures() throws -> [(name: String, bytes: [UInt8])] {
        let names = try FileManager.default.contentsOfDirectory(atPath: Self.dir.path).sorted()
        return try names.map { ($0, Array(try Data(contentsOf: Self.dir.appendingPathComponent($0)))) }
    }

    func testEveryInputGivesARequestOrAnError() throws {
        let all = try fixtures()
        XCTAssertGreaterThanOrEqual(all.count, 18, "the fixtures are there")
        for (name, bytes) in all {
            switch Request.parse(bytes) {
            case .success(let r):
                XCTAssertTrue(Command.names.contains(r.command.name), name)
            case .failure(let e):
                XCTAssertFalse(e.error.message.isEmpty, name)
                // The error reply must encode to one valid JSON line.
                let line = Event.reply(id: e.id, cmd: e.cmd, error: e.error).encode(seq: 1)
                XCTAssertEqual(line.last, 0x0A, name)
                XCTAssertNoThrow(try JSONParser.parse(line.dropLast()), name)
            }
            if let v = try? JSONParser.parse(bytes) {
                let once = v.jsonText
                let again = try JSONParser.parse(once)
                XCTAssertEqual(again.jsonText, once, "\(name): round trip")
            }
        }
    }

    /// What each hand-made input must give, exactly: the wire error code and message.
    func testExactOutcomes() throws {
        let expected: [String: Result<Command, ProtocolError>] = [
            "deep-nesting-33.json": .failure(.init(.invalidJSON, "nesting deeper than 32 at byte 49")),
            "lone-surrogate.json": .failure(.init(.invalidJSON, "lone surrogate at byte 26")),
            "bad-surrogate-pair.json": .failure(.init(.invalidJSON, "bad surrogate pair at byte 32")),
            "invalid-utf8.bin": .failure(.init(.invalidJSON, "invalid UTF-8 in string at byte 13")),
            "overlong-utf8.bin": .failure(.init(.invalidJSON, "invalid UTF-8 in string at byte 15")),
            "huge-exponent.json": .failure(.init(.invalidJSON, "number out of range at byte 21")),
            "int-overflow.json": .failure(.init(.badArgument, "\"n\" must be within 1.0…1000.0")),
            "long-id.json": .failure(.init(.badArgument, "id must be a number or a string of at most 128 bytes")),
            "fraction-amount.json": .failure(.init(.badArgument, "\"amount\" must be a whole number")),
            "truncated.json": .failure(.init(.invalidJSON, "unexpected end of input at byte 32")),
            "empty.bin": .failure(.init(.invalidJSON, "unexpected end of input at byte 0")),
            "nul-bytes.bin": .failure(.init(.invalidJSON, "unexpected data after the JSON value at byte 14")),
            "control-char-in-string.bin": .failure(.init(.invalidJSON, "control character in string at byte 10")),
            "duplicate-keys.json": .success(Command("ping")),
            "minus-zero-id.json": .success(Command("ping")),
            "number-then-garbage.json": .failure(
                .init(.invalidJSON, "unexpected data after the JSON value at byte 24")),
            "array-not-object.json": .failure(
                .init(.notAnObject, "a request is a JSON object like {\"cmd\":\"ping\"}")),
        ]
        let all = Dictionary(uniqueKeysWithValues: try fixtures().map { ($0.name, $0.bytes) })
        for (name, want) in expected.sorted(by: { $0.key < $1.key }) {
            let bytes = try XCTUnwrap(all[name], "fixture \(name) missing")
            switch (Request.parse(bytes), want) {
            case (.success(let r), .success(let c)): XCTAssertEqual(r.command, c, name)
            case (.failure(let e), .failure(let p)): XCTAssertEqual(e.error, p, name)
            case (let got, _): XCTFail("\(name): got \(got), want \(want)")
            }
        }
        // Duplicate keys: the last one wins, for the id too.
        if case .success(let r) = Request.parse(try XCTUnwrap(all["duplicate-keys.json"])) {
            XCTAssertEqual(r.id, .int(2))
        }
        // An unknown class names the offending (control) character's class string.
        if case .failure(let e) = Request.parse(try XCTUnwrap(all["unknown-class.json"])) {
            XCTAssertEqual(e.error.code, .badArgument)
            XCTAssertEqual(e.cmd, "watch")
        } else {
            XCTFail("unknown-class.json must be refused")
        }
    }
}
