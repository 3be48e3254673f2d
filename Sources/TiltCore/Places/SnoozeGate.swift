// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// Snooze: stops fix and place events until the wearer has moved `distance` metres from where the
/// snooze began, then wakes by itself.
///
/// "Moved" means `d − σ ≥ distance` (σ the fix's 1-sigma error), so GPS noise while standing still
/// does not wake it. A snooze asked for before any position starts from the first positioned fix.
public struct SnoozeGate: Sendable {
    /// What to do with a fix.
    public enum Decision: Sendable, Equatable {
        /// Not snoozing: report the fix and its place events.
        case pass
        /// Snoozing: report nothing for this fix.
        case suppress
        /// This fix ended the snooze (report the woke event, then the fix as usual).
        case woke(Woke)
    }

    /// Payload of the `place` event `{"event":"woke",...}`.
    public struct Woke: Sendable, Equatable {
        /// The fix time it woke at, ns.
        public var t: Nanoseconds
        /// Distance from the snooze origin when it woke, metres.
        public var moved: Double
        /// When the snooze began.
        public var since: Nanoseconds?
        /// As a `place` event line.
        public var event: Event {
            var o: JSONObject = ["event": "woke", "moved_m": .double((moved * 10).rounded() / 10)]
            if let since { o["snoozed_ns"] = .int(since) }
            return Event(.place, t: t, fields: o)
        }
    }

    /// Metres to move before the snooze ends.
    public var distance: Double
    /// True while snoozing.
    public private(set) var snoozing = false
    /// Where the snooze began (nil until a positioned fix arrives).
    public private(set) var origin: GeoPoint?
    private var since: Nanoseconds?

    /// A gate that ends snoozes after `distance` metres.
    public init(distance: Double = 50) { self.distance = distance }

    /// Starts a snooze at `fix` (or at the next positioned fix when it has none). Returns the
    /// `place` `{"event":"snoozed"}` payload.
    public mutating func snooze(at fix: Fix?) -> Event {
        snoozing = true
        origin = fix?.point
        since = fix?.time
        var o: JSONObject = ["event": "snoozed", "until_moved_m": .double(distance)]
        if let p = origin { o["lat"] = .double(p.lat); o["lon"] = .double(p.lon) }
        return Event(.place, t: fix?.time, fields: o)
    }

    /// Ends a snooze on request (no woke event: the command's reply says so).
    public mutating func cancel() { snoozing = false; origin = nil; since = nil }

    /// Judges one fix.
    public mutating func check(_ fix: Fix) -> Decision {
        guard snoozing else { return .pass }
        guard let p = fix.point else { return .suppress }
        guard let o = origin else { origin = p; since = since ?? fix.time; return .suppress }
        let d = Geo.distance(o, p)
        if d - fix.ephOrAssumed / 2.4477 >= distance {
            let woke = Woke(t: fix.time ?? 0, moved: d, since: since)
            cancel()
            return .woke(woke)
        }
        return .suppress
    }
}
