// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol
import XCTest

/// The shared-round state machines (host and member) without a broker: every rule of the room
/// protocol in docs/mqtt.md, with times given explicitly.
final class RoomTests: XCTestCase {
    let s = Int64(1_000_000_000)
    let prompts = ["cat", "dog", "owl", "emu"]

    func makeHost() -> RoomHost {
        var h = RoomHost(room: "party", host: "pi-a", hostStatusTopic: "tiltd/pi-a/status", session: "s1")
        for p in ["pi-b", "pi-c"] {
            XCTAssertEqual(
                h.presence(
                    RoomPresence(room: "party", player: p, presence: .here, statusTopic: "tiltd/\(p)/status"),
                    topicPlayer: p, at: 0), .changed)
        }
        return h
    }

    func decision(_ p: String, _ i: Int, _ d: Decision = .correct, round: Int = 1) -> RoomDecision {
        RoomDecision(room: "party", player: p, round: round, index: i, decision: d)
    }

    func testEveryDecisionCountsOnceEvenWhenRedelivered() {
        var h = makeHost()
        XCTAssertEqual(h.start(prompts: prompts, roundMs: 60_000, at: 0), .changed)
        XCTAssertEqual(h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: s), .changed)
        let rev = h.state.rev
        // The broker redelivers, the player re-sends after a reconnect: same request id.
        XCTAssertEqual(h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: 2 * s), .duplicate)
        XCTAssertEqual(h.decision(decision("pi-b", 0, .skip), topicPlayer: "pi-b", at: 2 * s), .duplicate)
        XCTAssertEqual(h.state.rev, rev, "a duplicate changes nothing")
        XCTAssertEqual(h.decision(decision("pi-b", 1, .skip), topicPlayer: "pi-b", at: 3 * s), .changed)
        XCTAssertEqual(h.decision(decision("pi-c", 0), topicPlayer: "pi-c", at: 3 * s), .changed)
        XCTAssertEqual(h.state.player("pi-b")?.index, 2)
        XCTAssertEqual(h.state.player("pi-b")?.score, 1)
        XCTAssertEqual(h.state.player("pi-c")?.score, 1)
        XCTAssertEqual(h.state.player("pi-a")?.index, 0)
    }

    func testRefusalsChangeNothing() {
        var h = makeHost()
        XCTAssertEqual(
            h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: 0),
            .refused(RoomRefusal("not_running", "no round is running")))
        _ = h.start(prompts: prompts, roundMs: 60_000, at: 0)
        let before = h.state
        func code(_ o: RoomHost.Outcome) -> String? { if case .refused(let r) = o { return r.code }; return nil }
        XCTAssertEqual(code(h.decision(decision("pi-c", 0), topicPlayer: "pi-b", at: s)), "forged")
        var other = decision("pi-b", 0); other.room = "lobby"
        XCTAssertEqual(code(h.decision(other, topicPlayer: "pi-b", at: s)), "wrong_room")
        XCTAssertEqual(code(h.decision(decision("pi-z", 0), topicPlayer: "pi-z", at: s)), "unknown_player")
        XCTAssertEqual(code(h.decision(decision("pi-b", 2), topicPlayer: "pi-b", at: s)), "out_of_order")
        XCTAssertEqual(code(h.decision(decision("pi-b", 0, round: 7), topicPlayer: "pi-b", at: s)), "wrong_round")
        XCTAssertEqual(
            code(
                h.presence(
                    RoomPresence(room: "party", player: "pi-c", presence: .left, statusTopic: nil), topicPlayer: "pi-b",
                    at: s)), "forged")
        XCTAssertEqual(h.state, before)
        _ = h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: s)
        var again = decision("pi-b", 0); again.requestID = "other-id"
        XCTAssertEqual(code(h.decision(again, topicPlayer: "pi-b", at: s)), "stale")
    }

    func testTimerEndsTheRoundAndLateDecisionsDoNotCount() {
        var h = makeHost()
        _ = h.start(prompts: prompts, roundMs: 10_000, at: 5 * s)
        XCTAssertEqual(h.tick(at: 14 * s), .unchanged)
        XCTAssertEqual(h.remainingMs(at: 14 * s), 1_000)
        // No tick between the end and the decision: the decision must still not count.
        guard case .refused(let r) = h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: 15 * s) else {
            return XCTFail()
        }
        XCTAssertEqual(r.code, "not_running")
        XCTAssertEqual(h.state.phase, .ended)
        XCTAssertEqual(h.state.reason, .timeout)
        XCTAssertEqual(h.state.player("pi-b")?.score, 0)
    }

    func testDeckEmptyWhenEveryPresentPlayerIsThrough() {
        var h = makeHost()
        _ = h.start(prompts: ["a"], roundMs: 60_000, at: 0)
        _ = h.deviceStatus(topic: "tiltd/pi-c/status", online: false, at: s)
        XCTAssertEqual(h.state.player("pi-c")?.presence, .away)
        _ = h.decision(decision("pi-a", 0), topicPlayer: "pi-a", at: s)
        XCTAssertEqual(h.state.phase, .playing)
        _ = h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: s)
        XCTAssertEqual(h.state.phase, .ended)
        XCTAssertEqual(h.state.reason, .deckEmpty)
    }

    func testAPlayerDropsOutAndComesBackWithItsScore() {
        var h = makeHost()
        _ = h.start(prompts: prompts, roundMs: 60_000, at: 0)
        _ = h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: s)
        XCTAssertEqual(h.deviceStatus(topic: "tiltd/pi-b/status", online: false, at: 2 * s), .changed)
        XCTAssertEqual(h.state.player("pi-b")?.presence, .away)
        XCTAssertEqual(h.deviceStatus(topic: "tiltd/pi-b/status", online: true, at: 3 * s), .changed)
        XCTAssertEqual(h.state.player("pi-b")?.presence, .here)
        XCTAssertEqual(h.state.player("pi-b")?.score, 1)
        XCTAssertEqual(h.decision(decision("pi-b", 1), topicPlayer: "pi-b", at: 4 * s), .changed)
        // Its daemon goes (the bridge says away) while its device stays online, in either order.
        _ = h.presence(
            RoomPresence(room: "party", player: "pi-b", presence: .away, statusTopic: nil), topicPlayer: "pi-b",
            at: 4 * s)
        XCTAssertEqual(h.deviceStatus(topic: "tiltd/pi-b/status", online: true, at: 4 * s), .unchanged)
        XCTAssertEqual(h.state.player("pi-b")?.presence, .away, "an online device whose daemon is gone is away")
        _ = h.presence(
            RoomPresence(room: "party", player: "pi-b", presence: .here, statusTopic: nil), topicPlayer: "pi-b",
            at: 4 * s)
        XCTAssertEqual(h.state.player("pi-b")?.presence, .here)
        // A player who left is dropped at the next start; the others start from zero.
        _ = h.presence(
            RoomPresence(room: "party", player: "pi-c", presence: .left, statusTopic: nil), topicPlayer: "pi-c",
            at: 5 * s)
        _ = h.stop(at: 6 * s)
        _ = h.start(prompts: prompts, roundMs: 60_000, at: 7 * s)
        XCTAssertNil(h.state.player("pi-c"))
        XCTAssertEqual(h.state.player("pi-b")?.score, 0)
        XCTAssertEqual(h.state.round, 2)
    }

    func testMemberKeepsDecisionsPendingUntilTheHostCountsThem() {
        var h = makeHost()
        var m = RoomMember(room: "party", player: "pi-b")
        XCTAssertFalse(m.isPlaying)
        _ = h.start(prompts: prompts, roundMs: 60_000, at: 0)
        XCTAssertTrue(m.receive(h.state))
        XCTAssertEqual(m.prompt, "cat")
        let d0 = try! XCTUnwrap(m.decide(.correct))
        let d1 = try! XCTUnwrap(m.decide(.skip))
        XCTAssertEqual(m.prompt, "owl", "the next prompt shows at once, before the host answers")
        XCTAssertEqual(m.pending.map(\.requestID), ["1-0", "1-1"])
        _ = h.decision(d0, topicPlayer: "pi-b", at: s)
        let older = h.state
        _ = h.decision(d1, topicPlayer: "pi-b", at: s)
        XCTAssertTrue(m.receive(h.state))
        XCTAssertFalse(m.receive(older), "an older state of the same session is ignored")
        XCTAssertEqual(m.pending, [])
        XCTAssertEqual(m.view()["score"], .int(1))
        XCTAssertEqual(m.view()["index"], .int(2))
    }

    func testHostLossEndsTheRoundForTheMember() {
        var h = makeHost()
        var m = RoomMember(room: "party", player: "pi-c")
        _ = h.start(prompts: prompts, roundMs: 60_000, at: 0)
        _ = m.receive(h.state)
        _ = m.decide(.correct)
        XCTAssertTrue(m.hostStatus(online: false))
        XCTAssertEqual(m.phase, .ended)
        XCTAssertEqual(m.reason, .hostLost)
        XCTAssertFalse(m.isPlaying)
        XCTAssertNil(m.decide(.correct))
        XCTAssertEqual(m.view()["reason"], "host_lost")
        // A retained state of the same session arriving later does not revive the round...
        var later = h.state; later.rev += 1
        _ = m.receive(later)
        XCTAssertEqual(m.phase, .ended)
        // ...a restarted host (new session) does.
        var h2 = RoomHost(room: "party", host: "pi-a", hostStatusTopic: "tiltd/pi-a/status", session: "s2")
        _ = h2.presence(
            RoomPresence(room: "party", player: "pi-c", presence: .here, statusTopic: nil), topicPlayer: "pi-c", at: 0)
        _ = h2.start(prompts: prompts, roundMs: 60_000, at: 0)
        XCTAssertTrue(m.receive(h2.state))
        XCTAssertTrue(m.isPlaying)
    }

    func testCodecRoundTripsAndRefusesBadInput() throws {
        var h = makeHost()
        _ = h.start(prompts: prompts, roundMs: 60_000, at: 0)
        _ = h.decision(decision("pi-b", 0), topicPlayer: "pi-b", at: s)
        let bytes = Array(JSONValue.object(RoomCodec.encode(h.state)).jsonText.utf8)
        XCTAssertEqual(try RoomCodec.decodeState(bytes), h.state)
        let d = decision("pi-c", 3, .skip)
        XCTAssertEqual(try RoomCodec.decodeDecision(Array(JSONValue.object(RoomCodec.encode(d)).jsonText.utf8)), d)
        func code(_ text: String) -> String? {
            do { _ = try RoomCodec.decodeDecision(Array(text.utf8)); return nil } catch { return error.code }
        }
        XCTAssertEqual(code("{not json"), "invalid_json")
        XCTAssertEqual(code("[1]"), "invalid_json")
        XCTAssertEqual(
            code(#"{"room":"party","player":"pi-b","round":1,"index":0,"decision":"maybe","request_id":"1-0"}"#),
            "bad_argument")
        XCTAssertEqual(
            code(#"{"room":"party","player":"pi/b","round":1,"index":0,"decision":"skip","request_id":"1-0"}"#),
            "bad_argument")
        XCTAssertEqual(code(String(repeating: " ", count: RoomCodec.maxPayloadBytes + 1)), "payload_too_large")
    }
}
