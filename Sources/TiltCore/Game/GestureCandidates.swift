// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// Nods and shakes read with loose limits, each with its `GestureFeatures`: what
/// `GestureClassifier` judges. The loose detector finds gentle gestures (a player nodding 10° at
/// 50 °/s) the game's own limits miss, and everything else that swings back and forth (the
/// gait's bob and sway); the features tell them apart. Pure; the cost of one or two detectors
/// per sample (a known frame or not), plus the features when a cycle completes.
public struct GestureCandidates: Sendable {
    /// The loose limits: half-swings from 20 °/s and 1.5°, nods begun either way (one detector).
    public static let looseParameters: GestureDetector.Parameters = {
        var p = GestureDetector.Parameters()
        p.minPeakDps = 20
        p.minSwingDeg = 1.5
        p.nodEitherWay = true
        return p
    }()
    private var reader: GestureReader
    /// The head's recent rates.
    public private(set) var history = RateHistory()

    /// Candidates read with `parameters`.
    public init(parameters: GestureDetector.Parameters = looseParameters) {
        reader = GestureReader(parameters: parameters)
    }

    /// Feeds one sample: the bias-corrected rate (sensor frame, rad/s), up in the sensor frame
    /// (from the attitude), the head frame when one is known, and |accel| (m/s²). Returns the
    /// cycles of `minCycles` or more completed at this sample, with their features (none until
    /// 3 s of history; none at all when `wanted` is false: the features cost tens of µs, so the
    /// game asks for them only while a prompt shows).
    public mutating func add(
        t: Nanoseconds, rate: Vector3, up: Vector3, frame: HeadFrame?, accel: Double?, minCycles: Int = 2,
        wanted: Bool = true
    ) -> [(gesture: HeadGesture, features: GestureFeatures)] {
        let read = reader.add(t: t, rate: rate, up: up, frame: frame)
        history.add(t: t, h1: read.horizontal.0, h2: read.horizontal.1, up: read.yaw, accel: accel)
        guard wanted else { return [] }
        return read.gestures.compactMap { g in
            g.cycle >= minCycles ? history.features(of: g).map { (g, $0) } : nil
        }
    }
}
