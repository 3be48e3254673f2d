// SPDX-License-Identifier: Apache-2.0
import Foundation
import Logging
import NIOCore
import NIOPosix
import TestSupport
import TiltConfig
import TiltCore
import TiltPlatform
import XCTest

@testable import TiltService

/// A hub, engine and socket server in this process, on a temporary path.
///
/// `@unchecked`: no lock; the engine it holds is confined to the fixture's event loop, and the
/// tests touch it only inside `onLoop`/`publishAttitudes`, which run there (the hub is reached
/// through its handle, whose `value` checks that).
final class ServerFixture: @unchecked Sendable {
    let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    let hub: HubHandle
    let engine: Engine
    let server: SocketServer
    let dir: String
    let path: String

    /// With `writeRing`, fan-out goes through io_uring as in the daemon (`Hub.useWriteRing`);
    /// without, through write(2)/writev(2), as where io_uring is unavailable.
    init(writeRing: Bool = false, _ tweak: (inout Configuration.Socket) -> Void = { _ in }) throws {
        dir = makeTempDir("sock")
        path = "\(dir)/tiltd.sock"
        var config = Configuration()
        config.socket.path = path
        tweak(&config.socket)
        hub = HubHandle(loop: group.next())
        engine = try Self.makeEngine(hub, config)
        server = SocketServer(config: config.socket, hub: hub, logger: Logger(label: "test"))
        try server.start()
        if writeRing, let why = onLoop({ [hub] in hub.value.useWriteRing(true) }) {
            // Where the kernel or a filter refuses io_uring the daemon falls back, and so do
            // these tests; CI's kernel has it, so there it must work.
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                throw RigError("io_uring is unavailable (\(why)); CI runs on a kernel that has it")
            }
            throw XCTSkip("io_uring is not available here (\(why)); the write(2) path is tested elsewhere")
        }
    }

    func publishAttitudes(_ n: Int, from t0: Nanoseconds = 1_000_000_000, hz: Double = 60) {
        // The engine is loop-confined; the fixture (checked by hand) carries it to the loop.
        try! hub.loop.submit { [self] in
            for i in 0..<n {
                let t = t0 + Int64(Double(i) * 1e9 / hz)
                let s = IMUSample(t: t, accel: Vector3(0, 0, 9.81), gyro: .zero)
                engine.ingest(sample: s, attitude: Attitude(t: t, q: .identity, atRest: false, gyroBias: .zero))
            }
        }.wait()
    }

    /// An engine on `hub`, made on its loop as the daemon makes it.
    static func makeEngine(_ hub: HubHandle, _ config: Configuration) throws -> Engine {
        nonisolated(unsafe) var made: Engine?
        try hub.submit { made = Engine(hub: $0, config: config, logger: Logger(label: "test")) }.wait()
        return made!
    }

    func onLoop<T: Sendable>(_ f: @escaping @Sendable () -> T) -> T { try! hub.loop.submit(f).wait() }

    deinit {
        server.stop()
        try? group.syncShutdownGracefully()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

final class SocketServerTests: XCTestCase {
    func testTheSocketFileAppearsOnlyOnceItListens() throws {
        // A client that waits for the file and connects at once must never meet ECONNREFUSED:
        // the file arrives by a rename of a socket that already listens (IN_MOVED_TO), never by
        // the bind that creates it (IN_CREATE), and with its mode already set.
        let dir = makeTempDir("sock-appear")
        let watch = inotify_init1(Int32(IN_CLOEXEC) | Int32(IN_NONBLOCK))
        XCTAssertGreaterThanOrEqual(watch, 0)
        defer { close(watch) }
        XCTAssertGreaterThanOrEqual(inotify_add_watch(watch, dir, UInt32(IN_CREATE | IN_MOVED_TO)), 0)
        var config = Configuration()
        config.socket.path = "\(dir)/tiltd.sock"
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let hub = HubHandle(loop: group.next())
        _ = try ServerFixture.makeEngine(hub, config)
        let server = SocketServer(config: config.socket, hub: hub, logger: Logger(label: "test"))
        try server.start()
        defer { server.stop() }
        var events: [(name: String, mask: UInt32)] = []
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = buf.withUnsafeMutableBytes { read(watch, $0.baseAddress, $0.count) }
        var off = 0
        while off < n {
            buf.withUnsafeBytes { raw in
                let e = raw.load(fromByteOffset: off, as: inotify_event.self)
                let nameStart = off + MemoryLayout<inotify_event>.size
                let name = String(decoding: raw[nameStart..<nameStart + Int(e.len)].prefix { $0 != 0 }, as: UTF8.self)
                events.append((name, e.mask))
                off = nameStart + Int(e.len)
            }
        }
        let arrivals = events.filter { $0.name == "tiltd.sock" }
        XCTAssertEqual(arrivals.map(\.mask), [UInt32(IN_MOVED_TO)], "\(events)")
        XCTAssertTrue(events.allSatisfy { $0.name == "tiltd.sock" || $0.name.hasPrefix(".tiltd.sock.") }, "\(events)")
        var st = stat()
        XCTAssertEqual(stat(config.socket.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, mode_t(config.socket.mode))
        XCTAssertNoThrow(try LineClient(path: config.socket.path, timeout: 0))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: dir), ["tiltd.sock"], "no staged name left")
    }

    func testHelloThenDefaultStream() throws {
        let f = try ServerFixture()
        let c = try LineClient(path: f.path)
        let hello = try XCTUnwrap(c.readJSON())
        XCTAssertEqual(hello["class"], "hello")
        XCTAssertEqual(hello["protocol"], .int(1))
        XCTAssertEqual(hello["client"]?["trusted"], .bool(true))
        XCTAssertNotNil(hello["seq"]?.intValue)
        try waitUntil("client registered") { f.onLoop { f.hub.value.clientCount } == 1 }

        // 60 Hz in for 2 s; the default stream carries attitude at 10 Hz and no samples.
        f.publishAttitudes(120)
        var attitudes = 0
        var lastSeq: Int64 = hello["seq"]!.intValue!
        while let v = try? c.readJSON(timeout: 0.5) {
            XCTAssertNotEqual(v["class"], "sample")
            let seq = try XCTUnwrap(v["seq"]?.intValue)
            XCTAssertGreaterThan(seq, lastSeq, "seq must increase")
            lastSeq = seq
            if v["class"] == "attitude" { attitudes += 1; XCTAssertNotNil(v["t_ns"]?.intValue) }
        }
        XCTAssertTrue((19...21).contains(attitudes), "got \(attitudes) attitude lines for 2 s at 10 Hz")
    }

    func testWatchChangesRateAndAddsSamples() throws {
        let f = try ServerFixture()
        let c = try LineClient(path: f.path)
        _ = try c.next("hello")
        let r = try c.request(
            #"{"cmd":"watch","id":1,"attitude_hz":1000,"samples":true,"classes":["attitude"]}"#, id: 1)
        XCTAssertEqual(r["ok"], .bool(true))
        XCTAssertEqual(r["watch"]?["samples"], .bool(true))
        f.publishAttitudes(60)
        var samples = 0, attitudes = 0
        while let v = try? c.readJSON(timeout: 0.5) {
            if v["class"] == "sample" { samples += 1; XCTAssertEqual(v["accel"]?.arrayValue?.count, 3) }
            if v["class"] == "attitude" { attitudes += 1 }
        }
        XCTAssertEqual(samples, 60)
        XCTAssertEqual(attitudes, 60)
    }

    func testBadInputGetsErrorRepliesAndConnectionGoesOn() throws {
        let f = try ServerFixture { $0.maxLineBytes = 256 }
        let c = try LineClient(path: f.path)
        _ = try c.next("hello")
        let cases: [(String, String)] = [
            ("{not json", "invalid_json"),
            ("[1,2]", "not_an_object"),
            (#"{"cmd":"fly","id":3}"#, "unknown_command"),
            (#"{"cmd":"watch","attitude_hz":"fast"}"#, "bad_argument"),
            (#"{"cmd":"ping","extra":1}"#, "bad_argument"),
            (String(repeating: "x", count: 1000), "line_too_long"),
            (String(decoding: [0xFF, 0xFE, 0x00, 0x01], as: UTF8.self), "invalid_json"),
        ]
        for (line, code) in cases {
            try c.send(line)
            let r = try c.next("reply")
            XCTAssertEqual(r["ok"], .bool(false), line)
            XCTAssertEqual(r["error"]?["code"]?.stringValue, code, line)
            XCTAssertNotNil(r["error"]?["message"]?.stringValue)
        }
        // An over-long line split across writes, without newline at first.
        try c.send(Array(repeating: UInt8(ascii: "y"), count: 300))
        try c.send(Array(repeating: UInt8(ascii: "y"), count: 300) + [0x0A])
        XCTAssertEqual(try c.next("reply")["error"]?["code"], "line_too_long")
        // And the connection still works.
        let pong = try c.request(#"{"cmd":"ping","id":9}"#, id: 9)
        XCTAssertEqual(pong["ok"], .bool(true))
    }

    func testPingEchoesStringID() throws {
        let f = try ServerFixture()
        let c = try LineClient(path: f.path)
        _ = try c.next("hello")
        try c.send(#"{"cmd":"ping","id":"abc"}"#)
        let r = try c.next("reply")
        XCTAssertEqual(r["id"], "abc")
        XCTAssertEqual(r["pong"], .bool(true))
    }

    func testFloodOfBadLinesDisconnectsOnlyThatClient() throws {
        let f = try ServerFixture {
            $0.maxBadLines = 100; $0.attitudeHz = 1000
        }
        let good = try LineClient(path: f.path)
        _ = try good.next("hello")
        let bad = try LineClient(path: f.path)
        _ = try bad.next("hello")
        try waitUntil("two clients") { f.onLoop { f.hub.value.clientCount } == 2 }

        // The flood writer runs beside the publisher.
        let flood = Thread {
            let lines = Array(String(repeating: "garbage\n", count: 10_000).utf8)
            try? bad.send(lines)
        }
        flood.start()
        f.publishAttitudes(600)

        var errors = 0
        var closed = false
        while let v = try bad.readJSON(timeout: 5) {
            if v["class"] == "reply" { errors += 1 }
        }
        closed = true
        XCTAssertTrue(closed)
        XCTAssertGreaterThanOrEqual(errors, 100, "each bad line up to the limit gets an error reply")
        XCTAssertLessThan(errors, 10_000, "the flooder was cut off")
        try waitUntil("flooder removed") { f.onLoop { f.hub.value.clientCount } == 1 }

        // The good client saw every attitude, in order, with no gap.
        var seen = 0
        var last: Int64 = 0
        while let v = try? good.readJSON(timeout: 0.5) {
            XCTAssertNotEqual(v["class"], "gap")
            if v["class"] == "attitude" {
                let t = v["t_ns"]!.intValue!
                XCTAssertGreaterThan(t, last); last = t; seen += 1
            }
        }
        XCTAssertEqual(seen, 600)
    }

    func testStalledClientIsBoundedAndToldOfGap() throws {
        try checkStalledClientIsBoundedAndToldOfGap(writeRing: false)
    }

    func testStalledClientIsBoundedAndToldOfGapThroughTheWriteRing() throws {
        try checkStalledClientIsBoundedAndToldOfGap(writeRing: true)
    }

    private func checkStalledClientIsBoundedAndToldOfGap(writeRing: Bool) throws {
        let f = try ServerFixture(writeRing: writeRing) {
            $0.queueLines = 64; $0.attitudeHz = 1000
        }
        let stalled = try LineClient(path: f.path)
        let reader = try LineClient(path: f.path)
        try waitUntil("two clients") { f.onLoop { f.hub.value.clientCount } == 2 }
        _ = try reader.next("hello")

        let n = 20_000, chunks = 400
        // Publish in chunks smaller than a queue while the reader keeps up; the stalled one never reads.
        var got = 0
        for chunk in 0..<chunks {
            f.publishAttitudes(n / chunks, from: 1_000_000_000 + Int64(chunk) * 1_000_000_000_000)
            while got < (chunk + 1) * n / chunks, let v = try reader.readJSON(timeout: 5) {
                XCTAssertNotEqual(v["class"], "gap", "the reading client must lose nothing")
                if v["class"] == "attitude" { got += 1 }
            }
        }
        XCTAssertEqual(got, n)
        let (queued, dropped) = f.onLoop {
            let s = f.hub.value.sessions.first { $0.sentTotal < n }!
            return (s.queued, s.droppedTotal)
        }
        XCTAssertLessThanOrEqual(queued, 64, "the stalled client's queue is bounded")
        XCTAssertGreaterThan(dropped, 0)

        // When it reads again it learns how many lines it lost.
        let gap = try stalled.next("gap", timeout: 10)
        XCTAssertEqual(gap["dropped"]?.intValue, Int64(dropped))
    }

    func testLiveSocketRefusedStaleReplacedNonSocketKept() throws {
        let f = try ServerFixture()
        var other = Configuration()
        other.socket.path = f.path
        let second = SocketServer(config: other.socket, hub: f.hub, logger: Logger(label: "t"))
        XCTAssertThrowsError(try second.start()) { e in
            XCTAssertTrue("\(e)".contains("in use by another running tiltd"), "\(e)")
        }

        // A stale socket file (nobody listening) is replaced.
        let dir = makeTempDir("stale")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let stalePath = "\(dir)/s.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertEqual(UnixSocketAddress(path: stalePath)?.bind(fd), 0)
        close(fd)
        XCTAssertTrue(FileManager.default.fileExists(atPath: stalePath))
        let f2 = try ServerFixture()
        var cfg = Configuration().socket
        cfg.path = stalePath
        let s3 = SocketServer(config: cfg, hub: f2.hub, logger: Logger(label: "t"))
        try s3.start()
        let c = try LineClient(path: stalePath)
        XCTAssertEqual(try c.readJSON()?["class"], "hello")
        s3.stop()

        // A regular file is never removed.
        let filePath = "\(dir)/notasocket"
        try "keep me".write(toFile: filePath, atomically: true, encoding: .utf8)
        cfg.path = filePath
        XCTAssertThrowsError(try SocketServer(config: cfg, hub: f2.hub, logger: Logger(label: "t")).start())
        XCTAssertEqual(try String(contentsOfFile: filePath, encoding: .utf8), "keep me")
    }

    func testSocketModeApplied() throws {
        let f = try ServerFixture { $0.mode = 0o640 }
        var st = stat()
        XCTAssertEqual(lstat(f.path, &st), 0)
        XCTAssertEqual(st.st_mode & 0o777, 0o640)
    }

    func testUntrustedPeerMayWatchButNotMutate() throws {
        guard getuid() == 0 else { throw XCTSkip("needs root to connect as another user") }
        let f = try ServerFixture { $0.mode = 0o666 }
        // A real second process under another uid (nobody), speaking through socat.
        let lines = try exchangeAsNobody([#"{"cmd":"game.stop","id":1}"#, #"{"cmd":"ping","id":2}"#], socket: f.path)
        let hello = try XCTUnwrap(lines.first { $0["class"] == "hello" })
        XCTAssertEqual(hello["client"]?["uid"], .int(65534))
        XCTAssertEqual(hello["client"]?["trusted"], .bool(false))
        let r1 = try XCTUnwrap(lines.first { $0["id"] == .int(1) })
        XCTAssertEqual(r1["error"]?["code"], "forbidden")
        let r2 = try XCTUnwrap(lines.first { $0["id"] == .int(2) })
        XCTAssertEqual(r2["ok"], .bool(true))
    }
}
