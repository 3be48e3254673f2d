// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform

/// The reference count of nod and shake cycles in a recording, for benches and tests (not
/// used by the game): how many times the head really went down-and-up, or left-and-right.
///
/// Method: the angular rate about the head's ear-to-ear axis (nods) or vertical axis (shakes)
/// is cut where it changes sign into half-waves. A cycle is two consecutive half-waves of
/// opposite sign — for a nod, down then up — each peaking at 40 °/s or more and sweeping 3° or
/// more, with more rotation about this axis than about the other over the pair. Pairs do not
/// overlap (scanned left to right). The amplitude floor is the smallest swing the detector is
/// meant to see; everything else the detector demands (duration, pauses, symmetry, a third
/// swing for shakes) is left out, so the count is the plain truth the detector is scored on.
public enum GestureCycles {
    /// Nod and shake cycles in `rates` (sensor frame, rad/s, with their times) seen in `frame`.
    public static func count(times: [Nanoseconds], rates: [Vector3], frame: HeadFrame) -> (nods: Int, shakes: Int) {
        let pitch = rates.map { frame.pitchRate($0) * 180 / .pi }
        let yaw = rates.map { frame.yawRate($0) * 180 / .pi }
        return (cycles(times, pitch, yaw, downFirst: true), cycles(times, yaw, pitch, downFirst: false))
    }

    struct HalfWave { var sign: Double; var peak = 0.0; var angle = 0.0; var other = 0.0 }

    static func cycles(_ t: [Nanoseconds], _ x: [Double], _ other: [Double], downFirst: Bool) -> Int {
        var waves: [HalfWave] = []
        for i in x.indices {
            let dt = i == 0 ? 0 : min(0.25, Double(t[i] - t[i - 1]) * 1e-9)
            let s: Double = x[i] > 0 ? 1 : -1
            if waves.last?.sign != s { waves.append(HalfWave(sign: s)) }
            waves[waves.count - 1].peak = max(waves[waves.count - 1].peak, abs(x[i]))
            waves[waves.count - 1].angle += abs(x[i]) * dt
            waves[waves.count - 1].other += abs(other[i]) * dt
        }
        var n = 0, j = 0
        while j + 1 < waves.count {
            let a = waves[j], b = waves[j + 1]
            let big = min(a.peak, b.peak) >= 40 && min(a.angle, b.angle) >= 3
            if big, !downFirst || a.sign > 0, a.angle + b.angle > a.other + b.other { n += 1; j += 2 } else { j += 1 }
        }
        return n
    }
}
