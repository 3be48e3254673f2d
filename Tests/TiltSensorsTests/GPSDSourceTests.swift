// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

@testable import TiltSensors

/// GPSDSource against the real gpsd, fed NMEA by scripts/nmea-source over loopback TCP.
final class GPSDSourceTests: XCTestCase {
    private var rig: GPSDRig?
    private var collector: FixCollector?

    override func setUpWithError() throws {
        try GPSDRig.requireGPSD { XCTSkip($0) }
        rig = try GPSDRig()
    }

    override func tearDown() {
        if let collector, !collector.stopAndWait() {
            XCTFail("GPSDSource.run did not return within 5 s of stop")
        }
        rig?.tearDown()
        collector = nil
        rig = nil
    }

    private func source(_ rig: GPSDRig) -> GPSDSource {
        GPSDSource(
            config: GPSDConfig(
                port: rig.gpsdPort, pollInterval: 0.1,
                backoff: Backoff(initial: 0.2, maximum: 1), silenceTimeout: 1.5))
    }

    private func lines(_ track: [TrackPoint]) -> [String] {
        track.flatMap {
            NMEA.epoch(
                time: $0.time, lat: $0.lat, lon: $0.lon, altMSL: $0.altMSL,
                speed: $0.speed, track: $0.track)
        }
    }

    /// Checks a fix against the epoch with its time; returns false when the fix has no time.
    private func assertMatches(_ fix: Fix, _ track: [TrackPoint], file: StaticString = #filePath, line: UInt = #line) {
        guard let time = fix.time else { return XCTFail("fix without time: \(fix)", file: file, line: line) }
        guard let point = track.first(where: { $0.time * 1_000_000_000 == time }) else {
            return XCTFail("fix time \(time) is not in the track", file: file, line: line)
        }
        XCTAssertEqual(fix.lat ?? .nan, point.lat, accuracy: 1e-6, file: file, line: line)
        XCTAssertEqual(fix.lon ?? .nan, point.lon, accuracy: 1e-6, file: file, line: line)
        if let speed = fix.speed { XCTAssertEqual(speed, point.speed, accuracy: 0.01, file: file, line: line) }
        if let track = fix.track { XCTAssertEqual(track, point.track, accuracy: 0.05, file: file, line: line) }
        if let alt = fix.alt { XCTAssertEqual(alt, point.altMSL, accuracy: 0.05, file: file, line: line) }
    }

    private func assertNoNaN(_ fixes: [Fix], file: StaticString = #filePath, line: UInt = #line) {
        for fix in fixes {
            for value in [fix.lat, fix.lon, fix.alt, fix.speed, fix.track, fix.eph, fix.epv] {
                if let value { XCTAssertTrue(value.isFinite, "non-finite field in \(fix)", file: file, line: line) }
            }
        }
    }

    func testFixesCarryTheReceiversValues() throws {
        let rig = try XCTUnwrap(rig)
        let track = testTrack(count: 200)
        try rig.startReceiver(lines: lines(track), interval: 0.05)
        try rig.startGPSD()
        let collector = FixCollector(running: source(rig))
        self.collector = collector

        XCTAssertTrue(
            waitFor(15) { collector.fixes.filter { $0.mode == 3 && $0.speed != nil }.count >= 10 },
            "no 10 full 3D fixes within 15 s; outputs: \(collector.all)")
        let fixes = collector.fixes
        assertNoNaN(fixes)
        for fix in fixes where fix.mode >= 2 { assertMatches(fix, track) }

        let full = fixes.filter { $0.mode == 3 && $0.speed != nil }
        XCTAssertTrue(full.allSatisfy { $0.alt != nil && $0.track != nil && $0.eph != nil }, "\(full)")
        // Times come from the sentences (2024-05-01), not from the wall clock, and increase.
        let times = full.compactMap(\.time)
        XCTAssertEqual(times.count, full.count)
        XCTAssertEqual(times, times.sorted())
        XCTAssertTrue(times.allSatisfy { $0 >= track[0].time * 1_000_000_000 })

        // starting (connecting), starting (connected), then streaming before the first fix.
        let states = collector.statuses.map(\.state)
        XCTAssertEqual(states.first, .starting)
        XCTAssertEqual(states.filter { $0 == .streaming }.count, 1, "\(collector.statuses)")
        let firstFix = try XCTUnwrap(collector.firstIndex { $0.fix != nil })
        let streaming = try XCTUnwrap(collector.firstIndex { $0.status?.state == .streaming })
        XCTAssertLessThan(streaming, firstFix)
        XCTAssertEqual(collector.statuses.first?.device, "gpsd 127.0.0.1:\(rig.gpsdPort)")
    }

    func testNoFixIsAFixWithModeOneNotAnError() throws {
        let rig = try XCTUnwrap(rig)
        let start: Int64 = 1_714_564_800
        try rig.startReceiver(lines: (0..<200).flatMap { NMEA.noFixEpoch(time: start + Int64($0)) }, interval: 0.05)
        try rig.startGPSD()
        let collector = FixCollector(running: source(rig))
        self.collector = collector

        XCTAssertTrue(
            waitFor(15) { collector.fixes.contains { $0.mode == 1 } },
            "no mode-1 fix within 15 s; outputs: \(collector.all)")
        let fixes = collector.fixes
        assertNoNaN(fixes)
        XCTAssertTrue(fixes.allSatisfy { $0.mode <= 1 }, "\(fixes)")
        XCTAssertTrue(
            fixes.allSatisfy { $0.lat == nil && $0.lon == nil && $0.speed == nil && !$0.hasPosition },
            "\(fixes)")
        XCTAssertFalse(collector.statuses.contains { $0.state == .retrying }, "\(collector.statuses)")
        XCTAssertTrue(collector.statuses.contains { $0.state == .streaming })
    }

    func testGPSDKilledMidStreamThenRestartedFixesResume() throws {
        let rig = try XCTUnwrap(rig)
        let track = testTrack(count: 1200)
        try rig.startReceiver(lines: lines(track), interval: 0.05)
        try rig.startGPSD()
        let collector = FixCollector(running: source(rig))
        self.collector = collector
        XCTAssertTrue(
            waitFor(15) { collector.fixes.filter { $0.mode == 3 }.count >= 5 },
            "no fixes before the kill; outputs: \(collector.all)")

        let killedAt = ContinuousClock.now
        rig.killGPSD(SIGKILL)
        let beforeKill = collector.all.count
        XCTAssertTrue(
            waitFor(10) { collector.firstIndex(after: beforeKill - 1) { $0.status?.state == .retrying } != nil },
            "no retrying status within 10 s of SIGKILL; outputs: \(collector.all.suffix(5))")
        let retrying = try XCTUnwrap(collector.firstIndex(after: beforeKill - 1) { $0.status?.state == .retrying })
        let retryStatus = try XCTUnwrap(collector.all[retrying].status)
        XCTAssertNotNil(retryStatus.retryIn)
        XCTAssertGreaterThan(retryStatus.retryIn ?? 0, 0)
        let lostAfter = killedAt.duration(to: collector.timeline[retrying].at)
        let lastTimeBefore = collector.fixes.compactMap(\.time).max() ?? 0

        let restartedAt = ContinuousClock.now
        try rig.startGPSD()
        XCTAssertTrue(
            waitFor(15) {
                guard let s = collector.firstIndex(after: retrying, where: { $0.status?.state == .streaming }) else {
                    return false
                }
                return collector.firstIndex(after: s) { ($0.fix?.time ?? 0) > lastTimeBefore } != nil
            }, "fixes did not resume within 15 s of restarting gpsd; outputs: \(collector.all.suffix(8))")
        let resumed = try XCTUnwrap(collector.firstIndex(after: retrying) { $0.fix != nil })
        let resumeAfter = restartedAt.duration(to: collector.timeline[resumed].at)
        print("gpsd SIGKILL → retrying status after \(lostAfter); restart → first fix after \(resumeAfter)")

        let fixes = collector.fixes
        assertNoNaN(fixes)
        for fix in fixes where fix.mode >= 2 { assertMatches(fix, track) }
        // Nothing but status and fixes came out, and the source never gave up.
        XCTAssertFalse(collector.hasReturned)
    }

    func testGPSDAbsentAtStartThenStarted() throws {
        let rig = try XCTUnwrap(rig)
        let track = testTrack(count: 400)
        try rig.startReceiver(lines: lines(track), interval: 0.05)
        let collector = FixCollector(running: source(rig))
        self.collector = collector

        // Nobody listens on the port: the source retries with growing delays and emits no fix.
        XCTAssertTrue(
            waitFor(10) { collector.statuses.filter { $0.state == .retrying }.count >= 3 },
            "fewer than 3 retries in 10 s; outputs: \(collector.all)")
        let retries = collector.statuses.filter { $0.state == .retrying }
        XCTAssertTrue(retries[0].message.contains("127.0.0.1:\(rig.gpsdPort)"), retries[0].message)
        // libgps's own reason (its code -6) is passed on, not a bare number.
        XCTAssertTrue(retries[0].message.hasSuffix("can't connect to host/port pair"), retries[0].message)
        let delays = retries.compactMap(\.retryIn)
        XCTAssertEqual(delays.count, retries.count)
        XCTAssertEqual(Array(delays.prefix(3)), [0.2, 0.4, 0.8])
        XCTAssertTrue(collector.fixes.isEmpty)

        let startedAt = ContinuousClock.now
        try rig.startGPSD()
        XCTAssertTrue(
            waitFor(15) { collector.fixes.contains { $0.mode == 3 } },
            "no fix within 15 s of starting gpsd; outputs: \(collector.all.suffix(8))")
        let first = try XCTUnwrap(collector.firstIndex { $0.fix != nil })
        print("gpsd started late → first fix after \(startedAt.duration(to: collector.timeline[first].at))")
        let streaming = try XCTUnwrap(collector.firstIndex { $0.status?.state == .streaming })
        XCTAssertLessThan(streaming, first)
        for fix in collector.fixes where fix.mode >= 2 { assertMatches(fix, track) }
    }

    func testSilentReceiverBehindALiveGPSDIsReportedAndFixesResume() throws {
        let rig = try XCTUnwrap(rig)
        let track = testTrack(count: 1200)
        try rig.startReceiver(lines: lines(track), interval: 0.05)
        try rig.startGPSD()
        let collector = FixCollector(running: source(rig))
        self.collector = collector
        XCTAssertTrue(waitFor(15) { collector.fixes.filter { $0.mode == 3 }.count >= 5 }, "\(collector.all)")

        // The receiver goes quiet (a stalled GPS). gpsd stays up and tells its clients nothing,
        // so only the silence shows it.
        let receiver = try XCTUnwrap(rig.receiver)
        let before = collector.all.count
        receiver.send("pause")
        XCTAssertTrue(
            waitFor(10) {
                collector.firstIndex(after: before - 1) {
                    $0.status?.state == .retrying && $0.status?.message.contains("no fix report") == true
                } != nil
            }, "silence not reported within 10 s; outputs: \(collector.all.suffix(5))")
        let silent = try XCTUnwrap(collector.firstIndex(after: before - 1) { $0.status?.state == .retrying })
        let lastTimeBefore = collector.fixes.compactMap(\.time).max() ?? 0

        receiver.send("resume")
        XCTAssertTrue(
            waitFor(15) {
                collector.firstIndex(after: silent) { ($0.fix?.time ?? 0) > lastTimeBefore } != nil
            }, "fixes did not resume after the silence; outputs: \(collector.all.suffix(8))")
        let resumed = try XCTUnwrap(collector.firstIndex(after: silent) { $0.fix != nil })
        let streaming = try XCTUnwrap(collector.firstIndex(after: silent) { $0.status?.state == .streaming })
        XCTAssertLessThan(streaming, resumed)
        for fix in collector.fixes where fix.mode >= 2 { assertMatches(fix, track) }
    }

    func testStopIsSeenWhileWaitingForData() throws {
        let rig = try XCTUnwrap(rig)
        // A receiver that is paused: gpsd is up, but no data arrives, so the source sits in gps_waiting.
        try rig.startReceiver(lines: lines(testTrack(count: 50)))
        rig.receiver?.send("pause")
        try rig.startGPSD()
        let collector = FixCollector(running: source(rig))
        self.collector = collector
        XCTAssertTrue(
            waitFor(10) { collector.statuses.contains { $0.message.hasPrefix("connected") } },
            "\(collector.all)")
        XCTAssertTrue(collector.stopAndWait(timeout: 2), "run did not return within 2 s of stop")
        XCTAssertNil(collector.error)
    }

    func testStopIsSeenDuringBackoff() throws {
        let rig = try XCTUnwrap(rig)
        let collector = FixCollector(
            running: GPSDSource(
                config: GPSDConfig(
                    port: rig.gpsdPort, backoff: Backoff(initial: 30, maximum: 30))))
        self.collector = collector
        XCTAssertTrue(waitFor(10) { collector.statuses.contains { $0.state == .retrying } }, "\(collector.all)")
        XCTAssertTrue(collector.stopAndWait(timeout: 2), "run did not return within 2 s of stop during a 30 s backoff")
    }
}

/// Name resolution failures are retried like a refused connection, with libgps's reason.
final class GPSDSourceResolutionTests: XCTestCase {
    func testUnknownHostIsRetriedWithAClearMessage() {
        let collector = FixCollector(
            running: GPSDSource(
                config: GPSDConfig(
                    host: "no-such-host.invalid", port: 2947, backoff: Backoff(initial: 0.1, maximum: 0.1))))
        defer { collector.stopAndWait() }
        XCTAssertTrue(
            waitFor(10) { collector.statuses.filter { $0.state == .retrying }.count >= 2 }, "\(collector.all)")
        let message = collector.statuses.first { $0.state == .retrying }?.message ?? ""
        XCTAssertTrue(message.contains("no-such-host.invalid:2947") && message.contains("host entry"), message)
        XCTAssertTrue(collector.fixes.isEmpty)
    }
}
