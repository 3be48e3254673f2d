// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Reads nods and shakes from the head's rate for the `nod` vocabulary, with or without a
/// known head frame. `GestureDetector` finds the half-swings and cycles; this decides about
/// which axes it looks.
///
/// - **A known frame** (calibrated, learned, kept from an earlier run, a configured
///   `back_axis`, or the convention chosen with `[game] head_frame = "assumed"`): nods about its
///   ear-to-ear axis, shakes about its up. A nod is counted from its first swing whichever way
///   it goes (face down or up first): a head that starts a nod upward lost its first cycle, and
///   with two cycles asked of every nod (`AnswerLimits.nodCycles`) that lost the nod.
/// - **No frame known** (nothing calibrated, learned or kept, and the game may learn one): the
///   assumed convention (+y up, +z back) is right only for boards mounted as it says; on the
///   everyday set's glasses, whose ear-to-ear axis is the board's z, it looked for nods about
///   the wrong axis and answered 2 % of the nods played onto the wearers' walks. What is known
///   without a frame: **up**, from gravity (the attitude's, smoothed over 2 s), and that a nod
///   turns the head about a **horizontal** axis and a shake about up. So shakes are looked for
///   about up, and nods about the horizontal axis the head has lately been turning about (the
///   principal axis of the horizontal rate, followed without jumps) and the one at right
///   angles to it, each both ways round. A sideways lean (ear to shoulder) twice back and forth
///   would read as a nod; the learned frame takes over as soon as there is one.
///
/// A nod seen by several detectors counts once. Pure; a few detectors' cost per sample.
struct GestureReader: Sendable {
    /// Up in the sensor frame, smoothed (nil before the first sample).
    private(set) var up: Vector3?
    /// The sensor axis the horizontal axes are made from (the one farthest from up, kept while
    /// it stays 30° or more from up, so the axes do not jump under a gesture).
    private var reference: Vector3?
    private var lastT: Nanoseconds?
    private var detectors: [GestureDetector]
    /// The horizontal rate's power matrix in (e1, e2) and the principal axis' angle from e1.
    private var power = (0.0, 0.0, 0.0)
    private var angle = 0.0
    static let tau = 2.0
    static let axisTau = 1.0
    /// Slower horizontal turning (a held head's sway, noise) does not move the axis, rad/s.
    static let minTurn = 20 * Double.pi / 180

    /// The detectors' limits (the game's nod rules).
    let parameters: GestureDetector.Parameters

    /// A reader with `parameters`.
    init(parameters: GestureDetector.Parameters) {
        self.parameters = parameters
        detectors = Array(repeating: GestureDetector(parameters: parameters), count: 4)
    }

    /// Feeds one sample: the rate (sensor frame, rad/s) and up from the attitude (sensor frame,
    /// unit). Returns the gestures completed at it, the rates about a horizontal axis and about
    /// up for the gait background, and about two horizontal axes at right angles (the frame's
    /// ear-to-ear and front-to-back, or two the reader chose) for the rate history (rad/s).
    mutating func add(
        t: Nanoseconds, rate w: Vector3, up u: Vector3, frame: HeadFrame? = nil
    ) -> (gestures: [HeadGesture], pitch: Double, yaw: Double, horizontal: (Double, Double)) {
        let dt = lastT.map { min(0.25, max(0, Double(t - $0) * 1e-9)) } ?? 0
        lastT = t
        if let frame {
            // A known frame: nods about its ear-to-ear axis, begun either way round.
            let pa = w.dot(frame.left), yaw = w.dot(frame.up)
            var out: [HeadGesture] = []
            var nods: [HeadGesture] = []
            for k in 0..<(parameters.nodEitherWay ? 1 : 2) {
                for g in detectors[k].add(t: t, pitch: k == 0 ? pa : -pa, yaw: yaw) {
                    if g.kind == .nod { nods.append(g) } else if k == 0 { out.append(g) }
                }
            }
            if let nod = nods.max(by: { ($0.cycle, $0.amplitudeDeg) < ($1.cycle, $1.amplitudeDeg) }) {
                out.insert(nod, at: 0)
            }
            return (out, pa, yaw, (pa, w.dot(frame.forward)))
        }
        let smoothed = (up.map { $0 + (u - $0) * min(1, dt / Self.tau) } ?? u).normalized
        up = smoothed
        if reference.map({ abs($0.dot(smoothed)) > 0.866 }) ?? true {
            let axes = [Vector3(1, 0, 0), Vector3(0, 1, 0), Vector3(0, 0, 1)]
            reference = axes.min { abs($0.dot(smoothed)) < abs($1.dot(smoothed)) }
        }
        let e1 = (reference! - smoothed * reference!.dot(smoothed)).normalized
        let e2 = smoothed.cross(e1)
        let p1 = w.dot(e1), p2 = w.dot(e2), yaw = w.dot(smoothed)
        // The horizontal axis the head has been turning about lately (the principal axis of the
        // horizontal rate's power over about `axisTau`), followed without jumps: a nod turns
        // about one axis, which is the ear-to-ear one, so its swings are read at full size.
        if p1 * p1 + p2 * p2 >= Self.minTurn * Self.minTurn {
            let k = min(1, dt / Self.axisTau)
            power.0 += (p1 * p1 - power.0) * k
            power.1 += (p1 * p2 - power.1) * k
            power.2 += (p2 * p2 - power.2) * k
            let raw = 0.5 * atan2(2 * power.1, power.0 - power.2)
            angle = raw + (((angle - raw) / .pi).rounded()) * .pi
        }
        let a = e1 * cos(angle) + e2 * sin(angle)
        let b = smoothed.cross(a)
        let pa = w.dot(a), pb = w.dot(b)
        var nods: [HeadGesture] = []
        var shakes: [HeadGesture] = []
        // Both ways round unless one detector finds nods begun either way (`nodEitherWay`).
        for k in stride(from: 0, to: 4, by: parameters.nodEitherWay ? 2 : 1) {
            let pitch = k < 2 ? (k == 0 ? pa : -pa) : (k == 2 ? pb : -pb)
            for g in detectors[k].add(t: t, pitch: pitch, yaw: yaw) {
                if g.kind == .nod { nods.append(g) } else if k == 0 { shakes.append(g) }
            }
        }
        // The same nod seen by two detectors (an axis between e1 and e2) counts once: the one
        // with the most cycles, then the largest.
        let nod = nods.max { ($0.cycle, $0.amplitudeDeg) < ($1.cycle, $1.amplitudeDeg) }
        let horizontal = (p1 * p1 + p2 * p2).squareRoot() * 0.5.squareRoot()
        return ((nod.map { [$0] } ?? []) + shakes, horizontal, yaw, (p1, p2))
    }
}
