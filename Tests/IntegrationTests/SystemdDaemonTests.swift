// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// A NOTIFY_SOCKET made by the test, as systemd would make it.
final class NotifyReceiver {
    let path: String
    let fd: Int32

    init(path: String) throws {
        self.path = path
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let fd = self.fd
        let rc = withUnixAddress(path) { bind(fd, $0, $1) }
        guard rc == 0 else {
            throw LineClient.Failure(description: "bind \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd); unlink(path) }

    /// The next datagram's assignments, or nil when none arrives within `timeout`.
    func next(timeout: Double) -> [String]? {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buf = [UInt8](repeating: 0, count: 4096)
        let n = recv(fd, &buf, buf.count, 0)
        guard n > 0 else { return nil }
        return String(decoding: buf[..<n], as: UTF8.self).split(separator: "\n").map(String.init)
    }

    /// Collects datagrams for `seconds`.
    func collect(for seconds: Double) -> [[String]] {
        var out: [[String]] = []
        let end = Date().addingTimeInterval(seconds)
        while Date() < end, let m = next(timeout: max(0.01, end.timeIntervalSinceNow)) { out.append(m) }
        return out
    }
}

final class SystemdDaemonTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("sd") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    func config(_ extra: String = "") throws -> String {
        let path = "\(dir)/tiltd.toml"
        try "[socket]\npath = \"\(dir)/tiltd.sock\"\n[store]\npath = \"\(dir)/tiltd.sqlite\"\n\(extra)\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func testReadyStatusAndWatchdogFromTheSampler() throws {
        let notify = try NotifyReceiver(path: "\(dir)/notify")
        let d = try DaemonProcess(
            ["run", "--config", try config(), "--replay", "\(repositoryRoot)/config/demo/head.csv"],
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"],
            logPath: "\(dir)/log")
        let first = try XCTUnwrap(notify.next(timeout: 10), d.log)
        XCTAssertTrue(first.contains("READY=1"), "\(first)")
        // The socket is served by the time READY=1 is sent.
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 0.5)
        XCTAssertEqual(try c.readJSON()?["class"], "hello")

        let messages = notify.collect(for: 2.5).flatMap { $0 }
        let pings = messages.filter { $0 == "WATCHDOG=1" }.count
        XCTAssertGreaterThanOrEqual(pings, 4, "a 1 s watchdog is pinged about every 250 ms: \(messages)")
        // The latest STATUS= in the window: an earlier one may still say the replay is loading
        // (READY=1 comes as soon as the socket listens).
        let status = messages.last { $0.hasPrefix("STATUS=") }
        XCTAssertNotNil(status, "\(messages)")
        XCTAssertTrue(status?.contains("Hz from replay head.csv") ?? false, "\(status ?? "")")
        XCTAssertTrue(status?.contains("1 client") ?? false, "\(status ?? "")")

        XCTAssertEqual(d.stop(), 0)
        let last = notify.collect(for: 0.5).flatMap { $0 }
        XCTAssertTrue(last.contains("STOPPING=1"), "\(last)")
    }

    func testWatchdogStopsWhenTheSamplerIsStuck() throws {
        // A recording that is a FIFO nobody writes: the sampler blocks reading it for good,
        // while the process and its event loop stay perfectly alive.
        let fifo = "\(dir)/stuck.csv"
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let notify = try NotifyReceiver(path: "\(dir)/notify")
        let d = try DaemonProcess(
            ["run", "--config", try config(), "--replay", fifo],
            environment: ["NOTIFY_SOCKET": notify.path, "WATCHDOG_USEC": "1000000"],
            logPath: "\(dir)/log")
        let first = try XCTUnwrap(notify.next(timeout: 10), d.log)
        XCTAssertTrue(first.contains("READY=1"))
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: 1)
        XCTAssertEqual(try c.readJSON()?["class"], "hello", "the loop still serves")
        // The last heartbeat is from before the read; after it ages past half the interval, no pings.
        let messages = notify.collect(for: 3).flatMap { $0 }
        let late = messages.filter { $0 == "WATCHDOG=1" }.count
        XCTAssertLessThanOrEqual(late, 2, "no pings once the sampler is stuck: \(messages)")
        XCTAssertTrue(d.isRunning)
        kill(d.pid, SIGKILL)
    }

    func testSocketActivationServesTheInheritedSocket() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        guard FileManager.default.isExecutableFile(atPath: activate) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("\(activate) missing (apt systemd)") }
            throw XCTSkip("\(activate) missing")
        }
        // The configured path is elsewhere: the daemon must use the socket it inherits.
        let sock = "\(dir)/activated.sock"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: activate)
        p.arguments = [
            "-l", sock, "--fdname=tiltd", tiltdBinary, "run", "--config", try config(),
            "--replay", "\(repositoryRoot)/config/demo/head.csv",
        ]
        let log = FileHandle(forWritingAtPath: "/dev/null")
        p.standardError = log; p.standardOutput = log
        try p.run()
        defer { p.terminate(); p.waitUntilExit() }
        try waitUntil("activation socket") { FileManager.default.fileExists(atPath: sock) }
        // This first client is the one that starts the daemon: its hello must list the sources.
        let c = try LineClient(path: sock)
        let hello = try c.next("hello", timeout: 10)
        XCTAssertEqual(hello["protocol"], .int(1))
        let sources = hello["sources"]?.arrayValue?.compactMap { $0["source"]?.stringValue } ?? []
        XCTAssertTrue(sources.contains("imu"), "the activating client's hello lists the sources: \(hello)")
        _ = try c.next("attitude", timeout: 10)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/tiltd.sock"), "did not bind its own socket")
    }

    func testStatusReturnsToTheRunningSummaryAfterAReload() throws {
        let notify = try NotifyReceiver(path: "\(dir)/notify")
        let d = try DaemonProcess(
            ["run", "--config", try config(), "--replay", "\(repositoryRoot)/config/demo/head.csv"],
            environment: ["NOTIFY_SOCKET": notify.path], logPath: "\(dir)/log")
        defer { _ = d.stop() }
        XCTAssertTrue(try XCTUnwrap(notify.next(timeout: 10), d.log).contains("READY=1"))
        // Let the sampler stream, so the running summary says "N Hz from replay head.csv".
        try waitUntil("a status with the rate", timeout: 10) {
            notify.next(timeout: 0.5)?.contains { $0.hasPrefix("STATUS=") && $0.contains("Hz from") } ?? false
        }
        // A changed [calibration] restarts the sampler: at READY=1 the summary says "imu starting",
        // and STATUS= must move on to the rate again once the replay streams.
        let path = "\(dir)/tiltd.toml"
        let edited = try String(contentsOfFile: path, encoding: .utf8) + "[calibration]\ngyro_bias = [0.001, 0, 0]\n"
        try edited.write(toFile: path, atomically: true, encoding: .utf8)
        kill(d.pid, SIGHUP)
        var afterReload: [String] = []
        try waitUntil("READY=1 after the reload", timeout: 10) {
            if let m = notify.next(timeout: 0.5) { afterReload += m }
            return afterReload.contains("READY=1")
        }
        XCTAssertTrue(afterReload.contains { $0.hasPrefix("RELOADING=1") }, "\(afterReload)")
        try waitUntil("STATUS= back to the running summary", timeout: 10) {
            if let m = notify.next(timeout: 0.5) { afterReload += m }
            return afterReload.last { $0.hasPrefix("STATUS=") }?.contains("Hz from replay head.csv") ?? false
        }
    }

    func testSighupReloadKeepsClientsAndRefusesBadConfig() throws {
        let path = try config("[socket.x]")
        try "[socket]\npath = \"\(dir)/tiltd.sock\"\nattitude_hz = 10\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        let d = try DaemonProcess(
            ["run", "--config", path, "--replay", "\(repositoryRoot)/config/demo/head.csv"], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")

        // A bad edit: refused, old config kept, clients told, connection kept.
        try "[socket]\npath = \"\(dir)/tiltd.sock\"\nattitude_hz = \"fast\"\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        kill(d.pid, SIGHUP)
        let refused = try c.next("status", timeout: 10) { $0["source"] == "config" }
        XCTAssertEqual(refused["state"], "error")
        XCTAssertTrue(refused["message"]?.stringValue?.contains("\(path):3: socket.attitude_hz") ?? false, "\(refused)")
        XCTAssertTrue(d.isRunning)
        _ = try c.next("attitude", timeout: 5)

        // A good edit: applied; new clients get the new default rate.
        try "[socket]\npath = \"\(dir)/tiltd.sock\"\nattitude_hz = 2\n".write(
            toFile: path, atomically: true, encoding: .utf8)
        kill(d.pid, SIGHUP)
        let loaded = try c.next("status", timeout: 10) { $0["source"] == "config" }
        XCTAssertEqual(loaded["state"], "loaded", "\(loaded)")
        let c2 = try LineClient(path: "\(dir)/tiltd.sock")
        let hello2 = try c2.next("hello")
        XCTAssertEqual(hello2["watch"]?["attitude_hz"]?.doubleValue, 2)
        XCTAssertEqual(d.stop(), 0)
    }
}
