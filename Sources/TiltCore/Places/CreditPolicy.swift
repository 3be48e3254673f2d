// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// Decides which dwells earn a credit: a dwell at a credit-earning fence, at most one per visit
/// (the monitor fires one dwell per visit) and none within the fence's cooldown after the last
/// credit there. Pure: seed it with the store's last credit times at start.
public struct CreditPolicy: Sendable {
    /// A credit to write to the ledger.
    public struct Grant: Sendable, Equatable {
        /// "dwell:<fence key>:<enter time ns>": one visit, one id, so re-processing the same
        /// visit (a replay, a restart) cannot credit it twice — the ledger rejects the repeat.
        public var requestId: String
        /// The fence's key.
        public var fenceKey: String
        /// The fence's name.
        public var name: String
        /// The dwell's fix time, ns.
        public var t: Nanoseconds
        /// Credits granted.
        public var amount: Int

        /// A grant.
        public init(requestId: String, fenceKey: String, name: String, t: Nanoseconds, amount: Int) {
            self.requestId = requestId; self.fenceKey = fenceKey; self.name = name; self.t = t; self.amount = amount
        }

        /// The `credit` event's payload (`balance` is added by the daemon from the store).
        public func event(balance: Int?) -> Event {
            var o: JSONObject = [
                "event": "earned", "fence": .string(fenceKey), "name": .string(name),
                "amount": .int(Int64(amount)), "request_id": .string(requestId),
            ]
            if let balance { o["balance"] = .int(Int64(balance)) }
            return Event(.credit, t: t, fields: o)
        }
    }

    private var lastCredit: [String: Nanoseconds]

    /// - Parameter lastCredits: time of the latest credit per fence key (from the store).
    public init(lastCredits: [String: Nanoseconds] = [:]) { lastCredit = lastCredits }

    /// The grant a fence event earns, if any.
    public mutating func consider(_ e: GeofenceMonitor.Event) -> Grant? {
        guard e.kind == .dwell, e.fence.credit else { return nil }
        if let last = lastCredit[e.fence.key], e.t >= last, e.t - last < Nanoseconds(saturating: e.fence.cooldown * 1e9)
        {
            return nil
        }
        lastCredit[e.fence.key] = e.t
        return Grant(
            requestId: "\(GeofenceMonitor.creditIDPrefix)\(e.fence.key):\(e.enteredAt)", fenceKey: e.fence.key,
            name: e.fence.name,
            t: e.t, amount: 1)
    }
}
