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

        f.onLoop { f.engine.ingest(status: SourceStatus(source: "imu", state: .streaming, message: "test", rateHz: 60)) }
        f.publishAttitudes(10, from: 50_000_000_000)
        let ok = try c.request(#"{"cmd":"game.start","id":2}"#, id: 2)
        XCTAssertEqual(ok["ok"], .bool(true), ok.jsonText)
        let started = try c.next("game") { $0["kind"] == "round_started" }
        XCTAssertEqual(started["t_ns"]?.intValue, 50_000_000_000 + Int64(9.0 * 1e9 / 60))

        // An IMU outage: refused again until it streams.
        _ = try c.request(#"{"cmd":"game.stop","id":3}"#, id: 3)
        f.onLoop { f.engine.ingest(status: SourceStatus(source: "imu", state: .retrying, message: "iio:device0 vanished", retryIn: 1)) }
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
}
