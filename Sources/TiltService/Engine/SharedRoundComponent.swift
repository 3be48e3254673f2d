// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// Shared rounds (docs/mqtt.md): the round of a room that several devices play is run by the
/// room's host through `tiltd mqtt`, not by this daemon. The bridge shows this device's view
/// of it with `room.show`, and this component hands it to every client as a `game` line of kind
/// `shared` (and keeps the latest for `status`), so a screen on the socket sees the shared
/// round like the local one. Loop-confined (see `Component`).
final class SharedRoundComponent: Component {
    let context: EngineContext
    /// The latest view shown, for `status`.
    private(set) var latest: JSONObject?

    init(context: EngineContext) { self.context = context }

    let commands = ["room.show"]

    /// Fields the daemon sets itself on the line.
    private static let reserved: Set<String> = ["class", "seq", "t_ns", "kind"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        guard let view = command.arguments["view"]?.objectValue else {
            return reply.fail(.badArgument, "room.show needs \"view\"")
        }
        if let problem = Self.problem(view) { return reply.fail(.badArgument, "view: \(problem)") }
        var line: JSONObject = ["kind": "shared"]
        for (k, v) in view.entries where !Self.reserved.contains(k) { line[k] = v }
        latest = line
        reply.ok(["shown": true])
        context.publish(Event(.game, t: context.now, fields: line))
    }

    /// What is wrong with a view, or nil: a room name, a state, and players with scores.
    static func problem(_ v: JSONObject) -> String? {
        guard let room = v["room"]?.stringValue, RoomState.isValidID(room) else {
            return "\"room\" must be a room name"
        }
        guard let st = v["state"]?.stringValue, RoomState.Phase(rawValue: st) != nil else {
            return "\"state\" must be idle, playing or ended"
        }
        guard let players = v["players"]?.arrayValue ?? (st == "idle" ? [] : nil) else {
            return "\"players\" must be an array"
        }
        guard players.count <= RoomState.maxPlayers else { return "more than \(RoomState.maxPlayers) players" }
        for p in players {
            guard p["player"]?.stringValue != nil, p["score"]?.intValue != nil else {
                return "each player needs \"player\" and \"score\""
            }
        }
        return nil
    }

    func addStatus(to o: inout JSONObject) {
        if let latest { o["room"] = .object(latest) }
    }
}
