/// Passes a fix's course (track) only while the wearer is moving, so a still wearer does not get
/// the random headings GPS noise produces at walking-pace-zero.
///
/// Moving switches on when speed ≥ `onSpeed` and off when speed < `offSpeed` (hysteresis, so a
/// slow stroll near one threshold does not toggle). The speed is the fix's own; when a fix has none
/// (a GPX without speed), it is derived from the previous positioned, timed fix, and a missing
/// track is then filled from the bearing between the two.
public struct CourseFilter: Sendable {
    /// Course is shown above this speed, m/s.
    public var onSpeed: Double
    /// Course is hidden again below this speed, m/s.
    public var offSpeed: Double
    /// Whether the wearer is judged to be moving now.
    public private(set) var moving = false
    private var previous: (point: GeoPoint, t: Nanoseconds)?

    /// - Parameters: speeds in m/s; `offSpeed` ≤ `onSpeed`.
    public init(onSpeed: Double = 1.0, offSpeed: Double = 0.5) {
        precondition(offSpeed <= onSpeed, "offSpeed must not exceed onSpeed")
        self.onSpeed = onSpeed; self.offSpeed = offSpeed
    }

    /// The fix as it should be reported: `track` removed while not moving; speed and track filled in
    /// from the previous fix when the source gave none.
    public mutating func filter(_ fix: Fix) -> Fix {
        var out = fix
        var derivedTrack: Double?
        if let p = fix.point, let t = fix.time {
            if out.speed == nil, let prev = previous, t > prev.t {
                let d = Geo.distance(prev.point, p)
                out.speed = d / (Double(t - prev.t) / 1e9)
                if d > 0 { derivedTrack = Geo.bearing(from: prev.point, to: p) }
            }
            previous = (p, t)
        }
        if let s = out.speed {
            if moving { if s < offSpeed { moving = false } } else if s >= onSpeed { moving = true }
        }
        // No speed at all (first fix of a GPX, or a source without it): keep the last judgement.
        if moving {
            if out.track == nil { out.track = derivedTrack }
        } else {
            out.track = nil
        }
        return out
    }
}
