// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import TiltCore
import TiltProtocol
import XCTest

@testable import TiltBridge

/// The bridge's pure parts: the bounded QoS 1 buffer, the command gate, Home Assistant payloads.
final class BridgePartsTests: XCTestCase {
    func msg(_ i: Int, qos: Int32 = 1) -> OutgoingMessage {
        OutgoingMessage(topic: "t/\(i)", payload: Array("\(i)".utf8), qos: qos, retain: false)
    }

    func testBufferHoldsWhileDisconnectedDropsTheOldestAndKeepsOrder() {
        var q = PublishQueue(capacity: 5, inflightLimit: 2)
        for i in 0..<8 { XCTAssertEqual(q.offer(msg(i)), .held) }
        XCTAssertEqual(q.offer(msg(99, qos: 0)), .held, "QoS 0 is not kept while disconnected")
        XCTAssertEqual(q.overflowed, 3)
        XCTAssertEqual(q.waiting.map(\.topic), ["t/3", "t/4", "t/5", "t/6", "t/7"], "the newest five, in order")
        q.setConnected(true)
        let first = q.drain()
        XCTAssertEqual(first.map(\.topic), ["t/3", "t/4"], "at most inflightLimit handed over at once")
        for (i, _) in first.enumerated() { q.handedOver(mid: Int32(i + 1)) }
        XCTAssertEqual(q.drain(), [])
        XCTAssertEqual(q.offer(msg(8)), .held, "behind the waiting ones: order is kept")
        XCTAssertEqual(q.overflowed, 4, "two in flight and three waiting: full, so t/5 made room for t/8")
        q.acknowledged(mid: 1)
        XCTAssertEqual(q.drain().map(\.topic), ["t/6"])
        XCTAssertEqual(q.waiting.map(\.topic), ["t/7", "t/8"])
        XCTAssertEqual(q.offer(msg(100, qos: 0)), .send, "QoS 0 goes out at once when connected")
    }

    func testUnacknowledgedMessagesCountAgainstTheBound() {
        var q = PublishQueue(capacity: 3, inflightLimit: 3)
        q.setConnected(true)
        for i in 1...3 { XCTAssertEqual(q.offer(msg(i)), .send); q.handedOver(mid: Int32(i)) }
        q.setConnected(false)
        XCTAssertEqual(q.offer(msg(4)), .held)
        XCTAssertEqual(q.overflowed, 1, "three are in flight: the buffer is full, the new one is dropped")
        XCTAssertTrue(q.waiting.isEmpty)
    }

    /// `fix_age` every 5 s once a fix has arrived, however often fixes come.
    func testFixAgeEveryPeriodNotEveryFix() {
        var clock = FixAgeClock(period: 5_000_000_000)
        XCTAssertNil(clock.due(at: 0), "no fix yet")
        var published: [(t: Int64, age: Double)] = []
        // 20 s of ticks every 0.1 s, a fix every second (as a GPS gives them) for the first 12 s.
        for tick in 1...200 {
            let now = Int64(tick) * 100_000_000
            if tick % 10 == 0 && now <= 12_000_000_000 { clock.fixArrived(at: now) }
            if let age = clock.due(at: now) { published.append((now, age)) }
        }
        XCTAssertEqual(published.map(\.t), [1, 6, 11, 16].map { Int64($0) * 1_000_000_000 }, "every 5 s")
        XCTAssertEqual(published.map(\.age), [0, 0, 0, 4], "seconds since the latest fix")
    }

    func testCommandGate() {
        let gate = CommandGate(
            allowed: ["status", "room.start"], maxPayloadBytes: 64, bridgeCommands: ["room.start", "room.stop"])
        func code(_ s: String) -> String? {
            if case .refuse(let r) = gate.check(Array(s.utf8)) { return r["error"]?["code"]?.stringValue }
            return nil
        }
        XCTAssertEqual(code("{"), "invalid_json")
        XCTAssertEqual(code("[1]"), "not_an_object")
        XCTAssertEqual(code(#"{"id":1}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"status","id":{"a":1}}"#), "bad_argument", "an id the daemon would refuse")
        XCTAssertEqual(code(#"{"cmd":"status","id":true}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"fly"}"#), "unknown_command")
        XCTAssertEqual(code(#"{"cmd":"game.stop"}"#), "forbidden")
        XCTAssertEqual(code(#"{"cmd":"room.stop"}"#), "forbidden")
        XCTAssertEqual(code(#"{"cmd":"status","pad":""# + String(repeating: "x", count: 64) + #""}"#), "line_too_long")
        XCTAssertEqual(
            gate.check(Array(#"{"cmd":"status","id":"a"}"#.utf8)),
            .daemon(cmd: "status", id: "a", fields: ["cmd": "status", "id": "a"]))
        guard case .bridge("room.start", .int(2), _) = gate.check(Array(#"{"cmd":"room.start","id":2}"#.utf8)) else {
            return XCTFail()
        }
    }

    func testHomeAssistantEventPayloads() throws {
        func payload(_ o: JSONObject) -> (gameDecision: Bool, payload: [UInt8])? {
            DaemonLine(text: JSONValue.object(o).jsonText).flatMap(Discovery.eventPayload)
        }
        let correct = try XCTUnwrap(payload(["class": "game", "seq": 5, "kind": "correct", "score": 1]))
        XCTAssertTrue(correct.gameDecision)
        XCTAssertEqual(
            String(decoding: correct.payload, as: UTF8.self), #"{"event_type":"correct","kind":"correct","score":1}"#)
        let enter = try XCTUnwrap(payload(["class": "place", "event": "enter", "name": "Café"]))
        XCTAssertFalse(enter.gameDecision)
        XCTAssertNil(payload(["class": "game", "kind": "prompt"]))
        XCTAssertNil(payload(["class": "place", "event": "snoozed"]))
        XCTAssertEqual(Discovery.nodeID("pi.kitchen 2"), "pi_kitchen_2")
    }

    func testDiscoveryOffPublishesEmptyRetainedConfigs() throws {
        var m = try Configuration.parse(
            text: "[mqtt]\nname = \"den\"\ndiscovery = false\n", file: "/etc/tiltd/tiltd.toml"
        ).mqtt
        var msgs = Discovery.messages(m, topics: Topics(m), version: "0.1.0", qos: 1)
        XCTAssertEqual(msgs.count, 9)
        XCTAssertTrue(msgs.allSatisfy { $0.payload.isEmpty && $0.retain })
        m.discovery = true
        msgs = Discovery.messages(m, topics: Topics(m), version: "0.1.0", qos: 1)
        XCTAssertTrue(
            msgs.allSatisfy {
                !$0.payload.isEmpty && $0.topic.hasPrefix("homeassistant/") && $0.topic.hasSuffix("/config")
            })
    }
}
