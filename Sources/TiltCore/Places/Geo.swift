// SPDX-License-Identifier: Apache-2.0
import Glibc

/// A position on the WGS-84 ellipsoid, treated as a sphere of mean radius for distances
/// (the error, < 0.5 %, is far below consumer GPS noise at the scales tiltd uses).
public struct GeoPoint: Sendable, Equatable, Hashable {
    /// Degrees, −90…90.
    public var lat: Double
    /// Degrees, any value; functions normalise it to −180…180 where it matters.
    public var lon: Double

    /// A point at `lat`, `lon` degrees.
    public init(lat: Double, lon: Double) { self.lat = lat; self.lon = lon }

    /// True when both coordinates are finite and the latitude is within ±90°.
    public var isValid: Bool { lat.isFinite && lon.isFinite && abs(lat) <= 90 }
}

extension Fix {
    /// The fix's position, when it has one.
    public var point: GeoPoint? {
        guard hasPosition, let lat, let lon else { return nil }
        return GeoPoint(lat: lat, lon: lon)
    }

    /// One-sigma horizontal uncertainty in metres, from `eph` (a 95 % radius).
    /// For a circular 2-D normal error, 95 % of fixes fall within 2.4477 σ.
    public var horizontalSigma: Double? { eph.map { $0 / 2.4477 } }

    /// The 95 % horizontal uncertainty assumed for a fix that reports none (a GPX without hdop, a
    /// receiver that gives no error estimate): a consumer receiver's under partly open sky. Such a
    /// fix is never taken as exact — with eph 0 it would enter a fence the moment its centre
    /// crossed the edge and let a quest complete however wrong it was.
    public static let assumedEphWhenUnknown = 25.0

    /// `eph`, or `assumedEphWhenUnknown` when the source gave none.
    public var ephOrAssumed: Double { eph ?? Self.assumedEphWhenUnknown }
}

/// Spherical-earth geometry. All angles in degrees, distances in metres.
public enum Geo {
    /// Mean earth radius (IUGG), metres.
    public static let earthRadius = 6_371_008.8
    static let rad = Double.pi / 180

    /// Longitude wrapped into [−180, 180).
    @inlinable
    public static func normalizedLongitude(_ lon: Double) -> Double {
        var l = lon.truncatingRemainder(dividingBy: 360)
        if l < -180 { l += 360 } else if l >= 180 { l -= 360 }
        return l
    }

    /// Great-circle distance (haversine: well-conditioned for short distances, exact at the
    /// antimeridian because only sin/cos of the longitude difference enter).
    public static func distance(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let φ1 = a.lat * rad, φ2 = b.lat * rad
        let dφ = φ2 - φ1
        let dλ = (b.lon - a.lon) * rad
        let s1 = sin(dφ / 2), s2 = sin(dλ / 2)
        let h = s1 * s1 + cos(φ1) * cos(φ2) * s2 * s2
        return 2 * earthRadius * asin(min(1, h.squareRoot()))
    }

    /// Initial bearing from `a` to `b`, degrees clockwise from true north in [0, 360).
    /// At a pole every direction is south (or north); the result there is whatever atan2 gives.
    public static func bearing(from a: GeoPoint, to b: GeoPoint) -> Double {
        let φ1 = a.lat * rad, φ2 = b.lat * rad
        let dλ = (b.lon - a.lon) * rad
        let y = sin(dλ) * cos(φ2)
        let x = cos(φ1) * sin(φ2) - sin(φ1) * cos(φ2) * cos(dλ)
        let deg = atan2(y, x) / rad
        return deg < 0 ? deg + 360 : (deg >= 360 ? deg - 360 : deg)
    }

    /// The point `distance` metres from `origin` along the initial `bearing` (degrees).
    public static func destination(from origin: GeoPoint, distance: Double, bearing: Double) -> GeoPoint {
        let δ = distance / earthRadius, θ = bearing * rad
        let φ1 = origin.lat * rad, λ1 = origin.lon * rad
        let sinφ2 = sin(φ1) * cos(δ) + cos(φ1) * sin(δ) * cos(θ)
        let φ2 = asin(max(-1, min(1, sinφ2)))
        let λ2 = λ1 + atan2(sin(θ) * sin(δ) * cos(φ1), cos(δ) - sin(φ1) * sinφ2)
        return GeoPoint(lat: φ2 / rad, lon: normalizedLongitude(λ2 / rad))
    }

    /// East/north offset (metres) of `p` from `origin` on the tangent plane at `origin`
    /// (azimuthal equidistant: exact distance and bearing from the origin, so it stays right
    /// near the poles and across the antimeridian, unlike a lat/lon scaling).
    public static func enu(of p: GeoPoint, from origin: GeoPoint) -> (east: Double, north: Double) {
        let d = distance(origin, p)
        let b = bearing(from: origin, to: p) * rad
        return (d * sin(b), d * cos(b))
    }
}

/// A fast local distance for many points around one centre: an equirectangular projection at
/// the centre's latitude with the longitude difference wrapped. Within a few kilometres and away
/// from the poles it agrees with the haversine to better than 0.1 %; within `exactBelowPole`
/// degrees of a pole it falls back to the haversine.
public struct LocalDistance: Sendable {
    /// The point distances are measured around.
    public let centre: GeoPoint
    private let metresPerDegLat: Double
    private let metresPerDegLon: Double
    private let exact: Bool

    /// Latitudes beyond ±85° use the exact formula.
    public static let exactBeyondLatitude = 85.0

    /// Precomputes the metres per degree at `centre`.
    public init(centre: GeoPoint) {
        self.centre = centre
        metresPerDegLat = Geo.earthRadius * Geo.rad
        metresPerDegLon = metresPerDegLat * cos(centre.lat * Geo.rad)
        exact = abs(centre.lat) > Self.exactBeyondLatitude
    }

    /// Squared distance in m² from the centre to `p`.
    @inlinable
    public func distanceSquared(to p: GeoPoint) -> Double {
        distanceSquared(lat: p.lat, lon: p.lon)
    }

    /// Squared distance in m² from the centre to (lat, lon).
    public func distanceSquared(lat: Double, lon: Double) -> Double {
        if exact {
            let d = Geo.distance(centre, GeoPoint(lat: lat, lon: lon))
            return d * d
        }
        let dy = (lat - centre.lat) * metresPerDegLat
        var dLon = lon - centre.lon  // both in −180…180: one wrap step suffices
        if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
        let dx = dLon * metresPerDegLon
        return dx * dx + dy * dy
    }
}
