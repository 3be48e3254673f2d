// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// The real `tiltd run` with `[gps]` pointing at a real gpsd, which reads NMEA from the stand-in
/// receiver (scripts/nmea-source) over loopback TCP: fixes reach a socket client with the
/// receiver's values, and survive gpsd being killed and restarted under the same connection.
final class GPSDaemonTests: XCTestCase {
    var dir = ""
    var rig: GPSDRig?
    var daemon: DaemonProcess?

    override func setUpWithError() throws {
        try GPSDRig.requireGPSD { XCTSkip($0) }
        dir = makeTempDir("gps")
        rig = try GPSDRig()
    }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        rig?.tearDown()
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Checks a `fix` event against the track epoch with the same time.
    func assertFix(_ fix: JSONValue, in track: [TrackPoint], file: StaticString = #filePath, line: UInt = #line) {
        guard let t = fix["time_ns"]?.intValue, let point = track.first(where: { $0.time * 1_000_000_000 == t }) else {
            return XCTFail("fix time not in the track: \(fix)", file: file, line: line)
        }
        XCTAssertEqual(fix["lat"]?.doubleValue ?? .nan, point.lat, accuracy: 1e-6, "\(fix)", file: file, line: line)
        XCTAssertEqual(fix["lon"]?.doubleValue ?? .nan, point.lon, accuracy: 1e-6, "\(fix)", file: file, line: line)
        if let speed = fix["speed_mps"]?.doubleValue {
            XCTAssertEqual(speed, point.speed, accuracy: 0.01, "\(fix)", file: file, line: line)
        }
    }

    func testFixesReachClientsAndResumeAfterGPSDIsKilledAndRestarted() throws {
        let rig = try XCTUnwrap(rig)
        // 1200 epochs at 20 per second: a minute of stream, far more than the test needs.
        let track = testTrack(count: 1200)
        try rig.startReceiver(lines: track.flatMap(\.sentences), interval: 0.05)
        try rig.startGPSD()
        let config = try writeDaemonConfig(in: dir, "[gps]\nenabled = true\nserver = \"127.0.0.1:\(rig.gpsdPort)\"")
        let d = try DaemonProcess(["run", "--config", config], logPath: "\(dir)/log")
        daemon = d
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")

        // Fixes with the receiver's values: 3D, with speed, at the epoch's time.
        var fixes: [JSONValue] = []
        try waitUntil("10 fixes with speed", timeout: 20) {
            let f = try c.next("fix", timeout: 20)
            fixes.append(f)
            return fixes.filter { $0["mode"] == .int(3) && $0["speed_mps"] != nil }.count >= 10
        }
        for f in fixes where (f["mode"]?.intValue ?? 0) >= 2 { assertFix(f, in: track) }
        let times = fixes.compactMap { $0["time_ns"]?.intValue }
        XCTAssertEqual(times, times.sorted(), "fix times increase")
        let lastBefore = try XCTUnwrap(times.last)

        // SIGKILL gpsd mid-stream: the same client hears that gps is retrying.
        let killedAt = ContinuousClock.now
        rig.killGPSD(SIGKILL)
        let retrying = try c.next("status", timeout: 15) { $0["source"] == "gps" && $0["state"] == "retrying" }
        let lostAfter = killedAt.duration(to: .now)
        XCTAssertNotNil(retrying["retry_in_s"]?.doubleValue, "\(retrying)")
        XCTAssertTrue(d.isRunning, "tiltd exited when gpsd died:\n\(d.log)")

        // Restart gpsd: streaming again, then fixes newer than before the kill, on the same connection.
        let restartedAt = ContinuousClock.now
        try rig.startGPSD()
        _ = try c.next("status", timeout: 20) { $0["source"] == "gps" && $0["state"] == "streaming" }
        let resumed = try c.next("fix", timeout: 10) { ($0["time_ns"]?.intValue ?? 0) > lastBefore }
        let resumeAfter = restartedAt.duration(to: .now)
        assertFix(resumed, in: track)
        var after: [JSONValue] = [resumed]
        while after.count < 5 { after.append(try c.next("fix", timeout: 10)) }
        for f in after where (f["mode"]?.intValue ?? 0) >= 2 { assertFix(f, in: track) }

        // A client connecting now sees the latest fix in its hello.
        let c2 = try LineClient(path: "\(dir)/tiltd.sock")
        let hello = try c2.next("hello")
        XCTAssertNotNil(hello["fix"]?["lat"]?.doubleValue, "\(hello)")
        print("tiltd: gpsd SIGKILL → status retrying after \(lostAfter); gpsd restart → fixes after \(resumeAfter)")
        XCTAssertEqual(d.stop(), 0, d.log)
    }
}
