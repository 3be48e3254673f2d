// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Roll and pitch from an accelerometer alone, for boards with no gyroscope (ADXL345, an
/// accel-only HID sensor). Yaw is unobservable without a gyroscope (or magnetometer): attitudes
/// carry yaw 0 and `hasYaw == false`.
///
/// Method: the accelerometer is low-passed by two first-order stages (critically damped, exact
/// exponential steps, so any rate and any dt are stable) whose corner is tuned for a head: a
/// deliberate tilt (a quarter of a second to a second) passes with about 0.2 s of lag, while
/// footsteps, taps and vibration are averaged out.
/// Samples whose magnitude is far from g (a jolt, a swing) pull the filter less: their weight is
/// 1 / (1 + (‖a‖ − g)² / (gate·g)²). The low-passed vector is the gravity direction; roll and
/// pitch follow from it (aerospace Z-Y-X, heading 0). The cost against the 6-axis estimator on
/// real recordings is measured by `bench/accel-only/run` (docs/fusion.md).
public struct AccelTiltEstimator: Sendable {
    /// Tunables.
    public struct Parameters: Sendable, Equatable {
        /// Corner frequency of each of the two low-pass stages, Hz (τ = 1 / 2πf each).
        public var cutoffHz: Double = 1.5
        /// Linear acceleration, as a fraction of g, at which a sample's weight halves.
        public var gate: Double = 1.0
        /// At rest: the accelerometer stays within this of its low-pass, m/s² …
        public var restAccel: Double = 0.5
        /// … for this long, s.
        public var restSeconds: Double = 1.5
        /// Time constant of the rest detector's deviation filter, s.
        public var restFilterTau: Double = 0.3
        /// A longer gap between samples restarts the filter from the next sample, s.
        public var maxGap: Double = 0.5

        /// The defaults.
        public init() {}
    }

    /// The filter's parameters.
    public var parameters: Parameters
    /// True while the accelerometer has been steady for `restSeconds`.
    public private(set) var atRest = false

    private var stage = Vector3.zero
    private var low = Vector3.zero
    private var deviation = 0.0
    private var stillSeconds = 0.0
    private var lastT: Nanoseconds?

    /// An estimator with `parameters`, before its first sample.
    public init(parameters: Parameters = Parameters()) { self.parameters = parameters }

    /// Forgets the state; the next sample starts afresh.
    public mutating func reset() {
        lastT = nil; atRest = false; stillSeconds = 0; deviation = 0
    }

    /// Feeds one sample (its gyro, if any, is ignored); returns the attitude at its time.
    public mutating func update(_ s: IMUSample) -> Attitude {
        update(t: s.t, accel: s.accel)
    }

    /// Feeds one accelerometer reading (m/s², sensor frame); returns the attitude at `t`.
    public mutating func update(t: Nanoseconds, accel a: Vector3) -> Attitude {
        let p = parameters
        guard let last = lastT, case let dt = Double(t &- last) * 1e-9, dt <= p.maxGap else {
            lastT = t
            low = a; stage = a; deviation = 0; stillSeconds = 0; atRest = false
            return attitude(t)
        }
        guard dt > 0 else { return attitude(t) }
        lastT = t
        let g = AttitudeEstimator.gravity
        let excess = (a.norm - g) / (p.gate * g)
        let weight = 1 / (1 + excess * excess)
        // Two first-order stages with exact exponential steps: stable at any rate and dt,
        // critically damped (no overshoot after a nod). The weight slows the first stage for
        // samples far from 1 g.
        let tau = 1 / (2 * Double.pi * p.cutoffHz)
        let k = 1 - exp(-dt / tau)
        stage += (a - stage) * (k * weight)
        low += (stage - low) * k

        let off = (a - low).norm + abs(a.norm - g)
        deviation += (off - deviation) * min(1, dt / p.restFilterTau)
        stillSeconds = deviation < p.restAccel ? stillSeconds + dt : 0
        atRest = stillSeconds >= p.restSeconds
        return attitude(t)
    }

    /// Roll and pitch (heading 0) of the orientation whose gravity reaction is `accel`.
    public static func tilt(fromGravity accel: Vector3) -> Quaternion {
        guard accel != .zero else { return .identity }
        let roll = atan2(accel.y, accel.z)
        let pitch = atan2(-accel.x, (accel.y * accel.y + accel.z * accel.z).squareRoot())
        return Quaternion(roll: roll, pitch: pitch, yaw: 0)
    }

    private func attitude(_ t: Nanoseconds) -> Attitude {
        Attitude(t: t, q: Self.tilt(fromGravity: low), atRest: atRest, gyroBias: .zero, hasYaw: false)
    }
}
