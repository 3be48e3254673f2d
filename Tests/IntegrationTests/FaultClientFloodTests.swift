// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// Fault tests (issue 6 item 8) against the real daemon. The other faults of that list live
/// where their machinery is:
/// - gpsd killed and restarted: `GPSDaemonTests.testFixesReachClientsAndResumeAfterGPSDIsKilledAndRestarted`;
/// - the IIO device vanishing and returning: `IIODaemonTests.testDaemonSurvivesVanishAndResumes`
///   (fake IIO tree under scripts/fakehw-ns);
/// - SIGKILL during store writes, then a restart that finds every committed record:
///   `CreditsCrashTests.testSIGKILLDuringCreditWritesLosesNothingCommitted` (credits, visits) and
///   `RoundHistoryCrashTests.testKillNineLosesNoFinishedRound` (game rounds);
/// - an invalid config at SIGHUP: `SystemdDaemonTests.testSighupReloadKeepsClientsAndRefusesBadConfig`;
/// - a full disk on the state directory: `FaultDiskFullTests`.
///
/// Here: a flood of bad clients — 200 connections opening and closing, a client sending
/// garbage until it is thrown out, a client that never reads — while one good client's
/// attitude stream keeps flowing without a gap and the daemon stays up.
final class FaultClientFloodTests: XCTestCase {
    var dir = ""
    var daemon: DaemonProcess?

    override func setUp() { dir = makeTempDir("flood") }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Writes without SIGPIPE; returns false once the daemon has closed the connection.
    static func sendNoSignal(_ c: LineClient, _ bytes: [UInt8]) -> Bool {
        var off = 0
        while off < bytes.count {
            let n = bytes[off...].withUnsafeBytes { Glibc.send(c.fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return false
            }
            off += n
        }
        return true
    }

    /// What the garbage client saw.
    struct GarbageOutcome: Sendable {
        var linesSent = 0
        var errorReplies = 0
        var closedByDaemon = false
    }

    /// Sends bad lines of several kinds until the daemon hangs up (or `timeout` passes).
    static func garbageClient(path: String, timeout: Double) throws -> GarbageOutcome {
        let c = try LineClient(path: path)
        var outcome = GarbageOutcome()
        let kinds: [[UInt8]] = [
            Array("this is not json\n".utf8),
            Array(#"{"cmd":"no.such.command","id":1}"#.utf8) + [0x0A],
            Array(#"{"cmd":"credits.redeem","id":"x","amount":-5}"#.utf8) + [0x0A],
            [0xFF, 0xFE, 0x00, 0x7B, 0x0A],
            Array(#"{"unterminated": "#.utf8) + [0x0A],
            Array(repeating: UInt8(ascii: "x"), count: 5000) + [0x0A],  // above max_line_bytes
        ]
        let deadline = Date().addingTimeInterval(timeout)
        var k = 0
        sending: while Date() < deadline {
            if !sendNoSignal(c, kinds[k % kinds.count]) { outcome.closedByDaemon = true; break }
            outcome.linesSent += 1
            k += 1
            // Take what has arrived, without waiting for more.
            do {
                while true {
                    guard let line = try c.readLine(timeout: 0.002) else {
                        outcome.closedByDaemon = true; break sending
                    }
                    if line.contains(#""ok":false"#) { outcome.errorReplies += 1 }
                }
            } catch {
                continue
            }
        }
        // Once thrown out, the replies already sent can still be read, then EOF.
        while !outcome.closedByDaemon, Date() < deadline {
            do {
                guard let line = try c.readLine(timeout: max(0.01, deadline.timeIntervalSinceNow)) else {
                    outcome.closedByDaemon = true; break
                }
                if line.contains(#""ok":false"#) { outcome.errorReplies += 1 }
            } catch { break }
        }
        return outcome
    }

    func testClientFloodLeavesAGoodClientsAttitudeStreamWhole() throws {
        let config = "\(dir)/tiltd.toml"
        // Small limits so the bad clients hit them quickly: 16 queued lines, 20 bad lines.
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        queue_lines = 16
        max_bad_lines = 20
        [store]
        path = "\(dir)/tiltd.sqlite"
        [log]
        level = "warning"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        // The bundled 55 s head recording at real speed: a live-like attitude stream.
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "1"],
            logPath: "\(dir)/log")
        daemon = d
        let sock = "\(dir)/tiltd.sock"

        let good = try LineClient(path: sock)
        _ = try good.next("hello")
        _ = try good.request(#"{"cmd":"watch","id":1,"attitude_hz":30,"classes":["attitude"]}"#, id: 1)
        _ = try good.next("attitude", timeout: 10)

        // The client that never reads: it asks for everything (raw samples, attitude at 1 kHz).
        let sleeper = try LineClient(path: sock)
        try sleeper.send(#"{"cmd":"watch","id":1,"samples":true,"attitude_hz":1000}"#)

        // The flood, on other threads, while this thread reads the good client. The sleeper's
        // socket buffers take a few seconds to fill at ~120 lines/s; the flood counts as over
        // once the daemon reports dropping its lines (asked by a probe that stays connected).
        let probe = try LineClient(path: sock)
        _ = try probe.next("hello")
        let floodDone = Mutex(false)
        let churnFailures = Mutex<[String]>([])
        let garbage = Mutex<GarbageOutcome?>(nil)
        let sleeperDropped = Mutex<Int64>(0)
        let connections = Mutex(0)
        let group = DispatchGroup()
        DispatchQueue.global().async(group: group) {
            // At least 200 connections, and on until the sleeper overflows, so the churn spans
            // the whole flood.
            var i = 0
            while i < 200 || (sleeperDropped.withLock { $0 } == 0 && i < 20_000) {
                defer { i += 1; connections.withLock { $0 = i } }
                do {
                    let c = try LineClient(path: sock, timeout: 10)
                    // A third read their hello, a third send a command and hang up unanswered,
                    // a third close at once.
                    switch i % 3 {
                    case 0:
                        guard try c.readJSON(timeout: 10)?["class"] == "hello" else {
                            throw LineClient.Failure(description: "no hello")
                        }
                    case 1:
                        guard Self.sendNoSignal(c, Array((#"{"cmd":"status","id":1}"# + "\n").utf8)) else {
                            throw LineClient.Failure(description: "send failed")
                        }
                    default: break
                    }
                } catch {
                    churnFailures.withLock { $0.append("connection \(i): \(error)") }
                    return  // the daemon is gone or refusing: churning on would only wait out timeouts
                }
            }
        }
        DispatchQueue.global().async(group: group) {
            do {
                let outcome = try Self.garbageClient(path: sock, timeout: 20)
                garbage.withLock { $0 = outcome }
            } catch {
                churnFailures.withLock { $0.append("garbage client: \(error)") }
            }
        }
        DispatchQueue.global().async(group: group) {
            do {
                try waitUntil("the sleeper's lines to be dropped", timeout: 30) {
                    let status = try probe.request(#"{"cmd":"status","id":7}"#, id: 7)
                    let dropped = status["dropped_lines"]?.intValue ?? 0
                    sleeperDropped.withLock { $0 = dropped }
                    if dropped == 0 { usleep(200_000) }
                    return dropped > 0
                }
            } catch {
                churnFailures.withLock { $0.append("\(error)") }
            }
        }
        group.notify(queue: .global()) { floodDone.withLock { $0 = true } }

        var attitudeTimes: [Int64] = []
        var arrivals: [ContinuousClock.Instant] = []
        var gaps: [JSONValue] = []
        let started = ContinuousClock.now
        var doneAt: ContinuousClock.Instant?
        // Read through the flood and one more second after it.
        while doneAt.map({ $0.duration(to: .now) < .seconds(1) }) ?? true {
            if doneAt == nil, floodDone.withLock({ $0 }) { doneAt = .now }
            if started.duration(to: .now) > .seconds(45) { XCTFail("the flood did not finish"); break }
            guard let v = try good.readJSON(timeout: 5) else {
                return XCTFail("the good client was disconnected:\n\(d.log)")
            }
            switch v["class"]?.stringValue {
            case "attitude":
                attitudeTimes.append(try XCTUnwrap(v["t_ns"]?.intValue))
                arrivals.append(.now)
            case "gap": gaps.append(v)
            default: break
            }
        }
        let floodSeconds = seconds(started.duration(to: doneAt ?? .now))

        XCTAssertEqual(churnFailures.withLock { $0 }, [], "every connection of the flood was served")
        let churned = connections.withLock { $0 }
        XCTAssertGreaterThanOrEqual(churned, 200)
        let g = try XCTUnwrap(garbage.withLock { $0 })
        XCTAssertTrue(g.closedByDaemon, "the garbage client was not disconnected: \(g)")
        XCTAssertGreaterThanOrEqual(g.errorReplies, 1, "bad lines get error replies: \(g)")
        XCTAssertLessThan(g.linesSent, 2000, "disconnected soon after max_bad_lines: \(g)")

        // The good client: no gap notice, attitude at its 30 Hz on the sample clock throughout.
        XCTAssertEqual(gaps.count, 0, "the good client lost lines: \(gaps)")
        XCTAssertEqual(attitudeTimes, attitudeTimes.sorted())
        let steps = zip(attitudeTimes.dropFirst(), attitudeTimes).map { Double($0 - $1) * 1e-9 }
        let largestStep = steps.max() ?? .infinity
        XCTAssertLessThan(largestStep, 0.1, "a hole in the attitude stream (sample time)")
        let largestWait = zip(arrivals.dropFirst(), arrivals).map { $1.duration(to: $0) }.max() ?? .seconds(99)
        XCTAssertLessThan(largestWait, .seconds(2), "the stream stalled (wall clock)")
        XCTAssertGreaterThanOrEqual(
            Double(attitudeTimes.count), floodSeconds * 30 * 0.7, "attitude rate held during the flood")

        // Still up and tidy: the flood's connections are gone (good client, sleeper and probe
        // remain) and a new status request is served.
        XCTAssertTrue(d.isRunning, d.log)
        var status = JSONValue.null
        try waitUntil("the flood's connections closed", timeout: 10) {
            status = try probe.request(#"{"cmd":"status","id":7}"#, id: 7)
            return status["clients"]?.intValue == 3
        }
        XCTAssertGreaterThan(
            sleeperDropped.withLock { $0 }, 0, "the sleeper's oldest lines were dropped, not queued without bound")
        print(
            "tiltd flood: \(churned) connections opened and closed + garbage client in \(String(format: "%.2f", floodSeconds)) s; good client got \(attitudeTimes.count) attitudes, largest sample step \(String(format: "%.3f", largestStep)) s, largest wait \(largestWait); garbage client: \(g.linesSent) lines sent, \(g.errorReplies) error replies"
        )
        XCTAssertEqual(d.stop(), 0, d.log)
    }
}
