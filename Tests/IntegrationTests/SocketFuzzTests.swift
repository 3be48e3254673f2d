// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// Adversarial lines on the real daemon's socket (issue 37): every command of the catalogue the
/// daemon itself reports (`help`, so a new command is covered the day it lands) with edge values
/// of its argument types and of other types, missing and extra fields, bad ids, and raw
/// malformed lines (non-UTF-8, NUL, overlong, deep, cut). After every line a `ping` must be
/// answered, every reply must keep its request's id, and the daemon must never exit.
///
/// Seeded and budgeted from the environment: TILTD_FUZZ_SEED (default 37), TILTD_FUZZ_LINES
/// (default 100,000 lines, pings not counted; a nightly-size run is a bigger number by hand).
/// A crash is minimised to its line, printed for a regression test.
final class SocketFuzzTests: ReplayDaemonTestCase {
    override var tempTag: String { "fuzz" }

    static var env: [String: String] { ProcessInfo.processInfo.environment }
    static var seed: UInt64 { env["TILTD_FUZZ_SEED"].flatMap { UInt64($0) } ?? 37 }
    static var budget: Int { env["TILTD_FUZZ_LINES"].flatMap { Int($0) } ?? 100_000 }
    /// Lines the daemon reads whole before they are refused as too long (`room.show`'s bound).
    static let longestFramedLine = 65_536 + 1024

    /// A daemon on the demo recording, at real speed (a live-like stream), whose queues hold all
    /// the fuzz client is sent (a dropped reply would be the queue's choice, not a bug) and that
    /// never disconnects it for bad lines.
    func startDaemon() throws -> LineClient {
        try writeConfig(
            socketKeys: "queue_lines = 1000000\nqueue_bytes = 1073741824\nmax_bad_lines = 1000000",
            extra: "[log]\nlevel = \"error\"")
        return try startReplayDaemon()
    }

    /// One line sent and what its reply must carry.
    struct Sent {
        var bytes: [UInt8]
        var id: JSONValue?
    }

    func testEveryCommandWithEdgeValuesAndMalformedLinesLeavesTheDaemonAnswering() throws {
        let c = try startDaemon()
        try c.send(#"{"cmd":"help","id":"help"}"#)
        let catalogue = FuzzCommand.catalogue(fromHelp: try c.next("reply", timeout: 5) { $0["id"] == "help" })
        XCTAssertGreaterThan(catalogue.count, 10, "the catalogue from help")
        var maker = FuzzLineMaker(rng: SplitMix64(seed: Self.seed), commands: catalogue)
        let start = Date()
        var sent = 0, serial = 1, noIDExpected = 0, noIDSeen = 0, replies = 0
        while sent < Self.budget {
            var batch: [Sent] = []
            var pings = Set<String>()
            var wire: [UInt8] = []
            var edgeIDUsed = false
            for _ in 0..<min(100, Self.budget - sent) {
                serial += 1
                let (line, edge) = try nextLine(&maker, serial: serial, edgeIDAllowed: !edgeIDUsed)
                edgeIDUsed = edgeIDUsed || edge
                if line.id == nil { noIDExpected += 1 }
                batch.append(line)
                pings.insert("p\(serial)")
                wire += line.bytes + [0x0A] + Array(#"{"cmd":"ping","id":"p\#(serial)"}"#.utf8) + [0x0A]
                sent += 1
            }
            try c.send(wire)
            // Every ping and every id this batch expects, in any order (store replies come late).
            var waiting: [JSONValue] = batch.compactMap(\.id)
            let deadline = Date().addingTimeInterval(30)
            while !waiting.isEmpty || !pings.isEmpty {
                let next: JSONValue?
                do { next = try c.readJSON(timeout: max(0.1, deadline.timeIntervalSinceNow)) } catch { next = nil }
                guard let v = next else { return try reportCrash(batch: batch, waiting: waiting, pings: pings) }
                switch v["class"]?.stringValue {
                case "gap": XCTFail("the fuzz client's queue dropped lines: \(v)")
                case "reply":
                    replies += 1
                    guard let id = v["id"], id != .null else {
                        noIDSeen += 1
                        continue
                    }
                    if case .string(let p) = id, pings.remove(p) != nil {
                        XCTAssertEqual(v["ok"], .bool(true), "ping: \(v)")
                    } else if let i = waiting.firstIndex(of: id) {
                        waiting.remove(at: i)
                    } else {
                        XCTFail("a reply with an id no line of the batch had: \(v)")
                    }
                default: break
                }
            }
        }
        // Replies without an id: as many as lines that had none, the late ones (store) too.
        try waitUntil("every reply without an id (\(noIDSeen) of \(noIDExpected))", timeout: 30) {
            while noIDSeen < noIDExpected, let v = try c.readJSON(timeout: 1) {
                if v["class"] == "reply", v["id"] == nil || v["id"] == .null { noIDSeen += 1 }
            }
            return noIDSeen >= noIDExpected
        }
        XCTAssertEqual(noIDSeen, noIDExpected, "replies without an id")
        let seconds = Date().timeIntervalSince(start)
        XCTAssertTrue(daemon!.isRunning, "the daemon still runs; log:\n\(daemon!.log)")
        print(
            "tiltd socket fuzz: seed \(Self.seed), \(sent) lines (+\(sent) pings), \(replies) replies in \(String(format: "%.1f", seconds)) s: \(Int(Double(sent) / seconds)) lines/s; \(catalogue.count) commands"
        )
    }

    /// One fuzz line numbered `serial`, and whether it used an edge id (they repeat: one a batch,
    /// so that its reply is told apart).
    func nextLine(_ maker: inout FuzzLineMaker, serial: Int, edgeIDAllowed: Bool) throws -> (Sent, Bool) {
        var line = Sent(bytes: [], id: nil)
        if maker.rng.chance(0.12) {
            line.bytes = maker.rawLine(from: maker.commandLine(serial: serial, edgeIDAllowed: false).line)
            return (line, false)
        }
        let (text, id) = maker.commandLine(serial: serial, edgeIDAllowed: edgeIDAllowed)
        line.bytes = Array(text.utf8)
        guard case .echoed(let idText) = id else { return (line, false) }
        // A reply keeps the id of every line the daemon can read as JSON (the package's parser
        // is the daemon's); a line it cannot parse has none.
        if line.bytes.count <= Self.longestFramedLine, (try? JSONParser.parse(line.bytes)) != nil {
            line.id = try JSONParser.parse(idText)
        }
        return (line, idText != "\(serial)" && idText != "\"s\(serial)\"")
    }

    /// Fuzz lines from clients that shut down their write side after them (`… | socat`): every
    /// reply still comes, with its id, then EOF; the daemon goes on answering everyone else.
    /// TILTD_FUZZ_HALF_CLOSED clients (default 300) of 20 lines each.
    func testFuzzedLinesFromClientsThatHalfCloseGetEveryReply() throws {
        let c = try startDaemon()
        try c.send(#"{"cmd":"help","id":"help"}"#)
        let catalogue = FuzzCommand.catalogue(fromHelp: try c.next("reply", timeout: 5) { $0["id"] == "help" })
        var maker = FuzzLineMaker(rng: SplitMix64(seed: Self.seed &+ 1), commands: catalogue)
        let clients = Self.env["TILTD_FUZZ_HALF_CLOSED"].flatMap { Int($0) } ?? 300
        var serial = 10_000_000
        let start = Date()
        for k in 0..<clients {
            let h = try LineClient(path: "\(dir)/tiltd.sock")
            _ = try h.next("hello")
            var expected: [JSONValue] = []
            var noID = 0
            var wire: [UInt8] = []
            var edgeIDUsed = false
            for _ in 0..<20 {
                serial += 1
                let (line, edge) = try nextLine(&maker, serial: serial, edgeIDAllowed: !edgeIDUsed)
                edgeIDUsed = edgeIDUsed || edge
                if let id = line.id { expected.append(id) } else { noID += 1 }
                wire += line.bytes + [0x0A]
            }
            try h.send(wire)
            XCTAssertEqual(shutdown(h.fd, Int32(SHUT_WR)), 0)
            var gotNoID = 0
            while let v = try h.readJSON(timeout: 15) {
                guard v["class"] == "reply" else { continue }
                if let id = v["id"], id != .null {
                    if let i = expected.firstIndex(of: id) {
                        expected.remove(at: i)
                    } else {
                        XCTFail("client \(k): \(v)")
                    }
                } else {
                    gotNoID += 1
                }
            }
            XCTAssertEqual(expected, [], "client \(k): replies never came before EOF")
            XCTAssertEqual(gotNoID, noID, "client \(k): replies without an id")
            if k % 50 == 0 { XCTAssertEqual(try c.request(#"{"cmd":"ping","id":\#(k)}"#, id: k)["ok"], .bool(true)) }
        }
        XCTAssertTrue(daemon!.isRunning, daemon!.log)
        print(
            "tiltd socket fuzz: \(clients) half-closed clients × 20 lines, every reply then EOF, in \(String(format: "%.1f", Date().timeIntervalSince(start))) s"
        )
    }

    /// The daemon stopped answering: minimise the batch to the line that did it on a fresh
    /// daemon, and fail with it (the line goes into a regression test).
    func reportCrash(batch: [Sent], waiting: [JSONValue], pings: Set<String>) throws {
        let running = daemon?.isRunning ?? false
        let log = daemon?.log.suffix(3000) ?? ""
        var culprit: String?
        for line in batch {
            if let d = daemon { _ = d.stop() }
            try? FileManager.default.removeItem(atPath: "\(dir)/tiltd.sock")
            guard let c = try? startDaemon() else { break }
            try? c.send(line.bytes + [0x0A] + Array(#"{"cmd":"ping","id":"after"}"#.utf8) + [0x0A])
            let answered = (try? c.next("reply", timeout: 10) { $0["id"] == "after" }) != nil
            if !answered || !(daemon?.isRunning ?? false) {
                culprit = String(decoding: line.bytes.prefix(2000), as: UTF8.self)
                break
            }
        }
        XCTFail(
            "the daemon stopped answering (running: \(running)); waiting for ids \(waiting.prefix(10)) and pings \(pings.prefix(5)); "
                + (culprit.map { "minimised to the line: \($0)" } ?? "no single line of the batch does it alone")
                + "\nlog:\n\(log)")
    }
}
