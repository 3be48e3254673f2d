// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltPlatform
import TiltProtocol
import XCTest

@testable import TiltCore

/// docs/game.md shows one example line per game event kind and the snapshot; these
/// tests check that the examples have exactly the fields, order and types the code produces.
final class GameDocTests: XCTestCase {
    /// Every event kind, from a short scripted game.
    static func exampleLines() throws -> [JSONValue] {
        var out: [GameEvent] = []
        // Absolute mode: start, prompts, correct, skip, stop, reset, a timed-out round, a deck-empty round.
        var m = HeadMotion()
        m.hold(1); m.answer(45); m.hold(1); m.answer(-45); m.hold(1)
        let traced = HeadTrace(rateHz: 100).samples(m)
        let attitudes = traced.map(\.attitude)
        let deck = try PromptDeck(name: "animals.txt", prompts: ["giraffe", "zebra", "okapi", "sea lion"])
        var game = try TiltGame(configuration: .absoluteMode, seed: 1)
        game.nextRoundID = 41
        out += try game.start(at: attitudes[0].t, roundSeconds: 60, deck: deck)
        for a in attitudes { out += game.update(a) }
        out += try game.stop(at: attitudes.last!.t)
        out += try game.restart(at: attitudes.last!.t)
        var late = attitudes.last!
        late.t += 60_000_000_000
        out += game.update(late)
        out += game.reset(at: late.t)
        let small = try PromptDeck(name: "one.txt", prompts: ["kiwi"])
        out += try game.start(at: attitudes[0].t + 100_000_000_000, deck: small)
        for var a in attitudes { a.t += 100_000_000_000; out += game.update(a) }
        // Relative mode: captured and rejected neutral poses.
        var rel = TiltGame.Rules.absoluteMode
        rel.mode = .relative
        var r = try TiltGame(configuration: rel)
        out += r.captureNeutral(attitudes[0])
        rel.backAxis = Vector3(0, 1, 0)
        try r.setConfiguration(rel)
        out += r.captureNeutral(attitudes[0])
        // Leaning the head ear to shoulder again and again reads as a wrong back axis
        // (orientation_suspect); nodding afterwards clears it (orientation_ok).
        var lean = HeadMotion()
        lean.hold(1)
        for _ in 0..<4 {
            lean.move(nod: 0, lean: 30, over: 0.4); lean.move(nod: 0, lean: -30, over: 0.8);
            lean.move(nod: 0, lean: 0, over: 0.4)
        }
        for _ in 0..<8 { lean.answer(40, hold: 0.3); lean.hold(0.8) }
        var o = try TiltGame(configuration: .absoluteMode, seed: 1)
        o.nextRoundID = 50
        let leaning = HeadTrace(rateHz: 100).samples(lean)
        out += try o.start(at: leaning[0].attitude.t, deck: deck)
        for x in leaning { out += o.update(x.attitude, rate: x.rate) }
        // The nod vocabulary: a nod answers correct (with the gesture named).
        var nods = HeadMotion()
        nods.hold(1)
        for _ in 0..<3 { nods.move(nod: 15, over: 0.12); nods.move(nod: 0, over: 0.12) }
        nods.hold(1)
        var n = try TiltGame(configuration: .absoluteMode, seed: 1)
        n.nextRoundID = 60
        let nodding = HeadTrace(rateHz: 100).samples(nods)
        out += try n.start(at: nodding[0].attitude.t, gestures: .nod, deck: deck)
        for x in nodding { out += n.update(x.attitude, rate: x.rate) }
        // A head frame learned from wear (desk, then walking): head_frame, the frame adopted.
        var w = try TiltGame(configuration: .absoluteMode, seed: 1)
        w.learnsHeadFrame = true
        var learned: [GameEvent] = []
        for i in 0..<10_000 {
            let s = Double(i) / 100
            let (a, r) = s < 40 ? HeadFrameTiltTests.desk(s) : HeadFrameTiltTests.walk(s)
            let m = HeadFrameLearnerTests.mount
            let att = Attitude(
                t: Nanoseconds(s * 1e9) + 200_000_000_000, q: m.conjugate, atRest: false, gyroBias: .zero)
            learned += w.update(att, rate: m.rotate(r), accel: m.rotate(a)).filter { $0.kind == .headFrame }
        }
        out += learned.prefix(1)
        return try out.enumerated().map { i, e in try JSONParser.parse(e.event.encode(seq: UInt64(1000 + i)).dropLast())
        }
    }

    /// Snapshots: idle, mid-round, and idle with a last round.
    static func exampleSnapshots() throws -> [JSONValue] {
        var m = HeadMotion()
        m.hold(1); m.answer(45); m.hold(1); m.answer(-45); m.hold(1)
        let traced = HeadTrace(rateHz: 100).samples(m)
        let attitudes = traced.map(\.attitude)
        var game = try TiltGame(configuration: .absoluteMode, seed: 1)
        let idle = game.snapshot
        _ = try game.start(
            at: attitudes[0].t,
            deck: try PromptDeck(name: "animals.txt", prompts: ["giraffe", "zebra", "okapi", "sea lion"]))
        for a in attitudes { _ = game.update(a) }
        let playing = game.snapshot
        _ = try game.stop(at: attitudes.last!.t)
        return [.object(idle), .object(playing), .object(game.snapshot)]
    }

    static func docText() throws -> String {
        var dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while dir.path != "/" {
            let doc = dir.appendingPathComponent("docs/game.md")
            if FileManager.default.fileExists(atPath: doc.path) { return try String(contentsOf: doc, encoding: .utf8) }
            dir.deleteLastPathComponent()
        }
        struct Missing: Error, CustomStringConvertible { var description: String }
        throw Missing(description: "docs/game.md not found above \(#filePath)")
    }

    /// The JSON objects in the document's ```json blocks, one per line.
    static func documentedObjects() throws -> [JSONValue] {
        let text = try docText()
        var out: [JSONValue] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inBlock = line == "```json"; continue }
            if inBlock, line.hasPrefix("{") { out.append(try JSONParser.parse(String(line))) }
        }
        return out
    }

    /// Same keys in the same order, same JSON types (null matches anything: optional fields),
    /// recursively; arrays compare their first elements.
    static func sameShape(_ a: JSONValue, _ b: JSONValue, path: String = "") -> String? {
        switch (a, b) {
        case (.null, _), (_, .null): return nil
        case (.object(let x), .object(let y)):
            if x.keys != y.keys { return "\(path): keys \(x.keys) vs \(y.keys)" }
            for (k, v) in x.entries {
                if let d = sameShape(v, y[k]!, path: path + "." + k) { return d }
            }
            return nil
        case (.array(let x), .array(let y)):
            guard let p = x.first, let q = y.first else { return nil }
            return sameShape(p, q, path: path + "[0]")
        default:
            return a.typeName == b.typeName ? nil : "\(path): \(a.typeName) vs \(b.typeName)"
        }
    }

    func testEveryEventKindIsDocumentedWithTheRightShape() throws {
        let documented = try Self.documentedObjects()
        let produced = try Self.exampleLines()
        if ProcessInfo.processInfo.environment["GAME_DOC_PRINT"] != nil {
            for v in produced + (try Self.exampleSnapshots()) { print(v.jsonText) }
        }
        for kind in GameEvent.Kind.allCases {
            let mine = produced.filter { $0["kind"]?.stringValue == kind.rawValue }
            XCTAssertFalse(mine.isEmpty, "the example game produces no \(kind.rawValue)")
            let docs = documented.filter { $0["kind"]?.stringValue == kind.rawValue }
            XCTAssertFalse(docs.isEmpty, "\(kind.rawValue) is not documented")
            for d in docs {
                // A documented example must match one of the produced events of its kind.
                let diffs = mine.map { Self.sameShape(d, $0) }
                XCTAssertTrue(diffs.contains { $0 == nil }, "\(kind.rawValue): \(diffs.compactMap { $0 }.first ?? "")")
            }
        }
    }

    func testTheSnapshotIsDocumentedWithTheRightShape() throws {
        let documented = try Self.documentedObjects().filter { $0["kind"] == nil && $0["state"] != nil }
        XCTAssertFalse(documented.isEmpty, "no snapshot example")
        let snapshots = try Self.exampleSnapshots()
        for d in documented {
            let diffs = snapshots.map { Self.sameShape(d, $0) }
            XCTAssertTrue(diffs.contains { $0 == nil }, diffs.compactMap { $0 }.first ?? "")
        }
    }
}
