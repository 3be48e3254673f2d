// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// Watches fences (config geofences and places) and reports `enter`, `exit` and `dwell`.
///
/// Rules (documented in docs/places.md):
/// - σ is the fix's 1-sigma horizontal error, `eph / 2.4477` (eph is a 95 % radius); a fix without
///   eph uses `Options.unknownEph`.
/// - **enter** when `d + enterSigmas·σ ≤ r`: the fix and most of its uncertainty circle lie inside
///   (with k = 1, ≥ ~60 % of the probability mass for a fix on that line, far more nearer the centre).
///   A fix whose eph is large next to the fence therefore never enters it.
/// - **exit** when `d − exitSigmas·σ > r + margin`, `margin = max(exitMarginMin, exitMarginFraction·r)`:
///   confidently outside a wider ring, so jitter at the edge does not flap. A very uncertain fix
///   neither enters nor exits.
/// - **dwell** once per visit when `t − t_enter ≥ dwell`, from fix times only.
/// - Fixes without a position or time are ignored. If fix time goes backwards (a replay restarted),
///   open visits are dropped silently and a new timeline begins.
public struct GeofenceMonitor: Sendable {
    /// The prefix of the ledger request ids credits are earned under (no redeem may use it).
    public static let creditIDPrefix = "dwell:"

    /// Tuning of the uncertainty rules.
    public struct Options: Sendable, Equatable {
        /// Enter only when the fix is inside by this many 1-sigma errors.
        public var enterSigmas = 1.0
        /// Exit only when the fix is outside the exit ring by this many 1-sigma errors.
        public var exitSigmas = 1.0
        /// The exit ring lies at least this many metres beyond the radius.
        public var exitMarginMin = 10.0
        /// …or this fraction of the radius, whichever is larger.
        public var exitMarginFraction = 0.25
        /// eph (95 %, metres) assumed for fixes that carry none (e.g. a GPX without hdop): never 0,
        /// which would take them as exact.
        public var unknownEph = Fix.assumedEphWhenUnknown
        /// Bucket edge of the spatial index, metres.
        public var indexCellSize = 250.0
        /// Fences wider than this are checked one by one instead of bucketed.
        public var largeFenceRadius = 2_000.0
        /// The defaults.
        public init() {}
    }

    /// What happened at a fence.
    public enum Kind: String, Sendable { case enter, exit, dwell }

    /// One fence event.
    public struct Event: Sendable, Equatable {
        /// Enter, exit or dwell.
        public var kind: Kind
        /// The fence.
        public var fence: Fence
        /// The fix time.
        public var t: Nanoseconds
        /// Time of the visit's enter: identifies the visit (store key, credit request id).
        public var enteredAt: Nanoseconds
        /// Distance from the fence centre, metres.
        public var distance: Double

        /// An event (times in ns, distance in metres).
        public init(kind: Kind, fence: Fence, t: Nanoseconds, enteredAt: Nanoseconds, distance: Double) {
            self.kind = kind; self.fence = fence; self.t = t; self.enteredAt = enteredAt; self.distance = distance
        }
    }

    private struct Visit: Sendable {
        var enteredAt: Nanoseconds
        var dwelled: Bool
    }

    /// The fences watched, in order (events are ordered by it).
    public let fences: [Fence]
    /// Hysteresis and index settings.
    public let options: Options
    private var index: SpatialIndex
    private var largeFences: [Int32] = []
    private var inside: [Int32: Visit] = [:]
    private var lastTime: Nanoseconds?

    /// A monitor of `fences`, the wearer inside none yet.
    public init(fences: [Fence], options: Options = Options()) {
        self.fences = fences
        self.options = options
        index = SpatialIndex(cellSize: options.indexCellSize)
        for (i, f) in fences.enumerated() {
            if f.radius > options.largeFenceRadius {
                largeFences.append(Int32(i))
            } else {
                index.insert(Int32(i), at: f.centre, reach: f.radius)
            }
        }
    }

    /// Continues `old`'s visits in the fences that are still the same (key, centre and radius),
    /// so replacing the fences (a reload) neither re-announces an `enter` nor forgets a dwell
    /// under way. Fences that changed or are new start outside and fire on the next fix.
    public mutating func continueVisits(from old: GeofenceMonitor) {
        lastTime = old.lastTime
        var byKey: [String: Int32] = [:]
        for (i, f) in fences.enumerated() where byKey[f.key] == nil { byKey[f.key] = Int32(i) }
        for (i, visit) in old.inside {
            let was = old.fences[Int(i)]
            guard let j = byKey[was.key], fences[Int(j)].centre == was.centre, fences[Int(j)].radius == was.radius
            else { continue }
            inside[j] = visit
        }
    }

    /// Keys of the fences the wearer is inside now, in fence order.
    public var insideKeys: [String] { inside.keys.sorted().map { fences[Int($0)].key } }

    /// The exit ring margin of a fence.
    public func exitMargin(_ f: Fence) -> Double { max(options.exitMarginMin, options.exitMarginFraction * f.radius) }

    /// Feeds one fix; returns its events in a fixed order: exits, dwells, then enters (each by
    /// fence order), so a replay always gives the same sequence.
    public mutating func update(_ fix: Fix) -> [Event] {
        guard let p = fix.point, let t = fix.time else { return [] }
        if let last = lastTime, t < last { inside.removeAll() }
        lastTime = t
        let sigma = fix.horizontalSigma ?? options.unknownEph / 2.4477
        var out: [Event] = []

        var exits: [Int32] = []
        for i in inside.keys.sorted() {
            let f = fences[Int(i)]
            let d = Geo.distance(p, f.centre)
            let v = inside[i]!
            if d - options.exitSigmas * sigma > f.radius + exitMargin(f) {
                exits.append(i)
                out.append(Event(kind: .exit, fence: f, t: t, enteredAt: v.enteredAt, distance: d))
            }
        }
        for i in exits { inside[i] = nil }
        for i in inside.keys.sorted() {
            let f = fences[Int(i)]
            if !inside[i]!.dwelled, t - inside[i]!.enteredAt >= Nanoseconds(saturating: f.dwell * 1e9) {
                inside[i]!.dwelled = true
                out.append(
                    Event(
                        kind: .dwell, fence: f, t: t, enteredAt: inside[i]!.enteredAt,
                        distance: Geo.distance(p, f.centre)))
            }
        }

        // Candidates for enter: the bucket of this point plus the few large fences.
        var entered: [(Int32, Double)] = []
        func consider(_ i: Int32) {
            guard inside[i] == nil, !exits.contains(i) else { return }
            let f = fences[Int(i)]
            let d = Geo.distance(p, f.centre)
            if d + options.enterSigmas * sigma <= f.radius { entered.append((i, d)) }
        }
        for i in index.candidates(at: p) { consider(i) }
        for i in largeFences { consider(i) }
        entered.sort { $0.0 < $1.0 }
        for (i, d) in entered {
            let f = fences[Int(i)]
            inside[i] = Visit(enteredAt: t, dwelled: false)
            out.append(Event(kind: .enter, fence: f, t: t, enteredAt: t, distance: d))
            if f.dwell <= 0 {
                inside[i]!.dwelled = true
                out.append(Event(kind: .dwell, fence: f, t: t, enteredAt: t, distance: d))
            }
        }
        return out
    }
}

extension GeofenceMonitor.Event {
    /// The `place` event line's payload: event, fence, name, category (places only), dwell_s
    /// (dwell only), distance_m, entered_ns.
    public var event: Event {
        var o: JSONObject = ["event": .string(kind.rawValue), "fence": .string(fence.key), "name": .string(fence.name)]
        if let c = fence.category { o["category"] = .string(c) }
        o["distance_m"] = .double((distance * 10).rounded() / 10)
        if kind == .dwell { o["dwell_s"] = .double(Double(t - enteredAt) / 1e9) }
        o["entered_ns"] = .int(enteredAt)
        return Event(.place, t: t, fields: o)
    }
}
