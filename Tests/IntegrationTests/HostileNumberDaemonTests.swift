// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// Numbers the parsers accept but the arithmetic behind them could not hold, sent to the real
/// daemon: `{"cmd":"watch","attitude_hz":1e-10}` once ended it (a period of 1e19 ns converted to
/// Int64). The daemon must answer, pace attitude as a very slow rate, and answer `ping` after.
final class HostileNumberDaemonTests: ReplayDaemonTestCase {
    override var tempTag: String { "hostile" }

    func startDaemon(socketKeys: String = "") throws -> LineClient {
        try writeConfig(socketKeys: socketKeys)
        return try startReplayDaemon()
    }

    func testTinyAttitudeRatesFromAClientAreASlowPaceNotACrash() throws {
        let c = try startDaemon()
        _ = try c.next("attitude", timeout: 10)
        var id = 1
        for hz in ["1e-10", "1e-300", "5e-324", "2.2250738585072014e-308", "1000"] {
            let reply = try c.request(#"{"cmd":"watch","id":\#(id),"attitude_hz":\#(hz)}"#, id: id)
            XCTAssertEqual(reply["ok"], .bool(true), "attitude_hz \(hz): \(reply)")
            id += 1
            let pong = try c.request(#"{"cmd":"ping","id":\#(id)}"#, id: id)
            XCTAssertEqual(pong["ok"], .bool(true), "ping after attitude_hz \(hz): \(pong)")
            id += 1
        }
        XCTAssertTrue(daemon!.isRunning, "the daemon still runs; log:\n\(daemon!.log)")
    }

    func testATinyAttitudeRateInTheConfigStartsTheDaemon() throws {
        let c = try startDaemon(socketKeys: "attitude_hz = 1e-300")
        let pong = try c.request(#"{"cmd":"ping","id":1}"#, id: 1)
        XCTAssertEqual(pong["ok"], .bool(true), "\(pong)")
        // At one line a day, the first attitude line comes and then no other for the test's life.
        _ = try c.next("attitude", timeout: 10)
        XCTAssertTrue(daemon!.isRunning, "the daemon still runs; log:\n\(daemon!.log)")
    }
}
