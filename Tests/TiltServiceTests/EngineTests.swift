// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltSensors
import XCTest

@testable import TiltService

final class EngineTests: XCTestCase {
    /// A round's clock is sample time: it cannot start before samples flow, or it would start
    /// at a stale time and the first sample would end it.
    func testGameStartNeedsStreamingSamples() throws {
        let f = try ServerFixture()
        let c = try LineClient(path: f.path)
        _ = try c.next("hello")
        let early = try c.request(#"{"cmd":"game.start","id":1}"#, id: 1)
        XCTAssertEqual(early["error"]?["code"], "unavailable")
        XCTAssertTrue(early["error"]?["message"]?.stringValue?.contains("no IMU samples yet") ?? false, early.jsonText)

        f.onLoop {
            f.engine.ingest(status: SourceStatus(source: "imu", state: .streaming, message: "test", rateHz: 60))
        }
        f.publishAttitudes(10, from: 50_000_000_000)
        let ok = try c.request(#"{"cmd":"game.start","id":2}"#, id: 2)
        XCTAssertEqual(ok["ok"], .bool(true), ok.jsonText)
        let started = try c.next("game") { $0["kind"] == "round_started" }
        XCTAssertEqual(started["t_ns"]?.intValue, 50_000_000_000 + Int64(9.0 * 1e9 / 60))

        // An IMU outage: refused again until it streams.
        _ = try c.request(#"{"cmd":"game.stop","id":3}"#, id: 3)
        f.onLoop {
            f.engine.ingest(
                status: SourceStatus(source: "imu", state: .retrying, message: "iio:device0 vanished", retryIn: 1))
        }
        let during = try c.request(#"{"cmd":"game.start","id":4}"#, id: 4)
        XCTAssertEqual(during["error"]?["code"], "unavailable")
        XCTAssertTrue(during["error"]?["message"]?.stringValue?.contains("vanished") ?? false, during.jsonText)
    }

    /// `t_ns` of a fix is GPS time: a fix without GPS time has none, never the IMU's clock, and
    /// the fix carries only the fields its source gave.
    func testFixWithoutGPSTimeHasNoSampleTime() throws {
        let f = try ServerFixture()
        let c = try LineClient(path: f.path)
        _ = try c.next("hello")
        f.publishAttitudes(5, from: 50_000_000_000)
        f.onLoop { f.engine.ingest(fix: Fix(mode: 2, lat: 52.5, lon: 13.4)) }
        let untimed = try c.next("fix")
        XCTAssertNil(untimed["t_ns"], untimed.jsonText)
        XCTAssertNil(untimed["time_ns"], untimed.jsonText)
        XCTAssertNil(untimed["speed_mps"], untimed.jsonText)
        f.onLoop { f.engine.ingest(fix: Fix(mode: 2, time: 1_714_564_800_000_000_000, lat: 52.50001, lon: 13.4)) }
        let timed = try c.next("fix")
        XCTAssertEqual(timed["t_ns"]?.intValue, 1_714_564_800_000_000_000, timed.jsonText)
        f.onLoop { f.engine.ingest(fix: Fix(mode: 2, time: 1_714_564_801_000_000_000, lat: 52.50006, lon: 13.4)) }
        let next = try c.next("fix")
        XCTAssertNil(next["speed_mps"], "not computed from the two positions: \(next.jsonText)")
        XCTAssertNil(next["track_deg"], next.jsonText)
    }

    /// `stats` counts lines dropped for slow clients per class (from the dropped lines'
    /// own class), samples and rounds, and says how long the daemon has been up.
    func testStatsCountDropsPerClassSamplesAndRounds() throws {
        let f = try ServerFixture {
            $0.queueLines = 16; $0.attitudeHz = 1000
        }
        let stalled = try LineClient(path: f.path)
        let c = try LineClient(path: f.path)
        try waitUntil("two clients") { f.onLoop { f.hub.value.clientCount } == 2 }
        _ = try c.request(#"{"cmd":"watch","id":1,"attitude_hz":0}"#, id: 1)
        f.onLoop {
            f.engine.ingest(status: SourceStatus(source: "imu", state: .streaming, message: "test", rateHz: 60))
        }
        // Far more than the stalled client's socket buffer and queue can hold.
        for chunk in 0..<20 { f.publishAttitudes(1000, from: 1_000_000_000 + Int64(chunk) * 100_000_000_000) }
        _ = try c.request(#"{"cmd":"game.start","id":2}"#, id: 2)
        // Every line the stalled client lost so far (each drop removes its oldest: an attitude).
        let dropped = f.onLoop { f.hub.value.sessions.map(\.droppedTotal).max() ?? 0 }
        XCTAssertGreaterThan(dropped, 0)
        let stats = try c.request(#"{"cmd":"stats","id":3}"#, id: 3)
        XCTAssertEqual(stats["ok"], .bool(true), stats.jsonText)
        XCTAssertEqual(stats["lines_dropped"]?["attitude"]?.intValue, Int64(dropped), stats.jsonText)
        XCTAssertEqual(stats["lines_dropped"]?["game"]?.intValue, 0, stats.jsonText)
        XCTAssertEqual(stats["samples"]?.intValue, 20_000)
        XCTAssertEqual(stats["samples_dropped"]?.intValue, 0)
        XCTAssertEqual(stats["rounds"]?["started"]?.intValue, 1)
        XCTAssertEqual(stats["decisions"]?["correct"]?.intValue, 0)
        XCTAssertGreaterThanOrEqual(stats["uptime_s"]?.doubleValue ?? -1, 0)
        XCTAssertNil(stats["fix_age_s"], "no fix yet")
        XCTAssertEqual(stats["reloads"]?["applied"]?.intValue, 0)
        _ = stalled
    }
}
