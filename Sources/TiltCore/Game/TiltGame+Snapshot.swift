// SPDX-License-Identifier: Apache-2.0
import TiltProtocol

extension TiltGame {
    // MARK: snapshot

    /// The whole current state, for the `hello` line and `status`: a client joining mid-round
    /// can draw the screen from it alone. Times are relative to the newest attitude seen.
    public var snapshot: JSONObject {
        var o = JSONObject()
        let now = max(lastT ?? round?.startedAt ?? 0, round?.startedAt ?? Int64.min)
        o["state"] = .string(phase.rawValue)
        o["t_ns"] = lastT.map { .int($0) } ?? .null
        if let r = round {
            o["round"] = .int(Int64(r.id))
            o["deck"] = .string(r.deckName)
            o["deck_size"] = .int(Int64(r.order.count))
            o["deck_left"] = .int(Int64(r.order.count - r.nextIndex))
            o["round_s"] = .number(Double(r.length) / 1e9)
            o["started_t_ns"] = .int(r.startedAt)
            o["remaining_ms"] = .int(max(0, r.endsAt - now) / 1_000_000)
            o["score"] = .int(Int64(r.score))
            o["prompt"] = r.prompt.map { .string($0) } ?? .null
            o["prompt_t_ns"] = r.prompt == nil ? .null : .int(r.shownAt)
            o["correct"] = .array(r.results.filter { $0.decision == .correct }.map { .object($0.json) })
            o["skipped"] = .array(r.results.filter { $0.decision == .skip }.map { .object($0.json) })
        } else {
            for k in ["round", "deck", "deck_size", "deck_left", "round_s", "started_t_ns", "remaining_ms"] {
                o[k] = .null
            }
            o["score"] = 0
            o["prompt"] = .null
            o["prompt_t_ns"] = .null
            o["correct"] = []
            o["skipped"] = []
        }
        o["tilt_deg"] = lastTilt.map { .number(($0 * 10).rounded() / 10) } ?? .null
        var n = JSONObject()
        n["mode"] = .string(configuration.mode.rawValue)
        n["captured"] = .bool(neutral != nil)
        n["t_ns"] = neutral.map { .int($0.t) } ?? .null
        o["neutral"] = .object(n)
        o["gestures"] = .string(gestures.rawValue)
        var orientation = headFrame.json
        orientation["suspect"] = .bool(check.suspect)
        o["orientation"] = .object(orientation)
        o["activity"] = .string(activity.rawValue)
        o["config"] = .object(configuration.json)
        o["last_round"] = lastResult.map { .object($0.json) } ?? .null
        return o
    }
}
