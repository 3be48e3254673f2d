// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol
import XCTest

@testable import TiltCore

/// The game's lines and state as the daemon encodes them (`GameEvent.fields`, `TiltGame.snapshot`)
/// read back through the protocol's typed bodies (`GameBody`, `GameStateBody`), which every Swift
/// client decodes with: the two declarations cannot drift apart unnoticed.
final class GameBodyTests: XCTestCase {
    func decode(_ e: GameEvent, seq: UInt64 = 1) throws -> (DaemonLine, GameBody) {
        let line = try XCTUnwrap(DaemonLine(bytes: e.event.encode(seq: seq)))
        guard case .game(let g) = line.body else { throw XCTSkip("not a game body: \(line.text)") }
        return (line, g)
    }

    func testEveryKindOfARoundReadsBack() throws {
        let traced = HeadTrace(rateHz: 100).samples(GameRoundTests.timedMotion())
        let (_, events) = try GamePlay.run(traced, roundSeconds: 5)
        for e in events {
            let (line, g) = try decode(e)
            XCTAssertEqual(g.kind, e.kind.rawValue)
            XCTAssertEqual(line.tNs, e.t)
            XCTAssertEqual(g.round, e.round.map(Int64.init))
            XCTAssertEqual(g.state, e.state.rawValue)
            XCTAssertEqual(g.remainingMs, e.remaining.map { $0 / 1_000_000 })
            XCTAssertEqual(g.score, Int64(e.score))
            XCTAssertEqual(g.prompt, e.prompt)
            XCTAssertEqual(g.isDecision, e.kind == .correct || e.kind == .skip)
            switch e.kind {
            case .roundStarted:
                XCTAssertEqual(g.roundSeconds, 5)
                XCTAssertEqual(g.deck, e.deckName)
                XCTAssertEqual(g.deckSize, e.deckSize.map(Int64.init))
            case .correct, .skip:
                XCTAssertEqual(g.decisionMs, e.decision.map { $0.decisionTime / 1_000_000 })
                XCTAssertNotNil(g.tiltDeg)
            case .roundEnded:
                XCTAssertEqual(g.result?["score"]?.intValue, Int64(e.result?.score ?? -1))
            default:
                break
            }
            assertMeetsSchema(line)
        }
    }

    func testKindsOutsideARoundReadBack() throws {
        var e = GameEvent(kind: .neutralRejected, t: 7, round: nil, state: .idle, remaining: nil, score: 0, prompt: nil)
        e.reason = "why"
        var (line, g) = try decode(e)
        XCTAssertEqual(g.reason, "why")
        XCTAssertNil(g.round)
        assertMeetsSchema(line)

        e = GameEvent(kind: .headFrame, t: 8, round: nil, state: .idle, remaining: nil, score: 0, prompt: nil)
        e.headFrame = .assumed
        (line, g) = try decode(e)
        XCTAssertEqual(g.orientation?.source, "assumed")
        XCTAssertEqual(g.orientation?.up, Triple(0, 1, 0))
        assertMeetsSchema(line)

        e = GameEvent(kind: .correct, t: 9, round: 3, state: .prompt, remaining: 1_000_000, score: 1, prompt: "p")
        e.gesture = .nod
        e.tiltDeg = 12.34
        (line, g) = try decode(e)
        XCTAssertEqual(g.gesture, "nod")
        XCTAssertEqual(g.tiltDeg, 12.3)
        XCTAssertNil(g.decisionMs, "null on the wire reads as nil")
        assertMeetsSchema(line)
    }

    /// A room's round shown on the socket (`room.show`): a game line of kind `shared` whose other
    /// fields are the room's view (docs/mqtt.md) reads as a game body too.
    func testASharedLineReads() throws {
        let line = try XCTUnwrap(
            DaemonLine(
                text:
                    #"{"class":"game","seq":4,"t_ns":5,"kind":"shared","room":"party","round":1,"state":"playing","reason":null,"remaining_ms":31250,"prompt":"ramen","score":2,"players":[]}"#
            ))
        guard case .game(let g) = line.body else { return XCTFail("\(line.body)") }
        XCTAssertEqual(g.kind, "shared")
        XCTAssertEqual(g.state, "playing")
        XCTAssertEqual(g.fields["room"], "party")
        assertMeetsSchema(line)
        XCTAssertEqual(DaemonLine(text: #"{"class":"game","seq":4}"#)?.body, .malformed, "kind is required")
    }

    func testTheSnapshotReadsBack() throws {
        var game = try TiltGame(configuration: .absoluteMode, seed: 1)
        var s = try XCTUnwrap(GameStateBody(game.snapshot))
        XCTAssertEqual(s.state, "idle")
        XCTAssertNil(s.round)
        XCTAssertEqual(s.config?.mode, TiltGame.Rules.absoluteMode.mode.rawValue)
        XCTAssertEqual(s.config?.lowThresholdDeg, TiltGame.Rules.absoluteMode.lowThresholdDeg)
        XCTAssertEqual(s.config?.highThresholdDeg, TiltGame.Rules.absoluteMode.highThresholdDeg)
        XCTAssertEqual(s.orientation?.suspect, false)
        _ = try game.start(at: 1_000, roundSeconds: 30, deck: GamePlay.deck())
        s = try XCTUnwrap(GameStateBody(game.snapshot))
        XCTAssertEqual(s.round, 1)
        XCTAssertEqual(s.remainingMs, 30_000)
        XCTAssertEqual(s.score, 0)
    }

    /// The line's fields have the types `GameBody.schemaFields` declares (the JSON Schema's).
    func assertMeetsSchema(_ line: DaemonLine, file: StaticString = #filePath, lineNumber: UInt = #line) {
        for (key, declared) in GameBody.schemaFields.entries {
            guard let v = line[key] else { continue }
            let types = (declared["type"]?.arrayValue ?? []).compactMap(\.stringValue)
            let actual: String
            switch v {
            case .null: actual = "null"
            case .int: actual = "integer"
            case .double(let d): actual = d == d.rounded() && types.contains("integer") ? "integer" : "number"
            case .string: actual = "string"
            case .bool: actual = "boolean"
            case .array: actual = "array"
            case .object: actual = "object"
            }
            XCTAssertTrue(
                types.contains(actual) || (actual == "integer" && types.contains("number")),
                "\(key): \(actual) is not one of \(types) in \(line.text)", file: file, line: lineNumber)
        }
    }
}
