// SPDX-License-Identifier: Apache-2.0
import Glibc

/// Hard- and soft-iron calibration of a magnetometer from readings taken while the device is turned
/// through all directions (the math behind `tiltd calibrate mag`; docs/calibration.md).
///
/// A magnetometer on a board reads m = S·f + b: the local field f, distorted by soft iron (S: iron
/// nearby that bends the field, and the sensor's own scale and cross-axis errors) and offset by hard
/// iron (b: magnetised parts and offsets that turn with the board). Turned through all directions,
/// the readings lie on an ellipsoid; the fit finds the offset b and the symmetric matrix W (det 1)
/// that map them onto a sphere: `calibrated = W·(m − b)`, whose radius is the field's strength.
/// W keeps the volume (det 1), so the strength stays in the sensor's units (µT).
///
/// 1. An algebraic ellipsoid fit (linear least squares for the quadric
///    A x² + B y² + C z² + 2D xy + 2E xz + 2F yz + 2G x + 2H y + 2I z = 1) gives the centre.
/// 2. Coverage: the directions of m − centre are checked against the 26 directions of a cube
///    (faces, edges, corners); every face and most of the rest must have a reading within 35°.
/// 3. Levenberg–Marquardt on the geometric residual ‖W·(m − b)‖ − 1 refines b and W (the algebraic
///    fit is biased by noise); the strength is then det(W)^(−1/3) and W is rescaled to det 1.
public enum MagCalibration {
    /// A fitted calibration.
    public struct Fit: Sendable, Equatable {
        /// Hard-iron offset (the readings' unit, µT), subtracted first.
        public var offset: Vector3
        /// Soft-iron matrix, symmetric, determinant 1, applied after the offset.
        public var matrix: Matrix3
        /// Strength of the field the readings were taken in (radius of the calibrated sphere).
        public var fieldStrength: Double
        /// RMS of ‖calibrated‖ − `fieldStrength` over the readings after the fit.
        public var residual: Double
        /// RMS of ‖m − mean‖ − its mean over the raw readings: the spread the fit removed.
        public var residualBefore: Double
        /// How well the readings covered the directions.
        public var coverage: Coverage

        /// A raw reading calibrated: `matrix · (raw − offset)`.
        public func apply(_ raw: Vector3) -> Vector3 { matrix * (raw - offset) }
    }

    /// Which directions the readings covered, seen from the ellipsoid's centre.
    public struct Coverage: Sendable, Equatable, CustomStringConvertible {
        /// Directions of the 26 (cube faces, edges, corners) with a reading within 35°.
        public var covered: Int
        /// Sensor axes (`+x` … `-z`) never pointed along the field (within 45°).
        public var missingAxes: [String]
        /// All six axes, and at least `minimumCovered` of the 26 directions.
        public var isSufficient: Bool { missingAxes.isEmpty && covered >= MagCalibration.minimumCovered }

        /// "20/26 directions; missing: +z, -x" (what the wearer still has to do).
        public var description: String {
            let missing =
                missingAxes.isEmpty ? "" : "; never pointed along the field: \(missingAxes.joined(separator: ", "))"
            return "\(covered)/26 directions covered\(missing)"
        }
    }

    /// Directions of the 26 needed for a fit (with all six axes).
    public static let minimumCovered = 20
    /// Fewest readings accepted.
    public static let minimumSamples = 50

    /// The coverage of `samples` around `center`.
    public static func coverage(_ samples: [Vector3], center: Vector3) -> Coverage {
        var hit = [Bool](repeating: false, count: directions.count)
        var axis = [Bool](repeating: false, count: 6)
        for m in samples {
            let u = (m - center).normalized
            guard u != .zero else { continue }
            for (i, d) in directions.enumerated() where !hit[i] && u.dot(d) > cos(35 * Double.pi / 180) {
                hit[i] = true
            }
            for i in 0..<3 {
                if u[i] > 0.7071 { axis[2 * i] = true }
                if u[i] < -0.7071 { axis[2 * i + 1] = true }
            }
        }
        let names = ["+x", "-x", "+y", "-y", "+z", "-z"]
        return Coverage(
            covered: hit.filter { $0 }.count, missingAxes: names.indices.filter { !axis[$0] }.map { names[$0] })
    }

    /// The coverage `fit` judges `samples` by (around the algebraic centre, as `fit` takes it), or
    /// nil when `fit` would refuse them before looking at the coverage (too few, no spread, no
    /// ellipsoid yet). A live guide stops on this rather than on a rougher centre, so that the
    /// readings it calls enough are the ones the fit accepts (a rough centre from each axis's
    /// range called a tumble complete that the fit then refused: the kernel rig, 27 Nov 2026).
    public static func fitCoverage(_ samples: [Vector3]) -> Coverage? {
        guard samples.count >= minimumSamples else { return nil }
        var mean = Vector3.zero
        for m in samples { mean += m / Double(samples.count) }
        var spread = 0.0
        for m in samples { spread += (m - mean).norm / Double(samples.count) }
        guard spread > 0, let center = algebraicCenter(samples, mean: mean, scale: spread) else { return nil }
        return coverage(samples, center: center)
    }

    /// Fits hard and soft iron to `samples` (raw readings, any unit). Throws, saying what is
    /// missing, when there are too few readings or they do not cover the directions.
    public static func fit(_ samples: [Vector3]) throws(CalibrationError) -> Fit {
        guard samples.count >= minimumSamples else {
            throw CalibrationError("too few magnetometer readings (\(samples.count), need \(minimumSamples))")
        }
        var mean = Vector3.zero
        for m in samples { mean += m / Double(samples.count) }
        // A scale for the numbers (readings in gauss or in µT alike).
        var spread = 0.0
        for m in samples { spread += (m - mean).norm / Double(samples.count) }
        guard spread > 0 else { throw CalibrationError("the magnetometer readings do not change: turn the device") }
        let algebraic = algebraicCenter(samples, mean: mean, scale: spread)
        let cover = coverage(samples, center: algebraic ?? mean)
        guard cover.isSufficient, let center = algebraic else {
            throw CalibrationError("not enough directions: \(cover); turn the device through all directions")
        }
        // Refine: p = offset (3), W (6, symmetric), fitted to ‖W(m − b)‖ = 1 on at most 600 readings.
        let step = max(1, samples.count / 600)
        let used = stride(from: 0, to: samples.count, by: step).map { samples[$0] }
        var radius = 0.0
        for m in used { radius += (m - center).norm / Double(used.count) }
        let start = [center.x, center.y, center.z, 1 / radius, 1 / radius, 1 / radius, 0, 0, 0]
        let p = AccelCalibration.levenbergMarquardt(start) { p in
            let w = AccelCalibration.symmetric(p), b = Vector3(p[0], p[1], p[2])
            return used.map { (w * ($0 - b)).norm - 1 }
        }
        let w = AccelCalibration.symmetric(p)
        let det = w.determinant
        guard det.isFinite, det > 0 else {
            throw CalibrationError("the ellipsoid fit failed: turn the device more evenly")
        }
        let strength = 1 / cbrt(det)
        let matrix = Matrix3(w.r0 * strength, w.r1 * strength, w.r2 * strength)
        let offset = Vector3(p[0], p[1], p[2])
        var ss = 0.0, before = 0.0, meanNorm = 0.0
        for m in samples { meanNorm += (m - mean).norm / Double(samples.count) }
        for m in samples {
            let r = (matrix * (m - offset)).norm - strength
            ss += r * r
            let r0 = (m - mean).norm - meanNorm
            before += r0 * r0
        }
        let n = Double(samples.count)
        return Fit(
            offset: offset, matrix: matrix, fieldStrength: strength, residual: (ss / n).squareRoot(),
            residualBefore: (before / n).squareRoot(), coverage: coverage(samples, center: offset))
    }

    /// Centre of the algebraic ellipsoid fit, or nil when the quadric is no ellipsoid (too little
    /// variety in the readings). Works on (m − mean)/scale for conditioning.
    static func algebraicCenter(_ samples: [Vector3], mean: Vector3, scale: Double) -> Vector3? {
        var ata = [[Double]](repeating: [Double](repeating: 0, count: 9), count: 9)
        var atb = [Double](repeating: 0, count: 9)
        for m in samples {
            let v = (m - mean) / scale
            let row = [
                v.x * v.x, v.y * v.y, v.z * v.z, 2 * v.x * v.y, 2 * v.x * v.z, 2 * v.y * v.z, 2 * v.x, 2 * v.y, 2 * v.z,
            ]
            for i in 0..<9 {
                atb[i] += row[i]
                for j in 0..<9 { ata[i][j] += row[i] * row[j] }
            }
        }
        guard let q = AccelCalibration.solve(ata, atb) else { return nil }
        let a = Matrix3(Vector3(q[0], q[3], q[4]), Vector3(q[3], q[1], q[5]), Vector3(q[4], q[5], q[2]))
        // An ellipsoid needs A positive definite (leading minors > 0).
        let m2 = a.r0.x * a.r1.y - a.r0.y * a.r1.x
        guard a.r0.x > 0, m2 > 0, a.determinant > 0 else { return nil }
        // Centre: −A⁻¹·(G, H, I), by Cramer's rule.
        let g = Vector3(q[6], q[7], q[8])
        let det = a.determinant
        let c0 = Vector3(a.r1.cross(a.r2).dot(g), a.r2.cross(a.r0).dot(g), a.r0.cross(a.r1).dot(g)) / det
        let center = mean - c0 * scale
        return center.x.isFinite && center.y.isFinite && center.z.isFinite ? center : nil
    }

    /// The 26 directions of a cube: faces, edges and corners.
    static let directions: [Vector3] = {
        var d: [Vector3] = []
        for x in -1...1 {
            for y in -1...1 {
                for z in -1...1 where x != 0 || y != 0 || z != 0 {
                    d.append(Vector3(Double(x), Double(y), Double(z)).normalized)
                }
            }
        }
        return d
    }()
}
