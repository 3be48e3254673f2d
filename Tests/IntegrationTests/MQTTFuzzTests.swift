// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The MQTT bridge's command topic under the socket fuzzer's lines (issue 37): 10,000 messages
/// (TILTD_FUZZ_MQTT, seeded by TILTD_FUZZ_SEED) of every command with edge values, bad ids and
/// malformed payloads, through a real Mosquitto. The bridge and the daemon keep running, every
/// reply on `<prefix>/reply` carries an id that was sent (or none), the bridge's link to the
/// daemon is never dropped (it refuses what the daemon would count as a bad line, `CommandGate`),
/// and a last `status` is answered at once.
final class MQTTFuzzTests: XCTestCase {
    var dir = ""
    var broker: MosquittoRig?
    var device: MQTTDevice?

    override func setUpWithError() throws {
        try requireMosquitto()
        dir = makeTempDir("mqttfuzz")
        broker = try MosquittoRig(dir: dir)
    }

    override func tearDown() {
        if let d = device {
            let (ds, bs) = d.stop()
            XCTAssertEqual(bs ?? 0, 0, "bridge exits 0 on SIGTERM")
            XCTAssertEqual(ds ?? 0, 0, "daemon exits 0 on SIGTERM")
        }
        broker?.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Messages published before a ping whose reply is awaited (TILTD_FUZZ_MQTT_CHUNK).
    static var chunk: Int { SocketFuzzTests.env["TILTD_FUZZ_MQTT_CHUNK"].flatMap { Int($0) } ?? 200 }
    /// The first message sent (the ones before are made but not sent): to replay a failure's chunk.
    static var from: Int { SocketFuzzTests.env["TILTD_FUZZ_MQTT_FROM"].flatMap { Int($0) } ?? 0 }
    /// Seconds to wait for a chunk's ping (TILTD_FUZZ_MQTT_SYNC_S): a shorter wait finds a stall fast.
    static var syncTimeout: Double { SocketFuzzTests.env["TILTD_FUZZ_MQTT_SYNC_S"].flatMap { Double($0) } ?? 60 }

    func testFuzzedCommandMessagesLeaveBridgeAndDaemonAnswering() throws {
        let b = try XCTUnwrap(broker)
        // Every command the bridge may forward (room.show is its own channel to the daemon).
        let names = Command.names.filter { $0 != "room.show" }.map { "\"\($0)\"" }.joined(separator: ",")
        let d = try MQTTDevice(
            name: "fz", base: dir, brokerPort: b.port, recording: "\(repositoryRoot)/config/demo/head.csv", speed: 1,
            mqtt: "allowed_commands = [\(names)]", extra: "[log]\nlevel = \"warning\"")
        device = d
        try d.startDaemon()
        try d.startBridge()
        let sub = try b.subscribe(["tiltd/fz/reply"])
        var probes = 0
        try waitUntil("the bridge to reach the daemon", timeout: 20) {
            probes += 1
            try b.publish("tiltd/fz/cmd", #"{"cmd":"status","id":"probe-\#(probes)"}"#)
            return sub.payloads("tiltd/fz/reply").contains { json($0)?["ok"] == .bool(true) }
        }
        // From here on the bridge's status must stay `streaming` (it says `retrying` when it loses
        // the daemon): subscribed now, its retained status is the linked one.
        let statusSub = try b.subscribe(["tiltd/fz/status/mqtt"])
        let client = try LineClient(path: d.socket, timeout: 15)
        try client.send(#"{"cmd":"help","id":"help"}"#)
        let catalogue = FuzzCommand.catalogue(fromHelp: try client.next("reply", timeout: 5) { $0["id"] == "help" })
        var maker = FuzzLineMaker(rng: SplitMix64(seed: SocketFuzzTests.seed &+ 2), commands: catalogue)
        let count = SocketFuzzTests.env["TILTD_FUZZ_MQTT"].flatMap { Int($0) } ?? 10_000
        var sent: [String] = []
        for i in 0..<count {
            // One message a line (mosquitto_pub -l): no newline inside, and not empty.
            var line =
                maker.rng.chance(0.12)
                ? String(
                    decoding: maker.rawLine(from: maker.commandLine(serial: i, edgeIDAllowed: false).line),
                    as: UTF8.self)
                : maker.commandLine(serial: i, edgeIDAllowed: true).line
            // (mosquitto_pub -l reads C strings: a NUL would end the line early and stall its input.)
            line = String(
                String.UnicodeScalarView(
                    line.unicodeScalars.map { $0 == "\n" || $0 == "\r" ? " " : $0 == "\u{0}" ? "\u{1}" : $0 }))
            if line.trimmingCharacters(in: .whitespaces).isEmpty { line = "x" }
            sent.append(line)
        }
        let start = Date()
        // In chunks, each closed by a ping whose reply is awaited: the bridge's outgoing buffer
        // (`buffer_messages`) and the broker's queue per subscriber are bounded, and a burst of
        // 10,000 would be their drops, not the bridge's answers.
        for chunk in stride(from: Self.from, to: sent.count, by: Self.chunk) {
            let sync = "sync-\(chunk)"
            try publishLines(
                b, "tiltd/fz/cmd",
                Array(sent[chunk..<min(chunk + Self.chunk, sent.count)]) + [#"{"cmd":"ping","id":"\#(sync)"}"#])
            do {
                try sub.wait("tiltd/fz/reply", timeout: Self.syncTimeout) {
                    $0.contains(sync) && json($0)?["id"] == .string(sync)
                }
            } catch {
                let lines = sent[chunk..<min(chunk + Self.chunk, sent.count)].map { String($0.prefix(400)) }
                return XCTFail(
                    "no reply to \(sync) (\(sub.payloads("tiltd/fz/reply").count) replies so far, bridge running: \(d.bridge?.isRunning ?? false)); the chunk:\n\(lines.joined(separator: "\n"))\n\(d.logs)"
                )
            }
        }
        // Answered at once: the bridge's link to the daemon was never dropped (before, the daemon
        // disconnected it after a burst of bad lines and the bridge said `unavailable` until it
        // had reconnected).
        try b.publish("tiltd/fz/cmd", #"{"cmd":"status","id":"final"}"#)
        let final = try XCTUnwrap(
            json(try sub.wait("tiltd/fz/reply", timeout: 60) { json($0)?["id"] == "final" }))
        XCTAssertEqual(final["ok"], .bool(true), "\(final)")
        // The bridge says `retrying` on its status topic whenever it loses the daemon.
        let statuses = statusSub.payloads("tiltd/fz/status/mqtt").compactMap { json($0)?["state"]?.stringValue }
        XCTAssertEqual(statuses.first, "streaming", "the bridge's status was seen: \(statuses)")
        XCTAssertFalse(statuses.contains("retrying"), "the bridge lost the daemon: \(statuses)\n\(d.logs)")
        XCTAssertFalse(d.logs.contains("lost the daemon"), d.logs)
        let seconds = Date().timeIntervalSince(start)
        XCTAssertTrue(d.daemon?.isRunning ?? false, "the daemon runs:\n\(d.logs)")
        XCTAssertTrue(d.bridge?.isRunning ?? false, "the bridge runs:\n\(d.logs)")
        // Every reply's id is one a message carried (ids repeat, so: any of them), or none.
        let sentIDs = Set(sent.compactMap { (try? JSONParser.parse($0))?["id"].map { "\($0)" } })
        let replies = sub.payloads("tiltd/fz/reply").compactMap { json($0) }
        for r in replies {
            guard let id = r["id"], id != .null, id != "final" else { continue }
            if let text = id.stringValue,
                text.hasPrefix("probe-") || text.hasPrefix("sync-") || text.hasPrefix("final-")
            {
                continue
            }
            XCTAssertTrue(sentIDs.contains("\(id)"), "a reply with an id no message had: \(r)")
        }
        XCTAssertGreaterThanOrEqual(replies.count, count * 9 / 10, "the bridge answered the messages")
        print(
            "tiltd mqtt fuzz: \(count) command messages, \(replies.count) replies in \(String(format: "%.1f", seconds)) s; bridge and daemon running"
        )
    }

    /// Publishes each of `lines` as one message with one `mosquitto_pub -l`.
    func publishLines(_ b: MosquittoRig, _ topic: String, _ lines: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_pub")
        p.arguments = ["-h", "127.0.0.1", "-p", "\(b.port)", "-t", topic, "-q", "1", "-l"]
        let input = Pipe()
        p.standardInput = input
        try p.run()
        input.fileHandleForWriting.write(Data(lines.joined(separator: "\n").utf8 + [0x0A]))
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0, "mosquitto_pub -l")
    }
}
