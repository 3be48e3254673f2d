// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// The magnetometer's part of `AttitudeEstimator` (docs/fusion.md, "Heading"): a heading offset
/// about global z, applied on top of the 6-axis orientation, pulled towards the horizontal field
/// while the field is believable.
///
/// The field is believable while its strength and dip (seen through the 6-axis orientation, so
/// independent of heading) stay near a reference learnt from the clean field. A magnet nearby, or
/// one on the board, changes them; the heading then rests on the gyroscope until the field is back
/// (and has stayed back for `magMinClean`). A field that differs from the reference but stays the
/// same in the global frame while the sensor turns (a new place, not a magnet that turns with the
/// board) becomes the new reference after `magNewTime`.
struct MagneticHeading: Sendable {
    /// Heading offset (rad) about global z on top of the 6-axis orientation; nil until the field set it.
    private(set) var offset: Double?
    /// True while the field is off its reference, or back for less than `magMinClean`.
    private(set) var disturbed = false
    /// The reference field: strength (the field's unit) and dip (rad, positive pointing down).
    private(set) var reference: (strength: Double, dip: Double)?
    // cos and sin of offset/2: the rotation applied to every 6-axis orientation.
    private var halfCos = 1.0, halfSin = 0.0
    private var cleanSeconds = 0.0
    private var candidate: (strength: Double, dip: Double)?
    private var candidateSeconds = 0.0
    private var lastT: Nanoseconds?
    /// The seeded strength, until the first field sample has been compared with it.
    private var seededStrength: Double?
    /// Measured strength ÷ the model's, when the two differ by more than `scaleMismatchFactor`
    /// while the dip agrees: the magnetometer's scale is wrong, not the place's field.
    private(set) var scaleMismatch: Double?

    /// A measured field this many times stronger or weaker than the model's is not a
    /// disturbance: people do not live in fields 2× or ½ Earth's. Magnets and steel near the sensor
    /// bend the dip as well; a wrong unit does not. (Linux 6.1's hmc5843 driver reports its scale
    /// 100 times too small; a user's own driver may use another unit.)
    static let scaleMismatchFactor = 2.0

    /// Time constant (s) of the candidate reference's low-pass: long enough to smooth the sensor's
    /// noise, short against `magNewTime`.
    static let candidateTau = 1.0

    /// The 6-axis orientation `q6` with the magnetic heading applied (`q6` itself, bit for bit,
    /// until the field has set a heading).
    @inline(__always)
    func apply(to q6: Quaternion) -> Quaternion {
        guard offset != nil else { return q6 }
        // Rz(offset) ⊗ q6, with Rz = (cos, 0, 0, sin) of the half angle.
        let c = halfCos, s = halfSin
        return Quaternion(
            w: c * q6.w - s * q6.z, x: c * q6.x - s * q6.y,
            y: c * q6.y + s * q6.x, z: c * q6.z + s * q6.w)
    }

    /// The 6-axis heading restarted (estimator reset): the offset means nothing any more. The
    /// reference (a property of the place) is kept.
    mutating func forgetHeading() {
        offset = nil; halfCos = 1; halfSin = 0
        lastT = nil; candidate = nil; candidateSeconds = 0
    }

    /// The reference set from a model of the place (the World Magnetic Model at a fix) instead of
    /// learnt from the first sample, which may itself be disturbed. Before a heading is set, a
    /// first sample that matches it is trusted at once; one that does not is disturbed.
    mutating func seed(strength: Double, dip: Double) {
        // A seed after a scale mismatch was found keeps the measured scale: only the dip is
        // the model's.
        let scaled = scaleMismatch.map { strength * $0 } ?? strength
        reference = (scaled, dip)
        seededStrength = scaleMismatch == nil ? strength : nil
        candidate = nil; candidateSeconds = 0
        if offset == nil { cleanSeconds = .infinity }
    }

    /// One field sample, already rotated into the 6-axis global frame (`field` = q6 · m).
    /// `turnRate` is the bias-corrected gyro rate's magnitude (rad/s).
    mutating func update(
        t: Nanoseconds, field: Vector3, turnRate: Double, parameters p: AttitudeEstimator.Parameters
    ) {
        var dt = 0.0
        if let last = lastT {
            // Repeated or backward times carry no time; a long silence counts as one gap, so a
            // single sample after it cannot swing the heading.
            guard t > last else { return }
            dt = min(Double(t &- last) * 1e-9, p.maxGap)
        }
        lastT = t
        let strength = field.norm
        let horizontal = (field.x * field.x + field.y * field.y).squareRoot()
        // No usable direction (a zero reading, or a field straight up or down).
        guard strength.isFinite, strength > 0, horizontal > 1e-3 * strength else { return }
        let dip = atan2(-field.z, horizontal)
        // Where the field points, clockwise from the 6-axis frame's y axis: the heading offset
        // that turns it onto north (+y).
        let psi = atan2(field.x, field.y)

        if let seeded = seededStrength, let ref = reference {
            seededStrength = nil
            let ratio = strength / seeded
            if (ratio > Self.scaleMismatchFactor || ratio < 1 / Self.scaleMismatchFactor)
                && abs(dip - ref.dip) <= p.magDipThreshold
            {
                scaleMismatch = ratio
                reference = (strength, ref.dip)
            }
        }
        guard let ref = reference else {
            // First sample: it sets the reference and the heading.
            reference = (strength, dip)
            setOffset(psi)
            cleanSeconds = p.magMinClean
            disturbed = false
            return
        }
        let off =
            abs(strength - ref.strength) > p.magNormThreshold * ref.strength || abs(dip - ref.dip) > p.magDipThreshold
        if off {
            cleanSeconds = 0
            trackCandidate(strength: strength, dip: dip, dt: dt, turnRate: turnRate, parameters: p)
        } else {
            candidate = nil; candidateSeconds = 0
            cleanSeconds += dt
            let a = min(1, dt / p.magRefTau)
            reference = (ref.strength + (strength - ref.strength) * a, ref.dip + (dip - ref.dip) * a)
        }
        disturbed = off || cleanSeconds < p.magMinClean
        guard !disturbed else { return }
        // After a reset the heading is set again by the first trusted sample.
        guard let current = offset else {
            setOffset(psi)
            return
        }
        // A first-order pull of the offset towards the field's heading (the shorter way round).
        let error = remainder(psi - current, 2 * .pi)
        setOffset(remainder(current + error * min(1, dt / p.magTau), 2 * .pi))
    }

    /// While the field is off its reference: is it a new reference? Only if it stays the same (in
    /// strength and dip, i.e. in the global frame) while the sensor turns. A magnet on the board
    /// turns with it, so seen from the global frame its field changes as the sensor turns and never
    /// qualifies; a new place's field does not change.
    private mutating func trackCandidate(
        strength: Double, dip: Double, dt: Double, turnRate: Double, parameters p: AttitudeEstimator.Parameters
    ) {
        guard var c = candidate else {
            candidate = (strength, dip); candidateSeconds = 0
            return
        }
        let a = min(1, dt / Self.candidateTau)
        c = (c.strength + (strength - c.strength) * a, c.dip + (dip - c.dip) * a)
        if abs(strength - c.strength) > p.magNormThreshold * c.strength || abs(dip - c.dip) > p.magDipThreshold {
            candidate = (strength, dip); candidateSeconds = 0
            return
        }
        candidate = c
        if turnRate > p.magNewGyro { candidateSeconds += dt }
        if candidateSeconds >= p.magNewTime {
            reference = c
            candidate = nil; candidateSeconds = 0
        }
    }

    private mutating func setOffset(_ value: Double) {
        offset = value
        halfCos = cos(value / 2); halfSin = sin(value / 2)
    }
}

extension AttitudeEstimator {
    /// True while the magnetometer's field is judged disturbed (its strength or dip away from the
    /// learnt reference, or back for less than `magMinClean`): the heading then rests on the gyro.
    /// False without a magnetometer.
    public var magDisturbed: Bool { magnetic.disturbed }

    /// True once a magnetometer sample has set the heading: `q`'s yaw is then magnetic (x east,
    /// y magnetic north). False without a magnetometer: the heading is the gyro's, from zero.
    public var hasMagneticHeading: Bool { magnetic.offset != nil }

    /// The learnt reference field: strength (the unit fed, e.g. µT) and dip (rad, positive down).
    public var magneticReference: (strength: Double, dip: Double)? { magnetic.reference }

    /// Measured field strength ÷ the seeded model's, when the first field sample after a seed
    /// was more than twice or less than half the model's with the model's dip: the magnetometer's
    /// scale is wrong (its driver's unit), so the strength check uses the measured strength and
    /// only the dip is the model's. nil when the scale looked right or nothing was seeded.
    public var magScaleMismatch: Double? { magnetic.scaleMismatch }

    /// Sets the reference field the disturbance check compares with — the field the World
    /// Magnetic Model expects at the wearer's place: `strength` in the unit the field is fed in
    /// (µT), `dip` in radians, positive pointing down — so the check is right from the first
    /// field sample instead of taking that sample as the reference. A later clean field still
    /// refines it (`magRefTau`) and a steady new one still replaces it (`magNewTime`). Ignored
    /// unless both are finite, the strength positive and the dip within ±90°.
    public mutating func seedMagneticReference(strength: Double, dip: Double) {
        guard strength.isFinite, strength > 0, dip.isFinite, abs(dip) <= .pi / 2 else { return }
        magnetic.seed(strength: strength, dip: dip)
    }

    /// Feeds one magnetometer sample: `field` in the sensor frame (the accelerometer's axes),
    /// calibrated (hard and soft iron removed), in any unit (µT by convention). Samples may come
    /// at their own, lower rate, interleaved with `update(_:)` in time order; each is taken against
    /// the latest 6-axis orientation (the gyro turns the sensor little within one IMU period).
    /// Ignored before the first IMU sample. Returns the orientation with the heading applied.
    @discardableResult
    public mutating func updateMag(t: Nanoseconds, field: Vector3) -> Attitude {
        if hasStarted && field.x.isFinite && field.y.isFinite && field.z.isFinite {
            magnetic.update(
                t: t, field: q6.rotate(field), turnRate: (lastGyro - bias).norm, parameters: parameters)
            q = magnetic.apply(to: q6)
        }
        var a = Attitude(t: t, q: q, atRest: atRest, gyroBias: bias)
        a.magneticHeading = hasMagneticHeading
        a.magDisturbed = magDisturbed
        return a
    }
}
