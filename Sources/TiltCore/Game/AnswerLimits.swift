// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// The limits that tell a deliberate answer from everyday head motion (docs/game-everyday.md and
/// docs/dev/game-everyday.md say where each comes from). Not part of the configuration file: they
/// describe heads and bodies, not a player's taste. Settable for the gesture bench's checks.
public struct AnswerLimits: Sendable, Equatable {
    /// A `tilt` answer turns the head, from the pose it last rested in within the neutral
    /// zone, by at least this fraction of the way from level (90°) to the threshold it
    /// crosses. A resting head drifts (reading, slouching, a chair rolled) and can rest a few
    /// degrees short of a threshold; a deliberate tilt turns the neck by 25–45°. 0.75: 20° with
    /// the default thresholds (27° from level), more than a drift's few degrees.
    public var minTiltTurn = 0.75
    /// While whole-body moves can be seen, a `tilt` answer counts only once this long has
    /// passed since it began without one, seconds. Standing up starts with the trunk leaning
    /// forward (the head goes down like a tilt, at up to 180 °/s), and the body is seen to be
    /// carried only as it rises, 0.3–0.9 s later on the everyday recordings.
    public var bodyWaitSeconds = 1.0

    /// A nod or shake answers only when one of its half-swings turns the head at least this
    /// fast, °/s. The detector finds gestures from 40 °/s (`nod_min_peak_dps`, its recall on
    /// the head-gestures logs); a wearer working at a desk glances up and back down, or
    /// aside and back, at 40–60 °/s, in down-up and left-right pairs the detector takes for
    /// gestures, while a nod or shake made to be seen turns faster (the head-gestures logs:
    /// 98 % of the answers the game took kept at 60 °/s).
    public var minAnswerPeakDps = 60.0

    /// Cycles a nod or shake needs to answer while walking or running (`nodCycles` and
    /// `shakeCycles` elsewhere): one down-up can be the gait's head bob, one left-right-left a
    /// walker looking both ways.
    public var gaitCycles = 2

    /// While walking or running, a nod the whole-body test would refuse still answers when
    /// its peak is this many times the RMS rate about its axis just before it began
    /// (`GaitBackground`): a deliberate nod peaks near 100 °/s, a walker's head swings at 15–40
    /// °/s RMS (docs/game-everyday.md).
    public var gaitPeakRatio = 3.0

    /// `gaitPeakRatio` for a shake while on foot (`ActivityTracker.onFoot`). A walker's head
    /// turns about the vertical at 25–60 °/s RMS: the stride's sway and looks around, both slower
    /// than a shake and refused by `gaitShakeSwingSeconds` on their own; 3 × that background
    /// refused a quarter of the real shakes played onto walks, 2 × refuses 2 % with no more
    /// false decisions on the everyday set (docs/dev/game-everyday.md has all four values tried).
    public var gaitShakePeakRatio = 2.0

    /// A nod or shake of this many cycles or more answers though the whole body moved around
    /// it, when it stands out of what the head did just before (`gaitPeakRatio`; 0: never). The
    /// whole-body test reads a walk, stairs, a shuffle on the spot as the body carrying the head
    /// and refused the answers made meanwhile (docs/game-everyday.md: 38 % of real nods played
    /// onto real walks answered); a body that stands up, bends or sits does not swing the head
    /// back and forth twice, and a glance down and back, or aside and back, is one cycle.
    public var bodyMoveSpareCycles = 2

    /// Cycles a nod needs to answer, wherever the wearer is: one down-up is as often a glance
    /// down at a desk or a phone and back (on the everyday set, most of the false nods).
    public var nodCycles = 2

    /// Cycles a shake needs to answer, wherever the wearer is (1: `shake_swings`, three; 2: one swing more, four): a
    /// left-right-left is as often a look both ways.
    public var shakeCycles = 2

    /// While walking or running, the next prompt (nod vocabulary) shows once no nod or shake
    /// cycle has been read for this long after an answer, seconds (0: wait for a still head as
    /// everywhere else). A runner's head never rests under `still_dps`: waiting for it showed a
    /// prompt every 1.3 minutes while running (docs/dev/game-everyday.md).
    public var gaitSettleSeconds = 1.0

    /// While walking or running, a shake's half-swings (the mean of a cycle's two) take at most
    /// this long, seconds: a runner's head sways about the vertical once a step (half-swings of
    /// 0.3–0.4 s) and read as shakes standing out of the run; the head-gestures logs' shakes
    /// swing in 0.1–0.3 s (docs/dev/game-everyday.md). 0: no limit.
    public var gaitShakeSwingSeconds = 0.25

    /// What judges a nod or shake (the `nod` vocabulary): the trained `GestureClassifier`, on
    /// the candidates a loose detector reports (`GestureCandidates`), from their second cycle.
    /// nil: the hand-set rules above (`gaitPeakRatio` and the rest) judge the game's own
    /// detector's gestures instead, as before the classifier (the bench's "rules" rows).
    public var classifier: GestureClassifier? = .trained

    /// A candidate whose motion repeats what the head did a whole number of strides before it
    /// (`GestureFeatures` "stride_match" under this: 0 = the same, 1 = nothing alike) is the
    /// gait, whatever the classifier says. The trees learned from real walks, whose bob never
    /// repeats exactly, and scored a perfectly regular bob (a clean gait, a synthetic one) as
    /// nods; a nod or shake played onto a walk keeps 0.49 or more in 99 % of cases.
    public var strideRepeatMax = 0.25

    /// With the classifier, no nod or shake answers whose fastest half-swing is under this, °/s:
    /// a gentle player's nod peaks at 50 °/s (half the head-gestures logs' swing and rate: 99 % at
    /// 30 °/s or more), and the loose detector reads swings from 20 °/s — a head rocking to music.
    public var minClassifiedPeakDps = 30.0

    /// With the classifier, two successive cycles of one nod or shake (one run of swings) answer
    /// when both score at least this, though neither reaches the classifier's `accept`: each
    /// cycle is fresh evidence of the same gesture, and the gait's runs seldom score high twice.
    /// 1: only single candidates at `accept` answer. 0.85 added no false decision on the
    /// everyday set (0.75 added two, 0.6 seven) and answered more shakes standing (90 → 96 %)
    /// and gentle nods (docs/dev/game-everyday.md).
    public var classifierRunAccept = 0.85

    /// The defaults.
    public init() {}

    var bodyWaitNs: Nanoseconds { Nanoseconds(saturating: (bodyWaitSeconds * 1e9).rounded()) }
}

/// A tilt answer held long enough, waiting for `AnswerLimits.bodyWaitSeconds`.
struct PendingTilt: Sendable {
    var decision: Decision
    var from: Nanoseconds
    var heldAt: Nanoseconds
    var tilt: Double
}
