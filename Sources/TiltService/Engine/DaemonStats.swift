// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltSensors

/// Counters for the `stats` reply (and a web screen's /metrics): what happened since start.
/// Loop-confined like the engine that owns it.
struct DaemonStats {
    /// When the daemon started, `MonotonicClock` nanoseconds.
    let startedAt = MonotonicClock.nanoseconds()
    /// Game decisions per kind (`correct`, `skip`).
    var decisions: [String: Int] = [:]
    var roundsStarted = 0
    var roundsEnded = 0
    /// When the latest fix arrived, `MonotonicClock` nanoseconds.
    var lastFixAt: Nanoseconds?
    var reloadsApplied = 0
    var reloadsRefused = 0
    /// The latest reload's outcome: "applied" or "refused", and its message.
    var lastReload: (result: String, message: String)?

    mutating func count(_ events: [GameEvent]) {
        for e in events {
            switch e.kind {
            case .correct, .skip: decisions[e.kind.rawValue, default: 0] += 1
            case .roundStarted: roundsStarted += 1
            case .roundEnded, .stopped: roundsEnded += 1
            default: break
            }
        }
    }

    mutating func countReload(applied: Bool, message: String) {
        if applied { reloadsApplied += 1 } else { reloadsRefused += 1 }
        lastReload = (applied ? "applied" : "refused", message)
    }
}

extension Engine {
    /// The body of a `stats` reply.
    public func statsFields() -> JSONObject {
        let now = MonotonicClock.nanoseconds()
        let stats = context.stats
        var o = JSONObject()
        o["uptime_s"] = .number((Double(now - stats.startedAt) / 1e8).rounded() / 10)
        if let r = attitude.rateHz { o["sample_rate_hz"] = .number((r * 10).rounded() / 10) }
        o["samples"] = .int(Int64(attitude.samplesSeen))
        o["samples_dropped"] = .int(Int64(attitude.samplesSkipped))
        o["clients"] = .int(Int64(hub.clientCount))
        var dropped = JSONObject()
        for c in EventClass.allCases { dropped[c.rawValue] = .int(Int64(hub.droppedLines[c] ?? 0)) }
        o["lines_dropped"] = .object(dropped)
        o["fanout_writes"] = .string(hub.fanoutWrites)
        o["fanout_registered_clients"] = .int(Int64(hub.registeredClients))
        var decisions = JSONObject()
        for kind in ["correct", "skip"] { decisions[kind] = .int(Int64(stats.decisions[kind] ?? 0)) }
        o["decisions"] = .object(decisions)
        var rounds = JSONObject()
        rounds["started"] = .int(Int64(stats.roundsStarted))
        rounds["ended"] = .int(Int64(stats.roundsEnded))
        o["rounds"] = .object(rounds)
        if let at = stats.lastFixAt { o["fix_age_s"] = .number((Double(now - at) / 1e8).rounded() / 10) }
        var reloads: JSONObject = [
            "applied": .int(Int64(stats.reloadsApplied)), "refused": .int(Int64(stats.reloadsRefused)),
        ]
        if let last = stats.lastReload {
            reloads["last"] = .string(last.result); reloads["last_message"] = .string(last.message)
        }
        o["reloads"] = .object(reloads)
        return o
    }
}
