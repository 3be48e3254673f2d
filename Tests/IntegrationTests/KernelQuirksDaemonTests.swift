// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import Synchronization
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The real daemon on what real kernels do (issue 12): a wall clock that steps under a running
/// round, a BMI160 wired without its interrupt, an accelerometer with no gyroscope.
final class KernelQuirksDaemonTests: XCTestCase {
    private var dir = ""
    private var scenario: FakeScenario?
    private var daemon: DaemonProcess?
    private var log: EventLog?

    override func setUpWithError() throws {
        if let reason = FakeHarness.unavailableReason {
            if FakeHarness.isCI { XCTFail("fake-hardware harness required in CI: \(reason)") }
            throw XCTSkip(reason)
        }
        dir = makeTempDir("kq")
    }

    override func tearDown() {
        log?.stop()
        if let daemon {
            XCTAssertEqual(daemon.stop(), 0, daemon.log)
            if (testRun?.hasSucceeded ?? true) == false { print("tiltd log:\n\(daemon.log)") }
        }
        scenario?.remove()
        try? FileManager.default.removeItem(atPath: dir)
        super.tearDown()
    }

    /// Writes the config, starts `tiltd run`, and connects an observer that records every line
    /// (all attitudes, samples off) and a client for commands.
    private func start(
        _ devices: [FakeIIODevice], rateHz: Double, roundSeconds: Int = 30
    ) throws -> (FakeScenario, LineClient) {
        let s = try FakeScenario(devices)
        scenario = s
        try """
        [imu]
        rate_hz = \(rateHz)
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        [game]
        round_s = \(roundSeconds)
        seed = 3
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(["run", "--config", "\(dir)/tiltd.toml"], logPath: "\(dir)/log")
        let observer = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        try observer.send(#"{"cmd":"watch","id":1,"attitude_hz":1000}"#)
        log = EventLog(observer)
        return (s, try LineClient(path: "\(dir)/tiltd.sock", timeout: 15))
    }

    /// Accel counts of a head rolled by `rollDeg` (90 = upright in GameDaemonTests' convention).
    private func head(_ d: FakeIIODevice, rollDeg: Double) -> [Int64] {
        let q = Quaternion(roll: rollDeg * .pi / 180, pitch: 0, yaw: 0)
        return d.rawCounts(q.conjugate.rotate(Vector3(0, 0, FakeIIODevice.g)), group: d.accel!)
    }

    // MARK: the wall clock steps

    func testRealtimeClockStepsBackAnHourAndForwardThreeDaysDuringARound() throws {
        // Linux 4.9's inv_mpu6050: no current_timestamp_clock, so scans carry CLOCK_REALTIME.
        let d = FakeIIODevice.mpu6050Linux49()
        let (s, c) = try start([d], rateHz: 50)
        let log = try XCTUnwrap(log)
        let writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        let feeder = PacedFeeder(
            writer: writer, device: d, rateHz: 50, accel: head(d, rollDeg: 90),
            t0: 1_764_000_000_000_000_000)
        defer { feeder.stop() }
        try waitUntil("attitude flowing", timeout: 15) { log.attitudes.count >= 25 }
        let st = try c.request(#"{"cmd":"status","id":2}"#, id: 2)
        let imu = st["sources"]?.arrayValue?.first { $0["source"] == "imu" }
        XCTAssertTrue(imu?["message"]?.stringValue?.contains("no current_timestamp_clock") == true, st.jsonText)

        let reply = try c.request(#"{"cmd":"game.start","id":3}"#, id: 3, timeout: 10)
        XCTAssertEqual(reply["ok"], .bool(true), reply.jsonText)
        // Elapsed time on a monotonic clock: the test host's own wall clock may be stepped too.
        let started = ContinuousClock.now

        // Each phase: 1.5 s of streaming, then the clock steps; attitudes must keep coming.
        func phase(_ what: String) throws {
            let n = log.attitudes.count
            try waitUntil("60 attitudes \(what)", timeout: 10) { log.attitudes.count >= n + 60 }
        }
        try phase("before the steps")
        feeder.step(by: -3_600_000_000_000)
        try phase("after the step back")
        feeder.step(by: 3 * 86_400_000_000_000)
        try phase("after the step forward")
        let elapsed = ContinuousClock.now - started
        let elapsedMs = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15

        // One status line per step, with its size.
        let lines = log.lines
        let steps = lines.filter { $0["class"] == "status" && $0["state"] == "clock_step" }
        XCTAssertEqual(steps.count, 2, steps.map(\.jsonText).joined(separator: "\n"))
        XCTAssertEqual(Double(steps.first?["step_ns"]?.intValue ?? 0) / 1e9, -3600, accuracy: 1)
        XCTAssertEqual(Double(steps.last?["step_ns"]?.intValue ?? 0) / 1e9, 259_200, accuracy: 1)

        // t_ns never goes backwards, never jumps, and advances like the samples do.
        let attitudes = lines.filter { $0["class"] == "attitude" }
        let times = attitudes.compactMap { $0["t_ns"]?.intValue }
        let gaps = zip(times, times.dropFirst()).map { $1 - $0 }
        // On failure: the lines around each odd gap, and any gap notice, say what happened.
        let odd = gaps.indices.filter { gaps[$0] <= 0 || gaps[$0] > 100_000_000 }
        let context =
            odd.prefix(3).map { i in attitudes[max(0, i - 1)...min(attitudes.count - 1, i + 2)].map(\.jsonText) }
            .joined().joined(separator: "\n")
            + lines.filter { $0["class"] == "gap" }.map(\.jsonText).joined(separator: "\n")
        XCTAssertEqual(gaps.filter { $0 <= 0 }.count, 0, "t_ns went backwards or stood still:\n\(context)")
        XCTAssertLessThanOrEqual(gaps.max() ?? 0, 100_000_000, "a jump reached the wire:\n\(context)")
        let spanS = Double(times.last! - times.first!) / 1e9
        XCTAssertEqual(
            Double(times.count - 1) / spanS, 50, accuracy: 5,
            "attitude at the sample rate: \(times.count) lines over \(spanS) s")

        // The round runs on: not ended, and its remaining time is what the wall clock says.
        XCTAssertFalse(log.lines.contains { $0["class"] == "game" && $0["kind"] == "round_ended" })
        let after = try c.request(#"{"cmd":"status","id":4}"#, id: 4)
        let remaining = try XCTUnwrap(after["game"]?["remaining_ms"]?.intValue, after.jsonText)
        XCTAssertEqual(
            Double(remaining), 30_000 - elapsedMs, accuracy: 1_500,
            "\(elapsedMs) ms since the start: \(after["game"]!.jsonText)")
    }

    // MARK: a clock believed monotonic steps back

    func testStampsSteppingBackAnHourOnAClockBelievedMonotonicKeepStreaming() throws {
        // Linux 6.6's inv_mpu6050: tiltd switches current_timestamp_clock to monotonic, then the
        // stamps step back an hour anyway (a chip's own timestamps reset, a replay's recording).
        let d = FakeIIODevice.mpu6050()
        let (s, c) = try start([d], rateHz: 50)
        let log = try XCTUnwrap(log)
        let writer = try ScanWriter(scenario: s, device: d, timeout: 15)
        let feeder = PacedFeeder(
            writer: writer, device: d, rateHz: 50, accel: head(d, rollDeg: 90), t0: 7_200_000_000_000)
        defer { feeder.stop() }
        try waitUntil("attitude flowing", timeout: 15) { log.attitudes.count >= 25 }
        XCTAssertEqual(s.timestampClock(d), "monotonic")
        let before = try c.request(#"{"cmd":"status","id":2}"#, id: 2)
        let imu = before["sources"]?.arrayValue?.first { $0["source"] == "imu" }
        XCTAssertTrue(imu?["message"]?.stringValue?.contains("CLOCK_MONOTONIC") == true, before.jsonText)

        feeder.step(by: -3_600_000_000_000)
        let n = log.attitudes.count
        try waitUntil("150 attitudes after the step back", timeout: 10) { log.attitudes.count >= n + 150 }
        let steps = log.lines.filter { $0["class"] == "status" && $0["state"] == "clock_step" }
        XCTAssertEqual(steps.count, 1, steps.map(\.jsonText).joined(separator: "\n"))
        XCTAssertEqual(Double(steps.first?["step_ns"]?.intValue ?? 0) / 1e9, -3600, accuracy: 1)
        // After it, t_ns advances at the sample rate (not 1 ns a sample).
        let times = log.attitudes.suffix(100).compactMap { $0["t_ns"]?.intValue }
        let spanS = Double(times.last! - times.first!) / 1e9
        XCTAssertEqual(Double(times.count - 1) / spanS, 50, accuracy: 5, "\(times.count) lines over \(spanS) s")
    }

    // MARK: BMI160 without its interrupt

    func testBMI160WithoutInterruptGivesAttitudeByPollingWithinTwoSeconds() throws {
        let d = FakeIIODevice.bmi160WithoutInterrupt()
        let tilted = d.rawCounts(
            Quaternion(roll: 0.5, pitch: -0.3, yaw: 0).conjugate.rotate(Vector3(0, 0, FakeIIODevice.g)),
            group: d.accel!)
        let launched = ContinuousClock.now
        let (s, c) = try start([d], rateHz: 100)
        try s.setRaw(d, d.accel!, tilted)
        try s.setRaw(d, d.gyro!, [0, 0, 0])
        let log = try XCTUnwrap(log)
        try waitUntil("an attitude of the tilt", timeout: 10) {
            log.attitudes.contains { abs(($0["roll_deg"]?.doubleValue ?? 0) - 0.5 * 180 / .pi) < 1 }
        }
        XCTAssertLessThan(ContinuousClock.now - launched, .seconds(2), "attitude within 2 s of start")
        let st = try c.request(#"{"cmd":"status","id":2}"#, id: 2)
        let imu = try XCTUnwrap(st["sources"]?.arrayValue?.first { $0["source"] == "imu" }, st.jsonText)
        XCTAssertEqual(imu["state"], "streaming")
        let message = imu["message"]?.stringValue ?? ""
        XCTAssertTrue(message.hasPrefix("polled: bmi160 (iio:device0) has an empty current_trigger"), message)
        XCTAssertTrue(message.contains("interrupt line"), message)
    }

    // MARK: ADXL345, no gyroscope

    func testADXL345AttitudeFlowsAndATiltRoundIsPlayed() throws {
        let d = FakeIIODevice.adxl345()
        let (s, c) = try start([d], rateHz: 50, roundSeconds: 20)
        try s.setRaw(d, d.accel!, head(d, rollDeg: 90))
        let log = try XCTUnwrap(log)
        try waitUntil("upright attitude", timeout: 15) {
            log.attitudes.contains { abs(($0["roll_deg"]?.doubleValue ?? 0) - 90) < 1 }
        }
        let a = try XCTUnwrap(log.attitudes.last)
        XCTAssertNil(a["yaw_deg"], "no heading without a gyroscope: \(a.jsonText)")
        XCTAssertNil(a["gyro_bias"], a.jsonText)
        let st = try c.request(#"{"cmd":"status","id":2}"#, id: 2)
        let imu = try XCTUnwrap(st["sources"]?.arrayValue?.first { $0["source"] == "imu" }, st.jsonText)
        XCTAssertEqual(imu["gyroscope"], .bool(false))
        XCTAssertTrue(
            imu["message"]?.stringValue?.contains("no gyroscope: tilt from the accelerometer only") == true,
            imu.jsonText)
        try waitUntil("at rest", timeout: 10) { log.attitudes.last?["at_rest"] == .bool(true) }

        // Nods and shakes are read from the gyro: the nod vocabulary is refused, and says why.
        let nod = try c.request(#"{"cmd":"game.start","id":4,"gestures":"nod"}"#, id: 4, timeout: 10)
        XCTAssertEqual(nod["ok"], .bool(false), nod.jsonText)
        XCTAssertEqual(nod["error"]?["code"], "needs_gyro", nod.jsonText)
        XCTAssertTrue(nod["error"]?["message"]?.stringValue?.contains("needs a gyroscope") == true, nod.jsonText)
        let reply = try c.request(#"{"cmd":"game.start","id":3}"#, id: 3, timeout: 10)
        XCTAssertEqual(reply["ok"], .bool(true), reply.jsonText)
        func game(_ kind: String) -> Bool {
            log.lines.contains { $0["class"] == "game" && $0["kind"]?.stringValue == kind }
        }
        try waitUntil("a prompt", timeout: 10) { game("prompt") }
        // Nod down (roll 30°): "correct"; back upright; tilt up (roll 150°): "skip".
        try s.setRaw(d, d.accel!, head(d, rollDeg: 30))
        try waitUntil("correct", timeout: 10) { game("correct") }
        try s.setRaw(d, d.accel!, head(d, rollDeg: 90))
        let promptsBefore = log.lines.filter { $0["kind"] == "prompt" }.count
        try waitUntil("the next prompt", timeout: 10) {
            log.lines.filter { $0["kind"] == "prompt" }.count > promptsBefore
        }
        try s.setRaw(d, d.accel!, head(d, rollDeg: 150))
        try waitUntil("skip", timeout: 10) { game("skip") }
        let decisions = log.lines.filter { $0["class"] == "game" && ($0["kind"] == "correct" || $0["kind"] == "skip") }
        XCTAssertEqual(decisions.compactMap { $0["kind"]?.stringValue }, ["correct", "skip"])
        XCTAssertEqual(decisions.last?["score"]?.intValue, 1)
    }
}

/// Records every line a client receives, on its own thread.
final class EventLog: @unchecked Sendable {
    private let store = Mutex<[JSONValue]>([])
    private let stopped = Atomic<Bool>(false)
    private let client: LineClient

    init(_ client: LineClient) {
        self.client = client
        Thread.detachNewThread { [self] in
            while !stopped.load(ordering: .relaxed) {
                do {
                    guard let v = try client.readJSON(timeout: 0.2) else { return }  // closed
                    store.withLock { $0.append(v) }
                } catch {
                    continue  // nothing within 0.2 s: check `stopped` again
                }
            }
        }
    }

    var lines: [JSONValue] { store.withLock { $0 } }
    var attitudes: [JSONValue] { lines.filter { $0["class"] == "attitude" } }
    func stop() { stopped.store(true, ordering: .relaxed) }
}

/// Plays a device's kernel side in real time: a scan every period, on a clock that the test can
/// step (as NTP steps CLOCK_REALTIME).
final class PacedFeeder: @unchecked Sendable {
    private let offset = Atomic<Int64>(0)
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)

    init(writer: ScanWriter, device: FakeIIODevice, rateHz: Double, accel: [Int64], t0: Int64) {
        let period = Int64(1e9 / rateHz)
        // Only this thread writes after init: handing the writer over is safe.
        nonisolated(unsafe) let writer = writer
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            let start = DispatchTime.now().uptimeNanoseconds
            var i: Int64 = 0
            while !stopped.load(ordering: .relaxed) {
                // Two scans per write, as a FIFO watermark of two would deliver them.
                let scans = (0..<2).map { k in
                    ScanWriter.scan(
                        t: t0 + (i + k) * period + offset.load(ordering: .relaxed), accel: accel, gyro: [0, 0, 0])
                }
                guard (try? writer.write(scans)) != nil else { return }
                i += 2
                let due = start + UInt64(i * period)
                let now = DispatchTime.now().uptimeNanoseconds
                if due > now { usleep(UInt32((due - now) / 1000)) }
            }
        }
    }

    /// Steps the device's clock by `ns` from the next scan on.
    func step(by ns: Int64) { offset.add(ns, ordering: .relaxed) }

    func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        _ = done.wait(timeout: .now() + 3)
    }
}
