// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltPlatform
import XCTest

/// `AttitudeEstimator.seedMagneticReference`: the reference field from the World Magnetic Model
/// at a fix, so a field disturbed from the first sample on is caught instead of learnt.
final class MagneticSeedTests: XCTestCase {
    static let deg = Double.pi / 180
    static let earth = MagneticHeadingTests.earth  // 45 µT dipping 65°, ENU
    /// A magnet on the board: +30 µT along sensor x (hard iron).
    static let magnet = Vector3(30, 0, 0)

    /// Feeds `seconds` of a still sensor at yaw 40°, the field (plus `offset`) with every sample.
    static func feed(
        _ est: inout AttitudeEstimator, seconds: Double, offset: Vector3 = .zero, t0: Double = 1, scale: Double = 1
    ) {
        let start = Quaternion(roll: 0, pitch: 0, yaw: 40 * deg)
        for i in 0..<Int(seconds * 100) {
            let t = Nanoseconds((t0 + Double(i) / 100) * 1e9)
            let accel = start.conjugate.rotate(Vector3(0, 0, 9.81))
            _ = est.update(IMUSample(t: t, accel: accel, gyro: .zero))
            est.updateMag(t: t, field: (start.conjugate.rotate(earth) + offset) * scale)
        }
    }

    func testWithoutASeedAFieldDisturbedFromTheStartIsLearnt() {
        var est = AttitudeEstimator()
        Self.feed(&est, seconds: 1, offset: Self.magnet)
        XCTAssertFalse(est.magDisturbed, "the magnet's field became the reference")
        XCTAssertTrue(est.hasMagneticHeading)
    }

    func testASeededReferenceCatchesAFieldDisturbedFromTheStart() {
        var est = AttitudeEstimator()
        est.seedMagneticReference(strength: 45, dip: 65 * Self.deg)
        Self.feed(&est, seconds: 1, offset: Self.magnet)
        XCTAssertTrue(est.magDisturbed)
        XCTAssertFalse(est.hasMagneticHeading, "no heading from a field the model does not expect")
        XCTAssertEqual(est.magneticReference!.strength, 45, accuracy: 1e-12)
        // The magnet goes: the clean field sets the heading once it has been back `magMinClean`.
        Self.feed(&est, seconds: 0.4, t0: 2)
        XCTAssertTrue(est.magDisturbed)
        Self.feed(&est, seconds: 0.3, t0: 2.4)
        XCTAssertFalse(est.magDisturbed)
        XCTAssertTrue(est.hasMagneticHeading)
        XCTAssertLessThan(abs(remainder(est.q.yaw / Self.deg - 40, 360)), 0.01)
    }

    func testAFieldThatMatchesTheSeedIsTrustedFromItsFirstSample() {
        var est = AttitudeEstimator()
        est.seedMagneticReference(strength: 47, dip: 63 * Self.deg)  // within 10 % and 10°
        Self.feed(&est, seconds: 0.01)
        XCTAssertFalse(est.magDisturbed)
        XCTAssertTrue(est.hasMagneticHeading)
        XCTAssertLessThan(abs(remainder(est.q.yaw / Self.deg - 40, 360)), 0.01)
        // The clean field refines the seed (magRefTau 20 s) rather than jumping to it.
        Self.feed(&est, seconds: 2, t0: 1.01)
        let ref = est.magneticReference!
        XCTAssertLessThan(ref.strength, 47)
        XCTAssertGreaterThan(ref.strength, 46.5)
    }

    /// The daemon seeds when the first fix comes, after samples have flowed: a reference learnt
    /// from a disturbed field is replaced, and the disturbance is seen.
    func testASeedAfterTheFirstSamplesReplacesALearntReference() {
        var est = AttitudeEstimator()
        Self.feed(&est, seconds: 1, offset: Self.magnet)
        XCTAssertFalse(est.magDisturbed)
        est.seedMagneticReference(strength: 45, dip: 65 * Self.deg)
        Self.feed(&est, seconds: 0.1, offset: Self.magnet, t0: 2)
        XCTAssertTrue(est.magDisturbed)
    }

    /// A driver whose unit is off (Linux 6.1's hmc5843 reports 1/100 of the field): the model's
    /// dip matches, its strength does not by far more than any place's field differs. That is the
    /// scale, not a disturbance: the heading is set and the strength check uses the measured one.
    func testAFieldAHundredTimesWeakerWithTheModelsDipIsAScaleNotADisturbance() {
        var est = AttitudeEstimator()
        est.seedMagneticReference(strength: 45, dip: 65 * Self.deg)
        Self.feed(&est, seconds: 1, scale: 0.01)
        XCTAssertFalse(est.magDisturbed)
        XCTAssertTrue(est.hasMagneticHeading)
        XCTAssertEqual(est.magScaleMismatch!, 0.01, accuracy: 1e-6)
        XCTAssertEqual(est.magneticReference!.strength, 0.45, accuracy: 0.01)
        // A magnet at that scale is still caught, and a later seed keeps the measured scale.
        est.seedMagneticReference(strength: 46, dip: 65 * Self.deg)
        XCTAssertEqual(est.magneticReference!.strength, 0.46, accuracy: 1e-9)
        Self.feed(&est, seconds: 0.1, offset: Self.magnet, t0: 2, scale: 0.01)
        XCTAssertTrue(est.magDisturbed)
    }

    /// Twice the model's strength with its dip bent is a disturbance (a magnet, steel), not a scale.
    func testAStrongFieldWithAnotherDipIsStillADisturbance() {
        var est = AttitudeEstimator()
        est.seedMagneticReference(strength: 45, dip: 65 * Self.deg)
        Self.feed(&est, seconds: 1, offset: Vector3(90, 0, 0))
        XCTAssertTrue(est.magDisturbed)
        XCTAssertNil(est.magScaleMismatch)
    }

    func testNonsenseSeedsAreIgnored() {
        var est = AttitudeEstimator()
        for (s, d) in [(0.0, 1.0), (-45, 1), (.nan, 1), (45, .nan), (45, 2), (.infinity, 0)] {
            est.seedMagneticReference(strength: s, dip: d)
        }
        XCTAssertNil(est.magneticReference)
    }
}
