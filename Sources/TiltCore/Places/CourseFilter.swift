// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// Passes a fix's course (track) only while the wearer is moving, so a still wearer does not get
/// the random headings GPS noise produces at walking-pace-zero.
///
/// Moving switches on when speed ≥ `onSpeed` and off when speed < `offSpeed` (hysteresis, so a
/// slow stroll near one threshold does not toggle). The speed judged is the fix's own; when a fix
/// has none (a GPX without speed), the speed between it and the previous positioned, timed fix is
/// judged instead. That estimate only decides "moving": it is never written into the fix, which
/// reports what the source said and nothing it did not (no invented `speed_mps` or `track_deg`).
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

    /// The fix as it should be reported: `track` removed while not moving, nothing added.
    public mutating func filter(_ fix: Fix) -> Fix {
        var out = fix
        var speed = fix.speed
        if let p = fix.point, let t = fix.time {
            if speed == nil, let prev = previous, t > prev.t {
                speed = Geo.distance(prev.point, p) / (Double(t - prev.t) / 1e9)
            }
            previous = (p, t)
        }
        if let s = speed {
            if moving { if s < offSpeed { moving = false } } else if s >= onSpeed { moving = true }
        }
        // No speed at all (first fix of a GPX, or a source without it): keep the last judgement.
        if !moving { out.track = nil }
        return out
    }
}
