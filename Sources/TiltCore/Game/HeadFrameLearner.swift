import Glibc

/// Learns the head frame from ordinary wear, for a wearer who never ran `tiltd calibrate neutral`
/// (issue 30). Pure and streaming; fed the calibrated accelerometer, the angular rate and the
/// activity the game sees (`ActivityTracker`). Samples are averaged into 40 ms bins (25 Hz).
///
/// - **Up**: the mean accelerometer over walking (the head is upright on average while walking:
///   the steps' accelerations average out, gravity stays).
/// - **Ear-to-ear axis**: walking bobs the head about the ear-to-ear axis once per *step*, while
///   the body's sway rolls and yaws it once per *stride* (two steps). Over each 4 s of walking,
///   the step frequency is the peak of the vertical acceleration's spectrum in 1.0–2.6 Hz
///   (walking cadence, slow to brisk); the rate perpendicular to up is taken at that frequency
///   and at half of it (Fourier coefficients, Hann window), and their 3 × 3 power matrices, each
///   normalised to unit trace, are summed over the windows: step minus stride. Its principal
///   axis is the pitch axis; what rolls at the stride frequency is pushed away from it.
/// - **Its sign** (which way is forward): two cues, summed. Looking down tips gravity toward the
///   back of the head, and people look down (to read, to a phone, to the floor) far more than up:
///   outside walking, the accelerometer's departures from up (15–60°, turning under 60 °/s)
///   point backward. While walking, the head's forward acceleration goes with its (leaky
///   integrated) vertical speed: 6 of the 8 everyday walkers; the sign is this population's, not
///   derived, and it is the weaker cue (a vote in [-1, 1] like the other).
///
/// The frame is given (`frame`, source `learned`) once `minWalkingWindows` windows of walking
/// (40 s) were seen and the sign cue is clear; it is then updated as evidence grows.
public struct HeadFrameLearner: Sendable, Equatable {
    static let binNs: Nanoseconds = 40_000_000
    static let window = 100
    static let hop = 50
    /// Windows of walking (4 s each, hopping 2 s) before a frame is given: 20 s of walking or more.
    public static let minWalkingWindows = 8
    static let stepHz = (low: 1.0, high: 2.6, step: 0.02)

    /// The learned frame, once confident (source `learned`).
    public private(set) var frame: HeadFrame?
    /// Walking windows used so far.
    public private(set) var walkingWindows = 0
    /// The sign cues' last votes (looking down, walking's pendulum), for diagnosis.
    public private(set) var lastVotes = [0.0, 0.0]

    private var binStart: Nanoseconds?
    private var binAccel = Vector3.zero
    private var binRate = Vector3.zero
    private var binCount = 0
    private var binWalking = true
    private var accelRing = [Vector3](repeating: .zero, count: window)
    private var rateRing = [Vector3](repeating: .zero, count: window)
    private var walkingRing = [Bool](repeating: false, count: window)
    private var filled = 0
    private var head = 0
    private var sinceWindow = 0
    private var upSum = Vector3.zero
    private var upCount = 0
    private var pitchMatrix = [Double](repeating: 0, count: 9)
    /// Accelerometer directions outside walking (sensor frame, unit), one per 0.2 s, the last
    /// `maxLooks` (30 min): where the head looked.
    private var looks: [Vector3] = []
    private var lookHead = 0
    private var lastLook: Nanoseconds?
    static let lookEveryNs: Nanoseconds = 200_000_000
    static let maxLooks = 9000
    /// Looks departing 15–60° from up needed before that cue decides the sign (10 s of them).
    static let minLooks = 50
    /// Summed horizontal acceleration × vertical speed while walking (sensor frame).
    private var pendulum = Vector3.zero
    private var pendulumCount = 0
    private var verticalSpeed = 0.0

    /// A learner that has seen nothing.
    public init() {}

    /// Feeds one sample: the calibrated accelerometer (m/s²), the angular rate (rad/s), and the
    /// activity the game sees at it.
    public mutating func add(t: Nanoseconds, accel: Vector3, rate: Vector3, activity: Activity) {
        guard accel.x.isFinite, accel.y.isFinite, accel.z.isFinite, rate.x.isFinite, rate.y.isFinite,
            rate.z.isFinite
        else { return }
        if activity != .walking, activity != .running, activity != .notWorn {
            noteLookDown(t: t, accel: accel, rate: rate)
        }
        if binStart == nil { binStart = t }
        if t - binStart! >= Self.binNs {
            if binCount > 0 { closeBin() }
            binStart = t - (t - binStart!) % Self.binNs
            binAccel = .zero; binRate = .zero; binCount = 0; binWalking = true
        }
        binAccel = binAccel + accel
        binRate = binRate + rate
        binCount += 1
        binWalking = binWalking && activity == .walking
    }

    private mutating func noteLookDown(t: Nanoseconds, accel: Vector3, rate: Vector3) {
        // One direction every 0.2 s while turning under 60 °/s: judged against up when a frame is made.
        guard rate.norm < 60 * .pi / 180, lastLook.map({ t - $0 >= Self.lookEveryNs }) ?? true else { return }
        lastLook = t
        let d = accel.normalized
        guard d.norm > 0.5 else { return }
        if looks.count < Self.maxLooks { looks.append(d) } else { looks[lookHead] = d }
        lookHead = (lookHead + 1) % Self.maxLooks
    }

    /// The mean departure from `up` (unit vectors, 15–60° away) of the looks kept, and how many.
    private func lookDown(up: Vector3) -> (sum: Vector3, count: Int) {
        let cos15 = cos(15 * Double.pi / 180)
        let cos60 = cos(60 * Double.pi / 180)
        var sum = Vector3.zero
        var n = 0
        for d in looks {
            let c = d.dot(up)
            guard c > cos60, c < cos15 else { continue }
            sum = sum + (d - up * c).normalized
            n += 1
        }
        return (sum, n)
    }

    /// Forgets that the last 4 s were walking (the game calls it when it saw a nod or a shake:
    /// continuous nodding or shaking reads as steps in part, and would teach a wrong axis).
    public mutating func dropWindow() {
        for i in 0..<Self.window { walkingRing[i] = false }
        binWalking = false
    }

    private mutating func closeBin() {
        let n = Double(binCount)
        accelRing[head] = binAccel / n
        rateRing[head] = binRate / n
        walkingRing[head] = binWalking
        head = (head + 1) % Self.window
        filled = min(Self.window, filled + 1)
        sinceWindow += 1
        if binWalking {
            let a = binAccel / n
            upSum = upSum + a
            upCount += 1
            // The inverted pendulum: horizontal acceleration against the (leaky) vertical speed.
            let up = upSum.normalized
            let vertical = a.dot(up) - upSum.norm / Double(upCount)
            verticalSpeed = verticalSpeed * 0.96 + vertical * 0.04
            pendulum = pendulum + (a - up * a.dot(up)) * verticalSpeed
            pendulumCount += 1
        } else {
            verticalSpeed = 0
        }
        if filled == Self.window, sinceWindow >= Self.hop {
            sinceWindow = 0
            if walkingRing.reduce(0, { $0 + ($1 ? 1 : 0) }) >= Self.window / 2 { addWindow() }
        }
    }

    /// One 4 s window of walking: the step frequency, then the step and stride power matrices.
    private mutating func addWindow() {
        let n = Self.window
        let up = upSum.normalized
        var vertical = [Double](repeating: 0, count: n)
        var horizontal = [Vector3](repeating: .zero, count: n)
        var meanV = 0.0
        var meanH = Vector3.zero
        for i in 0..<n {
            let k = (head + i) % n
            vertical[i] = accelRing[k].dot(up)
            horizontal[i] = rateRing[k] - up * rateRing[k].dot(up)
            meanV += vertical[i] / Double(n)
            meanH = meanH + horizontal[i] / Double(n)
        }
        var hann = [Double](repeating: 0, count: n)
        for i in 0..<n {
            vertical[i] -= meanV
            horizontal[i] = horizontal[i] - meanH
            hann[i] = 0.5 - 0.5 * cos(2 * .pi * Double(i) / Double(n - 1))
        }
        let dt = Double(Self.binNs) * 1e-9
        var bestHz = 0.0
        var bestPower = -1.0
        var f = Self.stepHz.low
        while f <= Self.stepHz.high + 1e-9 {
            var re = 0.0
            var im = 0.0
            for i in 0..<n {
                let phase = 2 * .pi * f * Double(i) * dt
                re += vertical[i] * hann[i] * cos(phase)
                im -= vertical[i] * hann[i] * sin(phase)
            }
            if re * re + im * im > bestPower { bestPower = re * re + im * im; bestHz = f }
            f += Self.stepHz.step
        }
        let step = Self.power(horizontal, hann: hann, hz: bestHz, dt: dt)
        let stride = Self.power(horizontal, hann: hann, hz: bestHz / 2, dt: dt)
        let ts = step[0] + step[4] + step[8]
        let tr = stride[0] + stride[4] + stride[8]
        guard ts > 0, tr > 0 else { return }
        for i in 0..<9 { pitchMatrix[i] += step[i] / ts - stride[i] / tr }
        walkingWindows += 1
        updateFrame()
    }

    /// The real part of the cross-spectral matrix of `x` at `hz` (row-major 3 × 3).
    static func power(_ x: [Vector3], hann: [Double], hz: Double, dt: Double) -> [Double] {
        var re = Vector3.zero
        var im = Vector3.zero
        for i in 0..<x.count {
            let phase = 2 * .pi * hz * Double(i) * dt
            re = re + x[i] * (hann[i] * cos(phase))
            im = im - x[i] * (hann[i] * sin(phase))
        }
        let r = [re.x, re.y, re.z]
        let m = [im.x, im.y, im.z]
        var out = [Double](repeating: 0, count: 9)
        for i in 0..<3 { for j in 0..<3 { out[3 * i + j] = r[i] * r[j] + m[i] * m[j] } }
        return out
    }

    /// The principal axis of a symmetric 3 × 3 matrix (power iteration on its positive shift).
    static func principalAxis(_ m: [Double]) -> Vector3 {
        // Shift by the Gershgorin bound so the largest eigenvalue is also the largest in modulus.
        var bound = 0.0
        for i in 0..<3 { bound = max(bound, abs(m[3 * i]) + abs(m[3 * i + 1]) + abs(m[3 * i + 2])) }
        var v = Vector3(0.577, 0.577, 0.577)
        for _ in 0..<200 {
            let w = Vector3(
                m[0] * v.x + m[1] * v.y + m[2] * v.z + bound * v.x,
                m[3] * v.x + m[4] * v.y + m[5] * v.z + bound * v.y,
                m[6] * v.x + m[7] * v.y + m[8] * v.z + bound * v.z)
            guard w.norm > 0 else { break }
            v = w.normalized
        }
        return v
    }

    private mutating func updateFrame() {
        guard walkingWindows >= Self.minWalkingWindows else { return }
        let up = upSum.normalized
        let axis = Self.principalAxis(pitchMatrix)
        let left = axis - up * axis.dot(up)
        guard left.norm > 0.5 else { return }
        var forward = left.normalized.cross(up)
        // Sign votes, each in [-1, 1]: + means `forward` is right.
        let down = lookDown(up: up)
        let downVote = down.count > 0 ? -down.sum.dot(forward) / Double(down.count) : 0
        let pendulumVote = pendulumCount > 0 && pendulum.norm > 0 ? pendulum.dot(forward) / pendulum.norm : 0
        lastVotes = [downVote, pendulumVote]
        // Looking down decides when it was seen clearly; else the pendulum, the weaker cue.
        let vote = down.count >= Self.minLooks && abs(downVote) >= 0.1 ? downVote : pendulumVote
        guard abs(vote) > 0.1 else { return }
        if vote < 0 { forward = -forward }
        frame = HeadFrame(up: up, forward: forward, source: .learned)
    }
}
