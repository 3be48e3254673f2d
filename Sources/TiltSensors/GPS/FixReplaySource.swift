// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform
import TiltRecordings

/// Replays recorded fixes (e.g. a GPX track) as a `FixSource`, for demos and tests without a GPS.
///
/// The fixes keep their own timestamps, so everything downstream (dwell times, cooldowns) runs on
/// the recording's clock. Pacing only decides how fast they are handed over: at the recording's
/// speed times a factor, or as fast as the consumer takes them.
public struct FixReplaySource: FixSource {
    /// How quickly to hand the fixes over.
    public enum Pace: Sendable, Equatable {
        /// Real time multiplied by the factor (1 = as recorded, 10 = ten times faster).
        case realTime(factor: Double)
        /// No waiting between fixes.
        case asFastAsPossible
    }

    /// The fixes, in the order they are replayed.
    public let fixes: [Fix]
    /// A name for status messages, e.g. the GPX file's name.
    public let name: String
    /// How quickly fixes are handed over.
    public let pace: Pace

    /// Creates a replay of `fixes`. A fix without a time follows the previous one at once.
    public init(fixes: [Fix], name: String, pace: Pace = .realTime(factor: 1)) {
        self.fixes = fixes; self.name = name; self.pace = pace
    }

    /// "replay walk.gpx (120 fixes, ×10)".
    public var summary: String {
        let speed: String
        switch pace {
        case .realTime(let factor): speed = factor == 1 ? "real time" : "×\(Self.format(factor))"
        case .asFastAsPossible: speed = "as fast as possible"
        }
        return "replay \(name) (\(fixes.count) fixes, \(speed))"
    }

    /// Emits every fix, paced, then `finished`. Returns early when `stop` is signalled.
    public func run(stop: StopSignal, emit: @escaping @Sendable (FixOutput) -> Void) throws {
        if case .realTime(let factor) = pace, !(factor > 0 && factor.isFinite) {
            throw FixReplayError.invalidSpeedFactor(factor)
        }
        emit(.status(status(.streaming, "replaying \(fixes.count) fixes from \(name)")))
        let started = ContinuousClock.now
        // The recording's time of the first timed fix anchors the schedule.
        var anchor: Nanoseconds?
        for fix in fixes {
            if stop.isStopped { return }
            if case .realTime(let factor) = pace, let t = fix.time {
                let origin = anchor ?? t
                anchor = origin
                // A recording may step backwards (a GPS glitch): such a fix is not waited for.
                let offsetSeconds = Double(t - origin) / 1e9 / factor
                let due = started.advanced(by: .nanoseconds(Int64(saturating: offsetSeconds * 1e9)))
                let wait = ContinuousClock.now.duration(to: due)
                if wait > .zero {
                    let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
                    if stop.sleep(seconds: seconds) { return }
                }
            }
            emit(.fix(fix))
        }
        emit(.status(status(.finished, "replay of \(name) finished after \(fixes.count) fixes")))
    }

    private func status(_ state: SourceStatus.State, _ message: String) -> SourceStatus {
        SourceStatus(source: "gps", state: state, message: message, device: "replay \(name)")
    }

    private static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(saturating: value)) : String(value)
    }
}

/// Settings a replay cannot run with.
public enum FixReplayError: Error, Equatable, CustomStringConvertible {
    /// The speed factor must be a finite number above zero.
    case invalidSpeedFactor(Double)

    /// A message for the log and the command line.
    public var description: String {
        switch self {
        case .invalidSpeedFactor(let f): "replay speed factor must be a finite number above 0, got \(f)"
        }
    }
}
