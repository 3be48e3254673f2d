// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// The heading from the real daemon: a recording without a magnetometer and a GPX walk in
/// WMM2025's years with a course, so the course is the heading and the model gives the
/// declination (and the sampler its magnetic reference).
final class HeadingDaemonTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("heading") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// 120 points a second apart from 2026-06-01T12:00:00Z, walking north-east (course 45°) at
    /// 1.4 m/s from 48.137° N 11.575° E.
    static func walk() -> String {
        var points = ""
        for i in 0..<120 {
            let d = 1.4 * Double(i)
            let p = Geo.destination(from: GeoPoint(lat: 48.137, lon: 11.575), distance: d, bearing: 45)
            let s = String(i % 60).count == 1 ? "0\(i % 60)" : "\(i % 60)"
            points += """
                <trkpt lat="\(p.lat)" lon="\(p.lon)"><ele>520</ele><time>2026-06-01T12:0\(i / 60):\(s)Z</time>\
                <extensions><gpxtpx:TrackPointExtension><gpxtpx:speed>1.4</gpxtpx:speed>\
                <gpxtpx:course>45</gpxtpx:course></gpxtpx:TrackPointExtension></extensions></trkpt>

                """
        }
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="HeadingDaemonTests" xmlns="http://www.topografix.com/GPX/1/1" \
            xmlns:gpxtpx="http://www.garmin.com/xmlschemas/TrackPointExtension/v1">
            <trk><trkseg>
            \(points)</trkseg></trk></gpx>

            """
    }

    func testTheCourseIsTheHeadingAndTheModelGivesTheMagneticOne() throws {
        try Self.walk().write(toFile: "\(dir)/walk.gpx", atomically: true, encoding: .utf8)
        let config = try writeDaemonConfig(in: dir)
        let d = try DaemonProcess(
            [
                "run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--gpx",
                "\(dir)/walk.gpx", "--gpx-speed", "4",
            ], logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        let fix = try c.next("fix", timeout: 15) { $0["lat"] != nil }
        let a = try c.next("attitude", timeout: 10) { $0["heading_source"] == "course" }
        let lat = try XCTUnwrap(fix["lat"]?.doubleValue), lon = try XCTUnwrap(fix["lon"]?.doubleValue)
        let year = WorldMagneticModel.decimalYear(unixNanoseconds: try XCTUnwrap(fix["time_ns"]?.intValue))
        let declination = WorldMagneticModel.wmm2025.declination(
            latitude: lat, longitude: lon, height: 0.52, decimalYear: year)
        XCTAssertEqual(a["true_heading_deg"]?.doubleValue, 45, a.jsonText)
        XCTAssertEqual(a["heading_deg"]?.doubleValue ?? .nan, 45 - declination, accuracy: 0.06, a.jsonText)
        XCTAssertNil(a["mag_disturbed"], "no magnetometer: \(a.jsonText)")
        XCTAssertNotNil(a["yaw_deg"], a.jsonText)
        let status = try c.request(#"{"cmd":"status","id":1}"#, id: 1)
        XCTAssertEqual(
            status["heading"]?["declination_deg"]?.doubleValue ?? .nan, declination, accuracy: 0.02, status.jsonText)
        XCTAssertEqual(status["heading"]?["model"], "WMM-2025")
        // The sampler got the model's field there as its magnetic reference (Munich: ~48 µT, dip ~64°).
        try waitUntil("the seed's log line") { d.log.contains("magnetic reference from WMM-2025 at the fix") }
        XCTAssertEqual(d.stop(), 0, d.log)
    }
}
