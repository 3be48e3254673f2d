// SPDX-License-Identifier: Apache-2.0
import CLibGPS
import Foundation
import TiltCore
import TiltPlatform
import XCTest

@testable import TiltSensors

/// How a libgps fix record becomes a `Fix`, on hand-filled records (no gpsd needed).
final class GPSFixConversionTests: XCTestCase {
    /// A zeroed gps_data_t on the heap, as GPSDSource keeps it, with every double of the fix
    /// set to NaN the way libgps leaves fields a report did not carry.
    private func record(_ fill: (inout gps_fix_t) -> Void, set: gps_mask_t) -> UnsafeMutablePointer<gps_data_t> {
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        memset(data, 0, MemoryLayout<gps_data_t>.size)
        gps_clear_fix(&data.pointee.fix)
        fill(&data.pointee.fix)
        data.pointee.set = set
        return data
    }

    func testUnknownFieldsAreNilNeverNaN() {
        let data = record({ $0.mode = 1 }, set: MODE_SET | STATUS_SET)
        defer { data.deallocate() }
        let fix = GPSDSource.fix(from: data)
        XCTAssertEqual(fix, Fix(mode: 1))
        XCTAssertFalse(fix.hasPosition)
    }

    func testKnownFieldsAreCarriedOver() {
        let data = record(
            { fix in
                fix.mode = 3
                fix.time = timespec(tv_sec: 1_714_564_800, tv_nsec: 250_000_000)
                fix.latitude = -33.8568
                fix.longitude = 151.2153
                fix.altMSL = 12.5
                fix.altitude = 999  // deprecated field: must not be used
                fix.speed = 2.5
                fix.track = 271.0
                fix.eph = 4.2
                fix.epv = 6.3
            }, set: MODE_SET | TIME_SET | LATLON_SET | ALTITUDE_SET | SPEED_SET | TRACK_SET)
        defer { data.deallocate() }
        XCTAssertEqual(
            GPSDSource.fix(from: data),
            Fix(
                mode: 3, time: 1_714_564_800_250_000_000, lat: -33.8568, lon: 151.2153, alt: 12.5,
                speed: 2.5, track: 271.0, eph: 4.2, epv: 6.3))
    }

    func testHorizontalErrorFallsBackToTheAxes() {
        let both = record(
            { fix in
                fix.mode = 2; fix.latitude = 1; fix.longitude = 2
                fix.epx = 3; fix.epy = 4
            }, set: MODE_SET | LATLON_SET | HERR_SET)
        defer { both.deallocate() }
        XCTAssertEqual(GPSDSource.fix(from: both).eph ?? .nan, 5, accuracy: 1e-9)
        let one = record(
            { fix in
                fix.mode = 2; fix.latitude = 1; fix.longitude = 2
                fix.epy = 4
            }, set: MODE_SET | LATLON_SET | HERR_SET)
        defer { one.deallocate() }
        XCTAssertEqual(GPSDSource.fix(from: one).eph ?? .nan, 4 * 2.0.squareRoot(), accuracy: 1e-9)
        // eph itself wins when present.
        let eph = record(
            { fix in
                fix.mode = 2; fix.eph = 7; fix.epx = 30; fix.epy = 40
            }, set: MODE_SET | HERR_SET)
        defer { eph.deallocate() }
        XCTAssertEqual(GPSDSource.fix(from: eph).eph, 7)
    }

    func testFarFromTheSystemClockIsFlagged() {
        let now: Nanoseconds = 1_795_000_000_000_000_000  // 2026-11
        let rolledOver = now - Nanoseconds(FixTimeCheck.rolloverPeriod * 1e9)
        let offset = FixTimeCheck.offset(fixTime: rolledOver, systemTime: now)
        XCTAssertEqual(offset ?? 0, -FixTimeCheck.rolloverPeriod, accuracy: 1e-3)
        XCTAssertTrue(FixTimeCheck.describe(offset!).contains("1024 weeks behind"), FixTimeCheck.describe(offset!))
        XCTAssertNil(
            FixTimeCheck.offset(fixTime: now - 3_600_000_000_000, systemTime: now),
            "an hour is clock trouble, not flagged")
        XCTAssertNil(FixTimeCheck.offset(fixTime: nil, systemTime: now))
        let ahead = FixTimeCheck.offset(fixTime: now + 3 * 86_400_000_000_000, systemTime: now)
        XCTAssertTrue(FixTimeCheck.describe(ahead!).contains("3.0 days ahead of"), FixTimeCheck.describe(ahead!))
    }

    func testTimeNeedsTheTimeFlag() {
        let data = record(
            { fix in
                fix.mode = 2
                fix.time = timespec(tv_sec: 1_714_564_800, tv_nsec: 0)
            }, set: MODE_SET)
        defer { data.deallocate() }
        XCTAssertNil(GPSDSource.fix(from: data).time)
    }

    func testHalfAPositionIsNoPosition() {
        let data = record(
            { fix in
                fix.mode = 2
                fix.latitude = 10
            }, set: MODE_SET | LATLON_SET)
        defer { data.deallocate() }
        let fix = GPSDSource.fix(from: data)
        XCTAssertNil(fix.lat)
        XCTAssertNil(fix.lon)
    }

    func testOnlyTPVReportsAreFixes() {
        func line(_ text: String) -> [CChar] { Array(text.utf8CString) }
        XCTAssertTrue(GPSDSource.isTPV(line(#"{"class":"TPV","device":"x","mode":1}"#)))
        XCTAssertFalse(GPSDSource.isTPV(line(#"{"class":"SKY","device":"x","satellites":[]}"#)))
        XCTAssertFalse(GPSDSource.isTPV(line(#"{"class":"DEVICES","devices":[]}"#)))
        XCTAssertFalse(GPSDSource.isTPV(line("")))
    }
}

/// The `server` setting as the config gives it.
final class GPSDConfigTests: XCTestCase {
    func testServerForms() throws {
        let plain = try GPSDConfig(server: "127.0.0.1:2947")
        XCTAssertEqual(plain.host, "127.0.0.1")
        XCTAssertEqual(plain.port, 2947)
        let hostOnly = try GPSDConfig(server: "gps.local")
        XCTAssertEqual(hostOnly.host, "gps.local")
        XCTAssertEqual(hostOnly.port, 2947)
        let v6 = try GPSDConfig(server: "[::1]:3000")
        XCTAssertEqual(v6.host, "::1")
        XCTAssertEqual(v6.port, 3000)
        XCTAssertEqual(try GPSDConfig(server: "[fe80::1]").port, 2947)
    }

    func testBadServersAreClearErrors() {
        for bad in ["", ":2947", "host:", "host:0", "host:65536", "host:x", "::1:2947", "[::1", "[::1]x", "[]:1"] {
            XCTAssertThrowsError(try GPSDConfig(server: bad), bad) { error in
                XCTAssertEqual(error as? GPSDConfigError, .badServer(bad))
                XCTAssertTrue("\(error)".contains("HOST:PORT"))
            }
        }
    }
}
