// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// A head gesture found in the angular rate: a nod (yes) or a shake (no).
public struct HeadGesture: Sendable, Equatable {
    /// What the head did.
    public enum Kind: String, Sendable, CaseIterable {
        /// A down-then-up rotation about the ear-to-ear axis.
        case nod
        /// Left-right-left (or right-left-right) rotations about the vertical axis.
        case shake
    }
    /// Nod or shake.
    public var kind: Kind
    /// When the first half-swing of this cycle started (sample time).
    public var start: Nanoseconds
    /// When the cycle completed: the sample at which it was reported.
    public var end: Nanoseconds
    /// The largest half-swing of the cycle, degrees.
    public var amplitudeDeg: Double
    /// Cycles reported so far in this unbroken run of swings (1 for the first).
    public var cycle: Int
    /// The fastest rate of the cycle's half-swings, °/s.
    public var peakDps: Double = 0
    /// When the run of swings this cycle belongs to began (its first counted half-swing), and
    /// how many half-swings it has counted so far (`GestureFeatures` reads the whole run).
    public var runStart: Nanoseconds = 0
    /// See `runStart`.
    public var runSwings = 0
}

/// Finds nods and shakes in the head's angular rate (head frame, see `HeadFrame`). Pure and
/// streaming: feed every sample, get a gesture when a cycle completes.
///
/// **Method.** Each axis' rate (nod: about the ear-to-ear axis; shake: about the vertical axis)
/// is cut into *half-swings*: runs of one sign above a 2 °/s dead band. A half-swing counts
/// when it peaks at `minPeakDps` or more, sweeps `minSwingDeg` or more, and lasts at most
/// `maxSwingSeconds`. Counted half-swings make a *run* while each starts within `maxGapSeconds`
/// of the previous one's end, has the opposite sign, is within `maxSwingRatio` of its size
/// (the head comes back to where it was), and the pair turns more about its own axis than
/// about the other one. A nod is a down swing followed by an up swing (each such pair in a run
/// is one cycle). A shake needs three swings before its first cycle is reported, then one cycle
/// per further pair. A swing that is too slow, too long, or followed by a pause ends the run.
///
/// **Why these rules** (docs/game.md has the measurements): looking around is one long swing,
/// or a swing, a pause, and a swing back — the pause or the length ends the run; looking down at
/// something has a pause at the bottom; a glance left and straight back is two swings, not the
/// three a shake's first cycle needs (the game asks two cycles of an answer: `AnswerLimits`); walking and talking move the head by a few degrees at well under the
/// 40 °/s a half-swing needs (walking's pitch bobbing is 2–3° at about 2 Hz, ≈ 30 °/s).
public struct GestureDetector: Sendable {
    /// Limits of a gesture. Defaults chosen on the head-gestures recordings (docs/game.md).
    public struct Parameters: Sendable, Equatable {
        /// Smallest peak rate of a half-swing, °/s.
        public var minPeakDps: Double = 40
        /// Smallest angle a half-swing sweeps, degrees.
        public var minSwingDeg: Double = 3
        /// Longest half-swing, seconds (a slower turn is looking around, not a gesture).
        public var maxSwingSeconds: Double = 0.8
        /// Longest pause between two half-swings of one gesture, seconds.
        public var maxGapSeconds: Double = 0.15
        /// Largest ratio between two consecutive half-swings (the head must come back).
        public var maxSwingRatio: Double = 6
        /// Half-swings before the first shake is reported (2 = one left-right).
        public var shakeSwings: Int = 3
        /// Whether a nod may begin with the face going up. Off, an up swing opens nothing, and
        /// `GestureReader` runs a second detector on the reversed axis for nods begun upward; on,
        /// one detector finds both (what the classifier's candidates use: half the cost).
        public var nodEitherWay = false
        /// The defaults.
        public init() {}
    }

    /// The limits in force.
    public let parameters: Parameters
    private var nod = Axis()
    private var shake = Axis()
    private var lastT: Nanoseconds?

    /// A detector with `parameters`.
    public init(parameters: Parameters = Parameters()) { self.parameters = parameters }

    /// Forgets any swing in progress (e.g. after a gap in the samples).
    public mutating func reset() { nod = Axis(); shake = Axis(); lastT = nil }

    /// Feeds one sample: `pitch` (about the ear-to-ear axis, + = face down) and `yaw` (about the
    /// vertical axis), rad/s. Returns the gestures that completed at this sample (at most two).
    public mutating func add(t: Nanoseconds, pitch: Double, yaw: Double) -> [HeadGesture] {
        // A long hole in the samples breaks any gesture; a backward time is ignored.
        guard let last = lastT else { lastT = t; return [] }
        guard t > last else { return [] }
        let dt = Double(t - last) * 1e-9
        lastT = t
        if dt > 0.25 { nod = Axis(); shake = Axis(); return [] }
        let p = pitch * 180 / .pi, y = yaw * 180 / .pi
        var out: [HeadGesture] = []
        if let g = nod.add(t: t, dt: dt, rate: p, other: y, kind: .nod, parameters) { out.append(g) }
        if let g = shake.add(t: t, dt: dt, rate: y, other: p, kind: .shake, parameters) { out.append(g) }
        return out
    }

    /// One half-swing: a run of one sign.
    struct Swing: Sendable {
        var sign: Double
        var start: Nanoseconds
        var end: Nanoseconds
        var peak = 0.0
        var angle = 0.0
        var other = 0.0
    }

    /// One axis' swings and run.
    struct Axis: Sendable {
        static let deadBandDps = 2.0
        var current: Swing?
        /// The last counted swing of the run (at most one).
        var run: [Swing] = []
        /// Swings counted in the run, cycles reported from it, where and how big it began.
        var count = 0
        var reported = 0
        var runStart: Nanoseconds = 0
        var runAmplitude = 0.0
        var runPeak = 0.0

        mutating func add(
            t: Nanoseconds, dt: Double, rate: Double, other: Double, kind: HeadGesture.Kind,
            _ p: Parameters
        ) -> HeadGesture? {
            let sign: Double = rate > 0 ? 1 : -1
            var found: HeadGesture?
            if let c = current, abs(rate) < Self.deadBandDps || sign != c.sign {
                current = nil
                found = close(c, kind: kind, p)
            }
            if abs(rate) >= Self.deadBandDps {
                // A swing starts at its first moving sample: dating it from the sample before
                // made a nod begun 269 ms after its prompt (26 Hz) count as begun at 231 ms, too
                // soon to answer it.
                if current == nil { current = Swing(sign: sign, start: t, end: t) }
                current!.end = t
                current!.peak = max(current!.peak, abs(rate))
                current!.angle += abs(rate) * dt
                current!.other += abs(other) * dt
            }
            return found
        }

        private mutating func close(_ s: Swing, kind: HeadGesture.Kind, _ p: Parameters) -> HeadGesture? {
            let seconds = Double(s.end - s.start) * 1e-9
            let counts = s.peak >= p.minPeakDps && s.angle >= p.minSwingDeg && seconds <= p.maxSwingSeconds
            guard counts else {
                // Jitter around zero is ignored; anything bigger or longer ends the run.
                if s.peak >= p.minPeakDps || s.angle >= p.minSwingDeg || seconds > p.maxGapSeconds { endRun() }
                return nil
            }
            if let prev = run.last {
                let gap = Double(s.start - prev.end) * 1e-9
                let ratio = max(prev.angle, s.angle) / max(1e-9, min(prev.angle, s.angle))
                let own = prev.angle + s.angle, cross = prev.other + s.other
                if gap > p.maxGapSeconds || prev.sign == s.sign || ratio > p.maxSwingRatio || own < cross { endRun() }
            }
            // A nod starts with the face going down; an up swing alone opens nothing.
            if kind == .nod, count == 0, s.sign < 0, !p.nodEitherWay { return nil }
            if count == 0 { runStart = s.start; runAmplitude = 0; runPeak = 0 }
            count += 1
            runAmplitude = max(runAmplitude, s.angle)
            runPeak = max(runPeak, s.peak)
            let previous = run.last
            run = [s]
            let report: Bool
            switch kind {
            case .nod: report = count % 2 == 0
            case .shake: report = count == p.shakeSwings || (count > p.shakeSwings && count % 2 == 0)
            }
            guard report, let previous else { return nil }
            reported += 1
            // The first shake spans all its swings; every later cycle is its last two.
            let firstOfRun = reported == 1
            let start = firstOfRun ? runStart : previous.start
            let amplitude = firstOfRun ? runAmplitude : max(previous.angle, s.angle)
            let peak = firstOfRun ? runPeak : max(previous.peak, s.peak)
            return HeadGesture(
                kind: kind, start: start, end: s.end, amplitudeDeg: amplitude, cycle: reported, peakDps: peak,
                runStart: runStart, runSwings: count)
        }

        private mutating func endRun() { run = []; reported = 0; count = 0 }
    }
}
