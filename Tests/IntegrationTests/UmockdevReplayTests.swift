// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltProtocol
import XCTest

/// The real daemon under `umockdev-run`, on an MPU-6050 described in umockdev's own formats
/// (`Fixtures/umockdev`: its sysfs, and the reads of `/dev/iio:device0`): umockdev's preload
/// library gives tiltd and libiio that sysfs and replays the scans through the data node, so
/// nothing of the fake-hardware namespace is involved, and no root is needed. The recording's
/// stamps step back an hour after 4 s while tiltd believes it switched the timestamp clock to
/// monotonic (issue 38: a replay like it once gave 8 attitude lines in 9 s, then nothing).
final class UmockdevReplayTests: XCTestCase {
    private var dir = ""
    private var daemon: DaemonProcess?
    private var log: EventLog?

    static let fixtures = "\(repositoryRoot)/Tests/IntegrationTests/Fixtures/umockdev"

    /// umockdev-run on PATH (or in /usr/bin), nil when umockdev is not installed.
    static var umockdevRun: String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        return (path.split(separator: ":").map(String.init) + ["/usr/bin"])
            .map { "\($0)/umockdev-run" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    override func setUpWithError() throws {
        guard Self.umockdevRun != nil else {
            let reason =
                "umockdev-run is not installed (Debian package umockdev; scripts/install-deps --test): "
                + "the umockdev replay of the clock-step-back MPU-6050 is not run"
            print("UmockdevReplayTests: skipping: \(reason)")
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("umockdev required in CI: \(reason)") }
            throw XCTSkip(reason)
        }
        dir = makeTempDir("um")
    }

    override func tearDown() {
        log?.stop()
        if let daemon {
            XCTAssertEqual(daemon.stop(), 0, daemon.log)
            if (testRun?.totalFailureCount ?? 0) > 0 { print("tiltd log:\n\(daemon.log)") }
        }
        try? FileManager.default.removeItem(atPath: dir)
        super.tearDown()
    }

    func testReplayedMPU6050WhoseStampsStepBackAnHourKeepsStreaming() throws {
        let run = try XCTUnwrap(Self.umockdevRun)
        let config = try writeDaemonConfig(in: dir, "[imu]\nrate_hz = 50")
        // The script starts playing when umockdev-run has built the testbed; scans that come
        // before tiltd opens the data node wait in it, as in a kernel FIFO.
        daemon = try DaemonProcess(
            ["run", "--config", config],
            launcher: [
                run, "--device", "\(Self.fixtures)/mpu6050.umockdev",
                "--script", "/dev/iio:device0=\(Self.fixtures)/mpu6050-step-back.script", "--",
            ],
            logPath: "\(dir)/log")
        try waitUntil("tiltd's socket", timeout: 15) { FileManager.default.fileExists(atPath: "\(dir)/tiltd.sock") }
        let observer = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)
        try observer.send(#"{"cmd":"watch","id":1,"attitude_hz":1000}"#)
        let log = EventLog(observer)
        self.log = log
        let client = try LineClient(path: "\(dir)/tiltd.sock", timeout: 15)

        // Buffered from the recorded data node, on a clock tiltd set to monotonic.
        try waitUntil("attitude flowing", timeout: 15) { log.attitudes.count >= 25 }
        let st = try client.request(#"{"cmd":"status","id":2}"#, id: 2)
        let imu = try XCTUnwrap(st["sources"]?.arrayValue?.first { $0["source"] == "imu" }, st.jsonText)
        let message = imu["message"]?.stringValue ?? ""
        XCTAssertTrue(message.hasPrefix("buffered"), imu.jsonText)
        XCTAssertTrue(message.contains("trigger mpu6050-dev0"), imu.jsonText)
        XCTAssertTrue(message.contains("timestamps CLOCK_MONOTONIC"), imu.jsonText)

        // The whole recording (600 scans), until tiltd says no scan came for a second.
        try waitUntil("the recording's end (no data for 1 s)", timeout: 30) {
            log.lines.contains { $0["class"] == "status" && $0["state"] == "no_data" }
        }
        let lines = log.lines
        let steps = lines.filter { $0["class"] == "status" && $0["state"] == "clock_step" }
        let step = lines.firstIndex { $0["class"] == "status" && $0["state"] == "clock_step" } ?? lines.count
        let before = lines[..<step].filter { $0["class"] == "attitude" }
        let after = lines[step...].filter { $0["class"] == "attitude" }
        let rolls = after.compactMap { $0["roll_deg"]?.doubleValue }
        let swing = (rolls.max() ?? 0) - (rolls.min() ?? 0)
        print(
            "UmockdevReplayTests: \(before.count) attitude lines before the step back, \(after.count) after "
                + "(\(String(format: "%.1f", swing))° of roll swing after it); "
                + (steps.first?.jsonText ?? "no clock_step line"))

        // One step, of the recording's size: the replay's own pace (umockdev sleeps between
        // reads, so it lags the stamps a little) is no step on a clock believed monotonic.
        XCTAssertEqual(steps.count, 1, steps.map(\.jsonText).joined(separator: "\n"))
        XCTAssertEqual(Double(steps.first?["step_ns"]?.intValue ?? 0) / 1e9, -3600, accuracy: 1)
        XCTAssertGreaterThanOrEqual(before.count, 100, "attitude lines before the step (200 scans)")
        XCTAssertGreaterThanOrEqual(after.count, 390, "attitude lines after the step (400 scans)")
        guard after.count > 1 else { return }

        // t_ns never decreases, and after the step advances 20 ms a line as the stamps do.
        let times = (before + after).compactMap { $0["t_ns"]?.intValue }
        XCTAssertEqual(zip(times, times.dropFirst()).filter { $1 <= $0 }.count, 0, "t_ns went back or stood still")
        let afterTimes = after.compactMap { $0["t_ns"]?.intValue }
        let spanS = Double(afterTimes.last! - afterTimes.first!) / 1e9
        XCTAssertEqual(
            Double(afterTimes.count - 1) / spanS, 50, accuracy: 1, "\(afterTimes.count) lines over \(spanS) s")

        // The attitude after the step is still the recording's: the board rolls ±20°.
        XCTAssertEqual(swing, 40, accuracy: 3, "roll swing after the step")
    }
}
