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
}
