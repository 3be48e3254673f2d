// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Learns the head frame from ordinary wear, for a wearer who never ran `tiltd calibrate neutral`
/// (issue 30). Pure and streaming; fed the calibrated accelerometer, the angular rate and the
/// activity the game sees (`ActivityTracker`). Samples are averaged into 40 ms bins (25 Hz).
///
/// - **Up**: the head's usual carriage while walking (`walkingUp`): each 4 s window of walking
///   gives the mean accelerometer direction of its quiet instants (`quietDps`; the steps'
///   accelerations average out, gravity stays), and up is the densest cluster of those
///   (`clusterDeg`), not their mean. Walkers look
///   ahead most of the time and keep coming back to it; glances at the floor, stairs watched step
///   by step and bending to pick things up tip the head by many different amounts, so they spread
///   out while the carriage piles up. (The mean was pulled 23° forward by stairs and pick-ups.)
/// - **Ear-to-ear axis**: outside walking (and running, and off the head) the head tilts mostly
///   about it — looking down at a desk or a phone and back up, bending to pick something up,
///   standing up — and little about the front-to-back axis (a neck flexes forward far more often
///   than it bends sideways). The rate perpendicular to gravity at each moment (turning about the
///   vertical, looking around, drops out whatever the pose) is summed into a 3 × 3 power matrix
///   over the 40 ms bins tilting at 10 °/s or more (slower is a held head's sway); its principal
///   axis is the ear-to-ear axis, once 2 s of such tilting were seen. Up is then made
///   perpendicular to it (**ears level**): a carriage rolled while walking does not roll the frame.
///   The walking bob (`walkWeight`, 0 by default; alone until tilts are seen): walking bobs the
///   head about the ear-to-ear axis once per *step*, while the body's sway rolls and yaws it once
///   per *stride*; over each 4 s of walking, the step frequency is the peak of the vertical
///   acceleration's spectrum in 1.0–2.6 Hz, the rate perpendicular to up is taken at that
///   frequency and at half of it (Fourier coefficients, Hann window), and their 3 × 3 power
///   matrices, each normalised to unit trace, are summed: step minus stride.
/// - **Its sign** (which way is forward): looking down tips gravity toward the back of the head,
///   and people look down (to read, to a phone, to the floor) far more than up: outside walking,
///   the accelerometer's departures from up by `lookMinDeg`–60° (turning under 60 °/s) point
///   backward. No other cue: without looks there is no frame, since a frame the wrong way round
///   swaps `correct` and `skip`.
///
/// The frame is given (`frame`, source `learned`) once `minWalkingWindows` windows of walking
/// were seen and the sign cue is clear; it is then updated as evidence grows, and withdrawn
/// (nil) while the sign cue is unclear.
public struct HeadFrameLearner: Sendable, Equatable {
    static let binNs: Nanoseconds = 40_000_000
    static let window = 100
    static let hop = 50
    /// Windows of walking (4 s each, hopping 2 s) before a frame is given: 20 s of walking or more.
    public static let minWalkingWindows = 8
    static let stepHz = (low: 1.0, high: 2.6, step: 0.02)
    /// Windows whose carriage is kept for `walkingUp` (the last 30 min of walking).
    static let maxWindows = 900

    /// The radius of the carriage cluster, degrees (`walkingUp`): well under the 20–50° of
    /// watching stairs or bending. Leave-one-person-out on the everyday set, jointly with
    /// `quietDps` (docs/game-everyday.md): 5° on every fold (10° before the quiet carriage).
    public var clusterDeg = 5.0
    /// The smallest departure from up that counts as a look, degrees: at least twice the
    /// carriage's cluster radius, so the carriage's own spread and the error of up do not vote.
    /// Reading and typing are 20–40° down. Leave-one-person-out: 20 or 25 on every fold (20 with
    /// the quiet carriage).
    public var lookMinDeg = 20.0

    /// How much the walking bob weighs against the head's tilts outside walking in the
    /// ear-to-ear axis (`updateFrame`): the step − stride matrix, averaged over the windows, times
    /// this, plus the tilt matrix scaled to unit trace. 0: the tilts alone (the default: the bob
    /// was right for about half the people of the everyday set, the tilts for more; weights
    /// 0.5–5 put fewer within 15°, see docs/game-everyday.md). Without tilts seen, the bob alone.
    public var walkWeight = 0.0

    /// The share of a 4 s window's bins the activity tracker must call `walking` for the window
    /// to count (its walking bins alone enter up). 0.5 by default; 0.1–0.35 and 0.75 were no
    /// better (docs/game-everyday.md).
    public var minWalkingShare = 0.5

    /// A window's carriage is the mean accelerometer of its walking bins turning slower than this,
    /// °/s (the gait's quiet instants, when the head is not swinging through its bob; the steps'
    /// accelerations still average out over them): `quietBinsMin` of them or more, else all its
    /// walking bins. Under the 10–40 °/s of a walking head's swings, over the 0.5–4 °/s of a held
    /// head's sway. Leave-one-person-out on the everyday set, jointly with `clusterDeg`: 7.5 on
    /// seven folds, 12.5 on the eighth (docs/game-everyday.md). `.infinity`: every walking bin
    /// (the carriage until then).
    public var quietDps = 7.5
    /// The fewest quiet bins that give a window's carriage (`quietDps`); with fewer, all its walking bins.
    public var quietBinsMin = 1

    /// The learned frame, once confident (source `learned`).
    public private(set) var frame: HeadFrame?
    /// Walking windows used so far.
    public private(set) var walkingWindows = 0
    /// The sign cue's last vote (looking down, in [-1, 1]; + = the axis' own forward), for diagnosis.
    public private(set) var lastVote = 0.0
    /// The looks that vote counted.
    public private(set) var lastLooks = 0

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
    /// Each counted window's mean walking accelerometer direction (unit), the last `maxWindows`.
    private var windowUps: [Vector3] = []
    /// Up as last estimated: `walkingUp` once there are `minWalkingWindows`, the mean before.
    private var up = Vector3.zero
    private var pitchMatrix = [Double](repeating: 0, count: 9)
    /// Σ w⊥ w⊥ᵀ of the rate perpendicular to gravity outside walking (sensor frame, 40 ms bins):
    /// the head's tilts, which are mostly nods (see `updateFrame`).
    private var tiltMatrix = [Double](repeating: 0, count: 9)
    private var binTilting = true
    /// The 40 ms bins that went into `tiltMatrix`.
    private var tiltBins = 0
    /// A bin tilts at 10 °/s or more about the horizontal (rad/s).
    static let minTiltRate = 10 * Double.pi / 180
    /// Tilting bins before they decide the axis: 2 s of it (a few looks down and back up).
    static let minTiltBins = 50
    /// Accelerometer directions outside walking (sensor frame, unit), one per 0.2 s, the last
    /// `maxLooks` (30 min): where the head looked.
    private var looks: [Vector3] = []
    private var lookHead = 0
    private var lastLook: Nanoseconds?
    static let lookEveryNs: Nanoseconds = 200_000_000
    static let maxLooks = 9000
    /// Looks departing `lookMinDeg`–60° from up needed before the sign is decided (10 s of them).
    static let minLooks = 50

    /// A learner that has seen nothing.
    public init() {}

    /// Feeds one sample: the calibrated accelerometer (m/s²), the angular rate (rad/s), and the
    /// activity the game sees at it.
    public mutating func add(t: Nanoseconds, accel: Vector3, rate: Vector3, activity: Activity) {
        guard accel.x.isFinite, accel.y.isFinite, accel.z.isFinite, rate.x.isFinite, rate.y.isFinite,
            rate.z.isFinite
        else { return }
        // Time that goes back (another recording replayed into the same learner) starts a new bin.
        if binStart.map({ t < $0 }) ?? true {
            binStart = t; binAccel = .zero; binRate = .zero; binCount = 0; binWalking = true; binTilting = true
        }
        if let last = lastLook, t < last { lastLook = nil }
        if t - binStart! >= Self.binNs {
            if binCount > 0 { closeBin() }
            binStart = t - (t - binStart!) % Self.binNs
            binAccel = .zero; binRate = .zero; binCount = 0; binWalking = true; binTilting = true
        }
        if activity != .walking, activity != .running, activity != .notWorn {
            noteLookDown(t: t, accel: accel, rate: rate)
        }
        binAccel = binAccel + accel
        binRate = binRate + rate
        binCount += 1
        binWalking = binWalking && activity == .walking
        binTilting = binTilting && activity != .walking && activity != .running && activity != .notWorn
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

    /// The summed departure from `up` (unit vectors, `lookMinDeg`–60° away) of the looks kept, and how many.
    private func lookDown(up: Vector3) -> (sum: Vector3, count: Int) {
        let cosMin = cos(lookMinDeg * Double.pi / 180)
        let cos60 = cos(60 * Double.pi / 180)
        var sum = Vector3.zero
        var n = 0
        for d in looks {
            let c = d.dot(up)
            guard c > cos60, c < cosMin else { continue }
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
        if binWalking { upSum = upSum + binAccel / n }
        if binTilting, binAccel.norm > 0 {
            // The rate about the horizontal at this moment: turning about the vertical (looking
            // around) drops out whatever the head's pose, tilting (nods, looking down, bending)
            // stays.
            // Under 10 °/s is a held head's sway (0.5–4 °/s) and the sensor's noise: no tilt.
            let g = binAccel.normalized
            let w = binRate / n
            let h = w - g * w.dot(g)
            if h.norm >= Self.minTiltRate {
                let v = [h.x, h.y, h.z]
                for i in 0..<3 { for j in 0..<3 { tiltMatrix[3 * i + j] += v[i] * v[j] } }
                tiltBins += 1
            }
        }
        if filled == Self.window, sinceWindow >= Self.hop {
            sinceWindow = 0
            let walking = walkingRing.reduce(0, { $0 + ($1 ? 1 : 0) })
            if walking > 0, Double(walking) >= minWalkingShare * Double(Self.window) { addWindow() }
        }
    }

    /// One 4 s window of walking: the step frequency, then the step and stride power matrices.
    private mutating func addWindow() {
        let n = Self.window
        // The carriage from the gait's quiet instants (the bins turning under `quietDps`), not
        // from all of the window: on the everyday set's walking recordings the quiet instants'
        // direction was 1.5–4° nearer the standing pose than the whole walk's for the people
        // whose up was measured standing (why the swinging instants lean forward is not
        // established; docs/game-everyday.md).
        var sum = Vector3.zero
        let quiet = quietDps * Double.pi / 180
        var quietBins = 0
        for i in 0..<n where walkingRing[i] && rateRing[i].norm < quiet {
            sum = sum + accelRing[i]
            quietBins += 1
        }
        if quietBins < quietBinsMin {
            sum = .zero
            for i in 0..<n where walkingRing[i] { sum = sum + accelRing[i] }
        }
        if sum.norm > 0 {
            if windowUps.count >= Self.maxWindows { windowUps.removeFirst() }
            windowUps.append(sum.normalized)
        }
        up =
            windowUps.count >= Self.minWalkingWindows
            ? Self.walkingUp(windowUps, radiusDeg: clusterDeg) : upSum.normalized
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

    /// The head's usual carriage while walking: the densest cluster of the windows' gravity
    /// directions. Walkers look ahead most of the time and return to it; glances at the floor,
    /// stairs watched step by step and bending to pick things up tip the head by many different
    /// amounts, so they spread out while the carriage piles up. The window with the most others
    /// within `radiusDeg`, then the mean of those within `radiusDeg` of the mean, repeated.
    static func walkingUp(_ ups: [Vector3], radiusDeg: Double) -> Vector3 {
        let c = cos(radiusDeg * .pi / 180)
        var best = 0
        var bestCount = -1
        for i in ups.indices {
            var k = 0
            for j in ups.indices where ups[i].dot(ups[j]) > c { k += 1 }
            if k > bestCount { bestCount = k; best = i }
        }
        var g = ups[best]
        for _ in 0..<20 {
            var sum = Vector3.zero
            for u in ups where u.dot(g) > c { sum = sum + u }
            let next = sum.normalized
            if next.dot(g) > 1 - 1e-12 { break }
            g = next
        }
        return g
    }

    private mutating func updateFrame() {
        guard walkingWindows >= Self.minWalkingWindows else { return }
        var up = self.up
        let tiltTrace = tiltBins >= Self.minTiltBins ? tiltMatrix[0] + tiltMatrix[4] + tiltMatrix[8] : 0
        var m = pitchMatrix.map { $0 * (tiltTrace > 0 ? walkWeight : 1) / Double(walkingWindows) }
        if tiltTrace > 0 { for i in 0..<9 { m[i] += tiltMatrix[i] / tiltTrace } }
        let axis = Self.principalAxis(m)
        if tiltTrace > 0 {
            // Ears level: up is perpendicular to the axis the head nods about, so a carriage
            // rolled while walking (or glasses sitting crooked then) does not roll the frame.
            let level = up - axis * up.dot(axis)
            if level.norm > 0.5 { up = level.normalized }
        }
        let left = axis - up * axis.dot(up)
        guard left.norm > 0.5 else { return }
        var forward = left.normalized.cross(up)
        // The sign's vote, in [-1, 1]: + means `forward` is right.
        let down = lookDown(up: up)
        let downVote = down.count > 0 ? -down.sum.dot(forward) / Double(down.count) : 0
        lastVote = downVote
        lastLooks = down.count
        // Only a clear vote from enough looks decides. A frame whose sign has become unclear is
        // withdrawn: the looks are judged against up, and an up that moved (or looks that went
        // both ways) leave the earlier sign without support; no frame beats a reversed one.
        guard down.count >= Self.minLooks, abs(downVote) >= 0.1 else { frame = nil; return }
        if downVote < 0 { forward = -forward }
        frame = HeadFrame(up: up, forward: forward, source: .learned)
    }
}
