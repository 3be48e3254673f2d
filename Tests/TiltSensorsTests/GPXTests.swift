// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltRecordings
import XCTest

@testable import TiltSensors

final class PlacesGPXTests: XCTestCase {
    func testParsesTrackPointsWithTimeEleHdopAndExtensions() throws {
        let text = """
            <?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment with <trkpt> inside -->
            <gpx version="1.1" creator="t&amp;t" xmlns="http://www.topografix.com/GPX/1/1" xmlns:gx="urn:x">
              <wpt lat="1" lon="2"><name>not a track point</name></wpt>
              <trk><name><![CDATA[Walk <1>]]></name><trkseg>
                <trkpt lat="52.5" lon="13.4"><ele>34.5</ele><time>2024-05-04T10:00:00Z</time><hdop>1.5</hdop>
                  <extensions><gx:TrackPointExtension><gx:speed>1.25</gx:speed><gx:course>87</gx:course></gx:TrackPointExtension></extensions>
                </trkpt>
                <trkpt lon='13.41' lat='52.51'><time>2024-05-04T12:00:01.25+02:00</time></trkpt>
                <trkpt lat="-1e-3" lon="-180"/>
              </trkseg></trk>
            </gpx>
            """
        let fixes = try GPX.parseFixes(text)
        XCTAssertEqual(fixes.count, 3)
        XCTAssertEqual(
            fixes[0],
            Fix(
                mode: 3, time: 1_714_816_800_000_000_000, lat: 52.5, lon: 13.4, alt: 34.5,
                speed: 1.25, track: 87, eph: 1.5 * GPX.ephPerHDOP))
        // Points without a course get the bearing from the point before (`withCourse`).
        let a = GeoPoint(lat: 52.5, lon: 13.4), b = GeoPoint(lat: 52.51, lon: 13.41),
            c = GeoPoint(lat: -0.001, lon: -180)
        XCTAssertEqual(
            fixes[1],
            Fix(mode: 2, time: 1_714_816_801_250_000_000, lat: 52.51, lon: 13.41, track: Geo.bearing(from: a, to: b)))
        XCTAssertEqual(fixes[2], Fix(mode: 2, lat: -0.001, lon: -180, track: Geo.bearing(from: b, to: c)))
    }

    func testACourseComesFromTheNearestPointAtLeastTwoMetresBack() throws {
        // A walk north along a meridian in 1.1 m steps (about 1e-5° of latitude), then a given
        // course: the first two points have none (nothing 2 m back), every later one has one,
        // from the nearest point 2 m back (not only every other point, from the last one that
        // got a course), and a course in the file wins.
        var points = (0..<6).map { "<trkpt lat=\"\(52.5 + Double($0) * 1e-5)\" lon=\"13.4\"/>" }
        points.append(#"<trkpt lat="52.5" lon="13.4"><course>123</course></trkpt>"#)
        let fixes = try GPX.parseFixes(
            "<gpx><trk><trkseg>\(points.joined())</trkseg></trk></gpx>")
        XCTAssertEqual(fixes.map { $0.track == nil }, [true, true, false, false, false, false, false])
        for f in fixes[2...5] { XCTAssertEqual(try XCTUnwrap(f.track), 0, accuracy: 1e-6, "due north") }
        XCTAssertEqual(fixes[6].track, 123)
    }

    func testTimes() {
        XCTAssertEqual(GPX.parseTime("1970-01-01T00:00:00Z"), 0)
        XCTAssertEqual(GPX.parseTime("2000-02-29T23:59:59.123456789Z"), 951_868_799_123_456_789)
        XCTAssertEqual(GPX.parseTime("1969-12-31T23:00:00-01:00"), 0)
        for bad in ["2024-13-01T00:00:00Z", "2024-05-04 10:00", "2024-05-04T10:00:00Zjunk", "", "2024-05-04T10:00:00."]
        {
            XCTAssertNil(GPX.parseTime(bad), bad)
        }
    }

    func testErrorsNameTheLine() {
        let cases: [(String, String)] = [
            (
                "<gpx><trk><trkseg>\n<trkpt lat=\"x\" lon=\"1\"></trkpt></trkseg></trk></gpx>",
                "GPX line 2: bad lat \"x\""
            ),
            ("<kml></kml>", "GPX line 1: root element is <kml>, not <gpx>"),
            (
                "<gpx><trk><trkseg>\n\n<trkpt lat=\"1\" lon=\"1\"><time>noon</time></trkpt></trkseg></trk></gpx>",
                "GPX line 3: bad <time> \"noon\" (want ISO 8601 like 2024-05-01T10:00:00Z)"
            ),
            ("<gpx><trk>\n</trkseg></gpx>", "GPX line 2: </trkseg> does not close <trk>"),
            ("<gpx><trk><trkseg>", "GPX line 1: file ends inside <trkseg>"),
            ("<gpx><!-- open", "GPX line 1: unterminated comment"),
            ("", "GPX line 1: no <gpx> element"),
        ]
        for (text, message) in cases {
            XCTAssertThrowsError(try GPX.parseFixes(text)) { XCTAssertEqual("\($0)", message) }
        }
    }
}
