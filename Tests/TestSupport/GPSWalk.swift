// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A made-up walk past a row of small credit-earning geofences, for the daemon's credit, crash
/// and full-disk tests: the same track can be written as a GPX file (`tiltd run --gpx`) or as
/// NMEA epochs for the stand-in receiver behind a real gpsd.
///
/// The walk stops at a row of places 300 m apart on one parallel (far more than a fence's radius
/// plus its exit ring); `perStop` fences share each place, so one fix enters, dwells at or leaves
/// all of them at once — a burst of store writes. At each place: one fix well outside (west),
/// `staySeconds` fixes at the centre, one fix well outside (east); fixes are one second apart in
/// fix time, so a fence with `dwell_s` below `staySeconds − 1` earns exactly one credit per visit.
public struct GPSWalk: Sendable {
    /// One fence on the walk.
    public struct Fence: Sendable, Equatable {
        /// The `[[geofence]]` name; its key in events and the ledger is "geofence:<name>".
        public var name: String
        /// Centre latitude, degrees.
        public var lat: Double
        /// Centre longitude, degrees.
        public var lon: Double
        /// The key the daemon gives this fence.
        public var key: String { "geofence:\(name)" }
    }

    /// Every fence, in the order the walk visits them.
    public let fences: [Fence]
    /// The fixes, in order.
    public private(set) var points: [TrackPoint] = []
    /// For each fence, the index in `points` of its first fix at the centre (the visit's enter).
    public private(set) var enterIndex: [Int] = []

    static let metresPerDegree = 111_320.0

    /// - Parameters:
    ///   - count: number of fences, named "\(prefix)1", "\(prefix)2", …
    ///   - perStop: fences sharing one place (fence k is at place k / perStop).
    ///   - idleAfter: for a place index, seconds of fixes to add after it, 100 m south of the row
    ///     (outside every fence): room for a test to act between groups of visits.
    public init(
        count: Int, prefix: String = "stop", perStop: Int = 1, lat: Double = 47.3700, lon: Double = 8.5400,
        staySeconds: Int = 4, idleAfter: [Int: Int] = [:], start: Int64 = 1_714_564_800
    ) {
        let dLon = 300 / (Self.metresPerDegree * cos(lat * .pi / 180))
        fences = (0..<count).map { Fence(name: "\(prefix)\($0 + 1)", lat: lat, lon: lon + Double($0 / perStop) * dLon) }
        var t = start
        let outside = dLon / 3
        func add(_ la: Double, _ lo: Double) {
            points.append(TrackPoint(time: t, lat: la, lon: lo, altMSL: 400, speed: 1.4, track: 90))
            t += 1
        }
        let places = (count + perStop - 1) / perStop
        for k in 0..<places {
            let f = fences[k * perStop]
            add(f.lat, f.lon - outside)
            for _ in k * perStop..<min(count, (k + 1) * perStop) { enterIndex.append(points.count) }
            for _ in 0..<staySeconds { add(f.lat, f.lon) }
            add(f.lat, f.lon + outside)
            for _ in 0..<(idleAfter[k] ?? 0) { add(f.lat - 100 / Self.metresPerDegree, f.lon + outside) }
        }
    }

    /// The request id the daemon gives the credit for visiting fence `k` ("dwell:<key>:<enter ns>").
    public func creditRequestId(_ k: Int) -> String {
        "dwell:\(fences[k].key):\(points[enterIndex[k]].time * 1_000_000_000)"
    }

    /// `[[geofence]]` tables for every fence: credit-earning, no cooldown.
    public func geofenceTOML(radius: Double = 20, dwell: Double = 1, cooldown: Double = 0) -> String {
        fences.map { s in
            """
            [[geofence]]
            name = "\(s.name)"
            lat = \(s.lat)
            lon = \(s.lon)
            radius_m = \(radius)
            dwell_s = \(dwell)
            cooldown_s = \(cooldown)
            credit = true

            """
        }.joined()
    }

    /// The walk as a GPX 1.1 track (with hdop 0.9, like the NMEA epochs).
    public func gpx() -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var out = """
            <?xml version="1.0" encoding="UTF-8"?>
            <gpx version="1.1" creator="tiltd tests" xmlns="http://www.topografix.com/GPX/1/1">
            <trk><name>credit walk</name><trkseg>

            """
        for p in points {
            let time = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(p.time)))
            out +=
                "<trkpt lat=\"\(p.lat)\" lon=\"\(p.lon)\"><ele>\(p.altMSL)</ele><time>\(time)</time><hdop>0.9</hdop></trkpt>\n"
        }
        return out + "</trkseg></trk>\n</gpx>\n"
    }

    /// The walk as NMEA lines (RMC + GGA per fix) for `GPSDRig.startReceiver`.
    public var nmeaLines: [String] { points.flatMap(\.sentences) }
}
