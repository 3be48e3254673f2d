// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import XCTest

/// MagCalibration: the hard- and soft-iron fit, the coverage check, and a real recording with a
/// known hard-iron offset added.
final class MagCalibrationTests: XCTestCase {
    static let earth = MagneticHeadingTests.earth

    /// `n` orientations spread over the sphere (a spiral of axes, each turned about itself), the
    /// field seen in each.
    static func turnedAround(_ n: Int) -> [Vector3] {
        (0..<n).map { i in
            let z = 1 - 2 * (Double(i) + 0.5) / Double(n)
            let a = Double(i) * 2.399963
            let axis = Vector3((1 - z * z).squareRoot() * cos(a), (1 - z * z).squareRoot() * sin(a), z)
            let q = Quaternion(axis: axis, angle: Double(i % 17) * 0.37 + 0.5)
            return q.conjugate.rotate(earth)
        }
    }

    func testHardAndSoftIronAreFitted() throws {
        var noise = FusionTests.Noise(state: 11)
        let soft = Matrix3(Vector3(1.08, 0.03, -0.02), Vector3(0.03, 0.95, 0.04), Vector3(-0.02, 0.04, 1.01))
        let hard = Vector3(25, -12, 40)
        let raw = Self.turnedAround(2000).map { soft * $0 + hard + noise.vector(0.3) }
        let fit = try MagCalibration.fit(raw)
        XCTAssertLessThan((fit.offset - hard).norm, 0.3, "offset \(fit.offset)")
        XCTAssertEqual(fit.fieldStrength, 45 * cbrt(soft.determinant), accuracy: 0.3)
        XCTAssertLessThan(fit.residual, 0.3)
        XCTAssertGreaterThan(fit.residualBefore, 1)
        XCTAssertEqual(fit.matrix.determinant, 1, accuracy: 1e-9)
        XCTAssertTrue(fit.coverage.isSufficient)
        // Calibrated readings lie on a sphere.
        for m in raw.prefix(50) {
            XCTAssertEqual(fit.apply(m).norm, fit.fieldStrength, accuracy: 1.2)
        }
    }

    func testFitCoverageIsWhatTheFitJudges() {
        // The spiral's first readings cover the top of the sphere only, later ones all of it: the
        // live guide's stop (fitCoverage) must agree with the fit's acceptance at every point.
        var noise = FusionTests.Noise(state: 5)
        let raw = Self.turnedAround(600).map { $0 + Vector3(25, -40, 15) + noise.vector(0.2) }
        var seen: Set<Bool> = []
        for n in stride(from: 0, through: 600, by: 25) {
            let part = Array(raw.prefix(n))
            let accepted = (try? MagCalibration.fit(part)) != nil
            seen.insert(accepted)
            XCTAssertEqual(MagCalibration.fitCoverage(part)?.isSufficient ?? false, accepted, "\(n) readings")
        }
        XCTAssertEqual(seen, [false, true], "both refused and accepted prefixes")
    }

    func testTurningInOnePlaneIsRefusedWithWhatIsMissing() {
        // Turned about the vertical only: the field sweeps a cone, the z axis never sees it.
        let raw = (0..<500).map { i in
            Quaternion(axis: Vector3(0, 0, 1), angle: Double(i) * 0.05).conjugate.rotate(Self.earth) + Vector3(5, 5, 5)
        }
        XCTAssertThrowsError(try MagCalibration.fit(raw)) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("not enough directions"), text)
            XCTAssertTrue(text.contains("never pointed along the field"), text)
        }
        XCTAssertThrowsError(try MagCalibration.fit(Array(raw.prefix(10)))) { error in
            XCTAssertTrue("\(error)".contains("too few"), "\(error)")
        }
    }

    func testRealRecordingWithAKnownHardIronOffsetIsCalibratedBack() throws {
        // BROAD's slow-rotation trial (its field is already calibrated), with a known offset added
        // to every reading: the fit must find that offset, on top of what it finds without it,
        // to within 1 µT.
        let dir = try AccuracyTests.broadDirectory()
        let path = dir.deletingLastPathComponent()
            .appendingPathComponent("broad-mag/01_undisturbed_slow_rotation_A.mag.csv.gz").path
        let field = try HeadingAccuracyTests.field(path: path)
        let plain = try MagCalibration.fit(field)
        let offset = Vector3(-18.5, 31.0, 12.25)
        let fit = try MagCalibration.fit(field.map { $0 + offset })
        XCTAssertLessThan((fit.offset - plain.offset - offset).norm, 1, "found \(fit.offset), plain \(plain.offset)")
        // The dataset's field is calibrated, up to the room's own unevenness (about 1 µT here).
        XCTAssertLessThan(plain.offset.norm, 2, "\(plain.offset)")
        XCTAssertEqual(fit.fieldStrength, 44, accuracy: 2)
        XCTAssertLessThan(fit.residual, 1.5)
    }
}
