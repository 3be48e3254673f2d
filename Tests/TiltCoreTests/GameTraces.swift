// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltPlatform

@testable import TiltCore

/// A scripted head motion: the nod angle (degrees, positive = head tilted down) and the
/// sideways lean (degrees) as functions of time, built from keyframes joined by smooth
/// (cosine-eased) moves. A move over zero seconds is a step.
struct HeadMotion {
    struct Key { var t: Double; var nod: Double; var lean: Double }
    private(set) var keys: [Key] = [Key(t: 0, nod: 0, lean: 0)]

    var duration: Double { keys.last!.t }
    var nod: Double { keys.last!.nod }
    var lean: Double { keys.last!.lean }

    /// Stays in the current pose.
    mutating func hold(_ seconds: Double) {
        let k = keys.last!
        keys.append(Key(t: k.t + seconds, nod: k.nod, lean: k.lean))
    }

    /// Moves smoothly to a pose.
    mutating func move(nod: Double, lean: Double? = nil, over seconds: Double) {
        let k = keys.last!
        keys.append(Key(t: k.t + seconds, nod: nod, lean: lean ?? k.lean))
    }

    /// A deliberate answer: tilt to `nod`, hold, come back upright.
    mutating func answer(_ nod: Double, hold seconds: Double = 0.5, ramp: Double = 0.2) {
        move(nod: nod, over: ramp); hold(seconds); move(nod: 0, over: ramp)
    }

    /// A jerk: a quick excursion to `nod` and straight back.
    mutating func jerk(_ nod: Double, ramp: Double = 0.03, hold seconds: Double = 0.04) {
        move(nod: nod, over: ramp); hold(seconds); move(nod: 0, over: ramp)
    }

    /// The pose at time `t`, given the index of the key at or before `t` (advanced in place,
    /// because samples come in time order).
    func pose(at t: Double, cursor: inout Int) -> (nod: Double, lean: Double) {
        while cursor + 1 < keys.count, keys[cursor + 1].t <= t { cursor += 1 }
        let a = keys[cursor]
        guard cursor + 1 < keys.count else { return (a.nod, a.lean) }
        let b = keys[cursor + 1]
        let span = b.t - a.t
        guard span > 0 else { return (b.nod, b.lean) }
        let s = (1 - cos(Double.pi * (t - a.t) / span)) / 2
        return (a.nod + (b.nod - a.nod) * s, a.lean + (b.lean - a.lean) * s)
    }
}

/// Turns a `HeadMotion` into the attitudes a headband IMU would report.
///
/// Head frame: x = ear-to-ear, y = up, z = toward the back of the head. The head's orientation
/// is yaw (heading) · lean (about the forward axis) · nod (about x, 90° − nod = roll). The sensor
/// sits on the head turned by `mount` (rotates sensor vectors into the head frame): identity is
/// the standard mount (roll +90° upright), `HeadTrace.flipped` the board turned over in its
/// plane (roll −90°).
struct HeadTrace {
    var rateHz: Double = 100
    /// Standard deviation (degrees) of the noise added to nod and lean. The noise is a smooth
    /// function of time (random knots every 10 ms, linearly joined), so every sample rate sees
    /// the same noise and the decisions do not depend on the rate.
    var noiseDeg: Double = 0
    var noiseSeed: UInt64 = 1
    /// Sample-time jitter as a fraction of the period (< 0.5 keeps times increasing).
    var jitter: Double = 0
    var mount: Quaternion = .identity
    /// Slow heading drift (the wearer turning around), degrees per second.
    var yawDriftDegPerS: Double = 0
    /// Slow drift of the nod angle (the headband slipping), degrees per second.
    var nodDriftDegPerS: Double = 0
    /// Time of the first sample.
    var startNs: Nanoseconds = 1_000_000_000

    /// The board turned over in its own plane: y down, x the other way, roll ≈ −90° upright.
    static let flipped = Quaternion(axis: Vector3(0, 0, 1), angle: Double.pi)

    var periodNs: Nanoseconds { Nanoseconds((1e9 / rateHz).rounded()) }

    /// The head-frame back axis seen in the sensor frame: what relative mode's `backAxis` is for this mount.
    var backAxisInSensor: Vector3 { mount.conjugate.rotate(Vector3(0, 0, 1)) }

    func attitudes(_ motion: HeadMotion) -> [Attitude] { samples(motion).map(\.attitude) }

    /// The attitudes with the angular rate a gyro would report at each (sensor frame, rad/s):
    /// the rate of the motion itself, without the attitude noise (which stands for the
    /// estimator's jitter, not for motion the gyro would see).
    func samples(_ motion: HeadMotion) -> [(attitude: Attitude, rate: Vector3)] {
        let n = Int(motion.duration * rateHz) + 1
        let knotStep = 0.01
        let knotCount = Int(motion.duration / knotStep) + 3
        var rng = SplitMix64(seed: noiseSeed)
        var nodNoise = [Double](repeating: 0, count: knotCount)
        var leanNoise = [Double](repeating: 0, count: knotCount)
        if noiseDeg > 0 {
            for i in 0..<knotCount {
                nodNoise[i] = noiseDeg * Self.gaussian(&rng)
                leanNoise[i] = noiseDeg * Self.gaussian(&rng)
            }
        }
        var jitterRNG = SplitMix64(seed: noiseSeed ^ 0xA5A5)
        var out: [(attitude: Attitude, rate: Vector3)] = []
        out.reserveCapacity(n)
        var previousClean: (t: Nanoseconds, q: Quaternion)?
        var cursor = 0
        let d = Double.pi / 180
        for k in 0..<n {
            var t = startNs + Nanoseconds(k) * periodNs
            if jitter > 0, k > 0 {
                let u = Double(jitterRNG.next() >> 11) / Double(1 << 53) * 2 - 1
                t += Nanoseconds(u * jitter * Double(periodNs))
            }
            let s = Double(t - startNs) * 1e-9
            var (nod, lean) = motion.pose(at: max(0, s), cursor: &cursor)
            let yaw = (yawDriftDegPerS * s).truncatingRemainder(dividingBy: 360) * d
            let clean = (Quaternion(roll: (90 - nod - nodDriftDegPerS * s) * d, pitch: lean * d, yaw: yaw) * mount)
                .normalized
            var rate = Vector3.zero
            if let p = previousClean, t > p.t {
                var dq = p.q.conjugate * clean
                if dq.w < 0 { dq = Quaternion(w: -dq.w, x: -dq.x, y: -dq.y, z: -dq.z) }
                let sn = dq.vector.norm
                if sn > 1e-12 { rate = dq.vector * (2 * atan2(sn, dq.w) / sn / (Double(t - p.t) * 1e-9)) }
            }
            previousClean = (t, clean)
            let f = s / knotStep
            let i = min(Int(f), knotCount - 2)
            let w = f - Double(i)
            nod += nodNoise[i] * (1 - w) + nodNoise[i + 1] * w + nodDriftDegPerS * s
            lean += leanNoise[i] * (1 - w) + leanNoise[i + 1] * w
            let head = Quaternion(roll: (90 - nod) * d, pitch: lean * d, yaw: yaw)
            out.append((Attitude(t: t, q: (head * mount).normalized, atRest: false, gyroBias: .zero), rate))
        }
        return out
    }

    static func gaussian(_ rng: inout SplitMix64) -> Double {
        let u1 = (Double(rng.next() >> 11) + 0.5) / Double(1 << 53)
        let u2 = Double(rng.next() >> 11) / Double(1 << 53)
        return (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
    }
}

extension TiltGame.Rules {
    /// The defaults in absolute mode: what the rule tests (hold, hysteresis, debounce, timing)
    /// are written for; relative mode's capture is tested on its own (GameRelativeTests).
    static var absoluteMode: Self {
        var c = Self()
        c.mode = .absolute
        return c
    }
}

/// Test helpers around a game.
enum GamePlay {
    static func deck(_ n: Int = 40, name: String = "test") -> PromptDeck {
        try! PromptDeck(name: name, prompts: (1...n).map { String(format: "p%02d", $0) })
    }

    /// Starts a round at the trace's first sample time and replays the trace (with the
    /// motion's own gyro rates when given, else the game derives them from the attitudes).
    static func run(
        _ attitudes: [Attitude], rates: [Vector3]? = nil, config: TiltGame.Rules = .absoluteMode, seed: UInt64 = 7,
        deck: PromptDeck = deck(), roundSeconds: Double = 600
    ) throws -> (TiltGame, [GameEvent]) {
        var game = try TiltGame(configuration: config, seed: seed)
        var events = try game.start(at: attitudes[0].t, roundSeconds: roundSeconds, deck: deck)
        for (i, a) in attitudes.enumerated() { events += game.update(a, rate: rates?[i]) }
        return (game, events)
    }

    /// `run` over a trace's samples with their gyro rates.
    static func run(
        _ samples: [(attitude: Attitude, rate: Vector3)], config: TiltGame.Rules = .absoluteMode, seed: UInt64 = 7,
        deck: PromptDeck = deck(), roundSeconds: Double = 600
    ) throws -> (TiltGame, [GameEvent]) {
        try run(
            samples.map(\.attitude), rates: samples.map(\.rate), config: config, seed: seed, deck: deck,
            roundSeconds: roundSeconds)
    }

    static func decisions(_ events: [GameEvent]) -> [String] {
        events.compactMap { $0.kind == .correct || $0.kind == .skip ? $0.kind.rawValue : nil }
    }

    static func kinds(_ events: [GameEvent]) -> [String] { events.map(\.kind.rawValue) }

    /// Seconds after `startNs` (1 s) as ns, for exact time assertions.
    static func at(_ seconds: Double, startNs: Nanoseconds = 1_000_000_000) -> Nanoseconds {
        startNs + Nanoseconds((seconds * 1e9).rounded())
    }
}
