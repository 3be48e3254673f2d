// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform
import TiltProtocol

/// Six-position accelerometer calibration.
///
/// The device is held still with each of its six faces up in turn (any order). Every still
/// stretch of at least `holdSeconds` becomes a *pose*: the mean raw acceleration, which at rest
/// is gravity alone. A pose whose dominant axis is within `faceToleranceDegrees` of vertical
/// counts for that face; other still poses are kept as extra data for the full 3×3 model.
///
/// `fit` finds `offset` and `M` so that `‖M·(a − offset)‖ = g` for every pose: first the
/// closed-form per-axis solution from opposite faces (offset = midpoint, scale = 2g / span),
/// then a Levenberg–Marquardt refinement over all poses. With enough distinct poses it also fits
/// a symmetric 3×3 `M` (scale + cross-axis) and keeps it only when it lowers the residual
/// meaningfully. The |g| residual is the RMS of ‖a_cal‖ − g over every still window.
public struct AccelCalibration: Sendable {
    /// A face of the device, named by the axis that points up (reads +g) when it lies on it.
    public enum Face: String, CaseIterable, Sendable, Comparable {
        case plusZ = "+Z"
        case minusZ = "-Z"
        case plusX = "+X"
        case minusX = "-X"
        case plusY = "+Y"
        case minusY = "-Y"

        /// 0, 1, 2 for x, y, z.
        public var axis: Int {
            switch self {
            case .plusX, .minusX: 0;
            case .plusY, .minusY: 1;
            case .plusZ, .minusZ: 2
            }
        }
        /// +1 when the axis points up, −1 when down.
        public var sign: Double {
            switch self {
            case .plusX, .plusY, .plusZ: 1;
            default: -1
            }
        }
        /// The order prompts ask for them in.
        public static func < (a: Face, b: Face) -> Bool {
            allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
        }

        /// The face that is up for a still reading `a`, if one axis is within `tolerance` degrees of vertical.
        public static func classify(_ a: Vector3, toleranceDegrees tolerance: Double) -> Face? {
            let n = a.norm
            guard n > 0 else { return nil }
            var best = 0
            for i in 1..<3 where abs(a[i]) > abs(a[best]) { best = i }
            guard abs(a[best]) / n >= cos(tolerance * .pi / 180) else { return nil }
            let up = a[best] > 0
            switch best {
            case 0: return up ? .plusX : .minusX
            case 1: return up ? .plusY : .minusY
            default: return up ? .plusZ : .minusZ
            }
        }
    }

    /// One still pose.
    public struct Pose: Sendable, Equatable {
        /// The face up, or nil for a pose between faces.
        public var face: Face?
        /// Mean raw acceleration over the pose, m/s².
        public var meanAccel: Vector3
        /// Means of the pose's windows (the residual is taken over these).
        public var windowMeans: [Vector3]
        /// When the pose began (sample time, ns).
        public var start: Nanoseconds
        /// How long it was held, seconds.
        public var seconds: Double
        fileprivate var sum: Vector3
        fileprivate var count: Int
    }

    /// What a window of samples meant for the calibration.
    public enum Event: Sendable, Equatable {
        /// Not still.
        case moving(String)
        /// Still on `face` (nil: between faces) for `seconds` so far, not yet long enough.
        case holding(face: Face?, seconds: Double)
        /// A pose was captured (`newFace` when it is the first pose on its face).
        case captured(Pose, newFace: Bool)
        /// Still on a pose that is already captured (it keeps refining it).
        case refining(face: Face?)
    }

    /// The result of `fit`.
    public struct Fit: Sendable, Equatable {
        /// Which accelerometer model was fitted.
        public enum Model: String, Sendable {
            case perAxis = "per-axis offset and scale"
            case full = "offset and full 3×3 matrix"
        }
        /// The model chosen (per-axis scale, or a full matrix when the poses support it).
        public var model: Model
        /// Offset to subtract, m/s².
        public var offset: Vector3
        /// Per-axis scale (the diagonal of the per-axis model, also kept when the full model wins).
        public var scale: Vector3
        /// The full model's matrix, when it was chosen.
        public var matrix: Matrix3?
        /// RMS of ‖a_cal‖ − g over all still windows, m/s²: with the calibration in use before, and after.
        public var residualBefore: Double, residualAfter: Double
        /// The per-axis model's residual, and the full model's (nil when there were too few poses to try it).
        public var residualPerAxis: Double, residualFull: Double?
        /// Poses and still windows the fit used.
        public var poses: Int, windows: Int

        /// `base` with this fit's accelerometer values (a per-axis fit clears any old matrix).
        public func applied(to base: IMUCalibration) -> IMUCalibration {
            var c = base
            c.accelOffset = offset; c.accelScale = scale; c.accelMatrix = matrix
            return c
        }
    }

    /// Standard gravity, m/s². Local gravity differs by at most ±0.3 %, below what this resolves.
    public static let gravity = 9.80665
    /// The full model needs this many poses (9 parameters + 3 to judge it).
    public static let posesForFullModel = 12

    /// Seconds a face must be held still to count.
    public let holdSeconds: Double
    /// How far from an axis (degrees) gravity may be and still name a face.
    public let faceToleranceDegrees: Double
    /// The poses captured so far, in order.
    public private(set) var poses: [Pose] = []
    private var detector: StillnessDetector
    /// The stretch in progress, and its index in `poses` once captured.
    private var current: Pose?
    private var currentIndex: Int?

    /// A calibration that captures poses held `holdSeconds`.
    public init(
        holdSeconds: Double = 2, faceToleranceDegrees: Double = 15,
        thresholds: StillnessThresholds = StillnessThresholds()
    ) {
        self.holdSeconds = holdSeconds
        self.faceToleranceDegrees = faceToleranceDegrees
        self.detector = StillnessDetector(thresholds: thresholds)
    }

    /// Faces with at least one pose.
    public var facesDone: Set<Face> { Set(poses.compactMap(\.face)) }
    /// Faces still needed, in prompt order.
    public var facesMissing: [Face] { Face.allCases.filter { !facesDone.contains($0) } }

    /// Adds a raw sample; returns an event each time a window closes.
    public mutating func add(_ s: IMUSample) -> Event? {
        guard let w = detector.add(s) else { return nil }
        return judge(w)
    }

    /// The input ended: judges the last partial window.
    public mutating func finish() -> Event? {
        guard let w = detector.flush() else { return nil }
        return judge(w)
    }

    private mutating func judge(_ w: StillnessWindow) -> Event {
        if !w.isStill { current = nil; currentIndex = nil; return .moving(w.motion ?? "moving") }
        if !w.continuesStretch || current == nil {
            current = Pose(
                face: nil, meanAccel: w.meanAccel, windowMeans: [], start: w.start, seconds: 0, sum: .zero, count: 0)
            currentIndex = nil
        }
        var p = current!
        p.windowMeans.append(w.meanAccel)
        p.sum += w.sumAccel; p.count += w.count
        p.meanAccel = p.sum / Double(p.count)
        p.seconds = Double(w.end - p.start) * 1e-9
        p.face = Face.classify(p.meanAccel, toleranceDegrees: faceToleranceDegrees)
        current = p
        if let i = currentIndex { poses[i] = p; return .refining(face: p.face) }
        if p.seconds + 1e-9 < holdSeconds - detector.thresholds.windowSeconds / 2 {
            return .holding(face: p.face, seconds: p.seconds)
        }
        let newFace = p.face.map { !facesDone.contains($0) } ?? false
        poses.append(p)
        currentIndex = poses.count - 1
        return .captured(p, newFace: newFace)
    }

    /// Fits the calibration. `current` is the calibration in use, for the "before" residual.
    public func fit(current: IMUCalibration = .none) throws(CalibrationError) -> Fit {
        let missing = facesMissing
        if !missing.isEmpty {
            throw CalibrationError(
                "missing faces: \(missing.map(\.rawValue).joined(separator: ", ")) "
                    + "(each of the six faces must be held up and still for \(fmt(holdSeconds, 0)) s)")
        }
        let g = Self.gravity
        let means = poses.map(\.meanAccel)
        let windows = poses.flatMap(\.windowMeans)

        // Closed form from opposite faces: the axis reads +g·s⁻¹ + o up and −g·s⁻¹ + o down.
        var o0 = Vector3.zero, s0 = Vector3(1, 1, 1)
        for axis in 0..<3 {
            let up = faceMean(axis: axis, sign: 1)[axis], down = faceMean(axis: axis, sign: -1)[axis]
            o0[axis] = (up + down) / 2
            s0[axis] = 2 * g / (up - down)
        }

        let perAxis = Self.levenbergMarquardt([o0.x, o0.y, o0.z, s0.x, s0.y, s0.z]) { p in
            let o = Vector3(p[0], p[1], p[2]), s = Vector3(p[3], p[4], p[5])
            return means.map { a in Vector3(s.x * (a.x - o.x), s.y * (a.y - o.y), s.z * (a.z - o.z)).norm - g }
        }
        let offset = Vector3(perAxis[0], perAxis[1], perAxis[2]), scale = Vector3(perAxis[3], perAxis[4], perAxis[5])
        let diag = Matrix3(Vector3(scale.x, 0, 0), Vector3(0, scale.y, 0), Vector3(0, 0, scale.z))
        let residualPerAxis = Self.residual(windows, matrix: diag, offset: offset)

        var fit = Fit(
            model: .perAxis, offset: offset, scale: scale, matrix: nil,
            residualBefore: Self.residual(windows, matrix: current.effectiveAccelMatrix, offset: current.accelOffset),
            residualAfter: residualPerAxis, residualPerAxis: residualPerAxis, residualFull: nil,
            poses: poses.count, windows: windows.count)

        if poses.count >= Self.posesForFullModel {
            let p = Self.levenbergMarquardt([offset.x, offset.y, offset.z, scale.x, scale.y, scale.z, 0, 0, 0]) { p in
                let o = Vector3(p[0], p[1], p[2]), m = Self.symmetric(p)
                return means.map { a in (m * (a - o)).norm - g }
            }
            let o = Vector3(p[0], p[1], p[2]), m = Self.symmetric(p)
            let r = Self.residual(windows, matrix: m, offset: o)
            fit.residualFull = r
            // Three more parameters are worth it only for a clear gain: 30 % and 3 mm/s² (0.3 mg).
            if r <= 0.7 * residualPerAxis && residualPerAxis - r >= 0.003 && Self.plausible(m) {
                fit.model = .full; fit.offset = o; fit.matrix = m; fit.residualAfter = r
            }
        }
        try Self.validate(fit)
        return fit
    }

    private func faceMean(axis: Int, sign: Double) -> Vector3 {
        var sum = Vector3.zero, n = 0
        for p in poses where p.face?.axis == axis && p.face?.sign == sign { sum += p.sum; n += p.count }
        return sum / Double(n)
    }

    /// RMS of ‖M(a − o)‖ − g over `samples`.
    public static func residual(_ samples: [Vector3], matrix m: Matrix3, offset o: Vector3) -> Double {
        guard !samples.isEmpty else { return 0 }
        var ss = 0.0
        for a in samples { let r = (m * (a - o)).norm - gravity; ss += r * r }
        return (ss / Double(samples.count)).squareRoot()
    }

    /// The symmetric matrix [[p3, p6, p7], [p6, p4, p8], [p7, p8, p5]]. A symmetric M is enough:
    /// ‖M·v‖ cannot tell M from R·M for a rotation R, so only the symmetric part is observable.
    static func symmetric(_ p: [Double]) -> Matrix3 {
        Matrix3(Vector3(p[3], p[6], p[7]), Vector3(p[6], p[4], p[8]), Vector3(p[7], p[8], p[5]))
    }

    /// Cross-axis terms beyond 0.2 are no real sensor; they mean the fit ran off on too little data.
    static func plausible(_ m: Matrix3) -> Bool {
        let off = [m.r0.y, m.r0.z, m.r1.z]
        return off.allSatisfy { abs($0) <= 0.2 } && [m.r0.x, m.r1.y, m.r2.z].allSatisfy { (0.8...1.2).contains($0) }
    }

    /// The same bounds the config loader applies, so a fit that would not load is never written.
    static func validate(_ f: Fit) throws(CalibrationError) {
        let limit = 2 * gravity
        for (i, name) in ["x", "y", "z"].enumerated() {
            guard f.offset[i].isFinite, abs(f.offset[i]) <= limit else {
                throw CalibrationError(
                    "fit is implausible: offset \(name) \(fmt(f.offset[i], 3)) m/s² beyond ±\(fmt(limit, 2)); were the faces held still?"
                )
            }
            guard f.scale[i].isFinite, (0.8...1.2).contains(f.scale[i]) else {
                throw CalibrationError(
                    "fit is implausible: scale \(name) \(fmt(f.scale[i], 4)) outside 0.8…1.2; were the faces held still?"
                )
            }
        }
        guard f.residualAfter.isFinite else { throw CalibrationError("fit did not converge") }
    }

    /// Minimises Σ rᵢ(p)² by Levenberg–Marquardt with a numerical Jacobian. Small problems only
    /// (≤ 9 parameters, tens of residuals), so plain normal equations are fine.
    static func levenbergMarquardt(
        _ start: [Double], iterations: Int = 100,
        _ residuals: ([Double]) -> [Double]
    ) -> [Double] {
        var p = start
        var r = residuals(p)
        var cost = r.reduce(0) { $0 + $1 * $1 }
        var lambda = 1e-3
        let n = p.count
        for _ in 0..<iterations {
            // Jacobian by central differences.
            var jac = [[Double]](repeating: [Double](repeating: 0, count: n), count: r.count)
            for j in 0..<n {
                let h = 1e-7 * max(1, abs(p[j]))
                var hi = p, lo = p
                hi[j] += h; lo[j] -= h
                let rh = residuals(hi), rl = residuals(lo)
                for i in 0..<r.count { jac[i][j] = (rh[i] - rl[i]) / (2 * h) }
            }
            var jtj = [[Double]](repeating: [Double](repeating: 0, count: n), count: n)
            var jtr = [Double](repeating: 0, count: n)
            for i in 0..<r.count {
                for a in 0..<n {
                    jtr[a] += jac[i][a] * r[i]
                    for b in 0..<n { jtj[a][b] += jac[i][a] * jac[i][b] }
                }
            }
            var improved = false
            for _ in 0..<10 {
                var m = jtj
                for a in 0..<n { m[a][a] += lambda * max(jtj[a][a], 1e-12) }
                guard let step = solve(m, jtr.map { -$0 }) else { lambda *= 10; continue }
                let trial = zip(p, step).map(+)
                let rt = residuals(trial)
                let ct = rt.reduce(0) { $0 + $1 * $1 }
                if ct.isFinite && ct < cost {
                    let gain = cost - ct
                    p = trial; r = rt; cost = ct
                    lambda = max(lambda / 10, 1e-12)
                    improved = true
                    if gain < 1e-18 + 1e-12 * cost { return p }
                    break
                }
                lambda *= 10
            }
            if !improved { break }
        }
        return p
    }

    /// Solves A·x = b by Gaussian elimination with partial pivoting; nil when A is singular.
    static func solve(_ a: [[Double]], _ b: [Double]) -> [Double]? {
        let n = b.count
        var m = a, v = b
        for c in 0..<n {
            var pivot = c
            for r in (c + 1)..<max(n, c + 1) where abs(m[r][c]) > abs(m[pivot][c]) { pivot = r }
            guard abs(m[pivot][c]) > 1e-300 else { return nil }
            m.swapAt(c, pivot); v.swapAt(c, pivot)
            for r in (c + 1)..<max(n, c + 1) {
                let f = m[r][c] / m[c][c]
                if f == 0 { continue }
                for k in c..<n { m[r][k] -= f * m[c][k] }
                v[r] -= f * v[c]
            }
        }
        var x = [Double](repeating: 0, count: n)
        for r in stride(from: n - 1, through: 0, by: -1) {
            var s = v[r]
            for k in (r + 1)..<max(n, r + 1) { s -= m[r][k] * x[k] }
            x[r] = s / m[r][r]
        }
        return x
    }
}
