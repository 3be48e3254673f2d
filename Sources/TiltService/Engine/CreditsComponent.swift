// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform
import TiltProtocol

/// Credits: one per dwell at a credit-earning place (with a cooldown per place), `credits`,
/// `credits.redeem`, the `[credits]` section. Every change is committed to the store before
/// it is published. Loop-confined (see `Component`).
final class CreditsComponent: Component {
    let context: EngineContext
    private var policy = CreditPolicy()

    init(context: EngineContext) { self.context = context }

    /// Seeds the per-place cooldowns from the store, at start.
    func prepare(lastCredits: [String: Nanoseconds]) { policy = CreditPolicy(lastCredits: lastCredits) }

    let commands = ["credits", "credits.redeem"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        switch command.name {
        case "credits":
            context.store.read(
                { s in (try s.creditBalance(), try s.creditsByPlace()) },
                then: { result in
                    switch result {
                    case .success(let (balance, places)):
                        reply.ok([
                            "balance": .int(Int64(balance)),
                            "places": .array(
                                places.map {
                                    .object([
                                        "fence": .string($0.fenceKey), "name": .string($0.name),
                                        "count": .int(Int64($0.count)),
                                    ])
                                }),
                        ])
                    case .failure(let e): reply.fail(.unavailable, "credits: \(e)")
                    }
                }, on: context.loop)
        default:
            redeem(command, client: client, reply: reply)
        }
    }

    /// The prefix of the request ids credits are earned under.
    static let earnedPrefix = GeofenceMonitor.creditIDPrefix

    private func redeem(_ command: Command, client: ClientSession, reply: Reply) {
        let amount = command.int("amount") ?? context.config.credits.redeemAmount
        // Without a client request id, the reply's id stands in (unique per connection at best).
        let rid = command.string("request_id") ?? "redeem:\(client.id):\(UUID().uuidString)"
        // The ledger's request ids are one namespace: a redeem must not take the id a visit will
        // earn its credit under ("dwell:<fence>:<enter ns>", known to anyone who saw the enter),
        // which would swallow that credit; an empty id would make every id-less retry one.
        if rid.isEmpty || rid.hasPrefix(Self.earnedPrefix) {
            return reply.fail(
                .badArgument,
                "request_id must not be empty or begin with \"\(Self.earnedPrefix)\" (earned credits' ids)")
        }
        // Credit lines carry GPS time (the latest fix's), like the credits earned; 0 = none known.
        let t = context.lastFixTime
        context.store.write(
            { try $0.redeem(requestId: rid, amount: amount, t: t ?? 0) },
            then: { [context] result in
                switch result {
                case .success(.redeemed(let balance)):
                    context.storeSucceeded()
                    reply.ok([
                        "redeemed": .int(Int64(amount)), "balance": .int(Int64(balance)), "request_id": .string(rid),
                    ])
                    context.publish(.creditRedeemed(amount: amount, balance: balance, requestID: rid, t: t))
                case .success(.alreadyApplied(let balance)):
                    reply.ok([
                        "redeemed": 0, "balance": .int(Int64(balance)), "request_id": .string(rid),
                        "already_applied": true,
                    ])
                case .success(.insufficient(let balance, let needed)):
                    reply.fail(.insufficientCredits, "balance \(balance) is below \(needed)")
                case .failure(let e):
                    reply.fail(.unavailable, "redeem: \(e)")
                    // A ledger write that fails (disk full) is the store's health, not only this client's.
                    context.storeFailed("redeeming \(amount) credits", e)
                }
            }, on: context.loop)
    }

    /// Geofence events of one fix: each visit is recorded, and a dwell that earns a credit is
    /// published once the ledger has it, with the balance.
    func record(_ visits: [GeofenceMonitor.Event]) {
        for e in visits {
            let grant = policy.consider(e)
            context.storeWrite(
                "recording a visit to \(e.fence.name)",
                { s in
                    try s.recordVisit(e)
                    return try grant.map { try s.addCredit($0) }
                },
                then: { [context] added in
                    if case .some(.added(let balance)) = added, let grant {
                        context.publish(grant.event(balance: balance))
                    }
                })
        }
    }
}
