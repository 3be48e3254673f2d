// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import TiltCore
import TiltProtocol
import XCTest

@testable import TiltBridge

/// The bridge forwards nothing the daemon would count as a bad line: the daemon drops a client
/// after `[socket] max_bad_lines` of them, and a peer fuzzing `<prefix>/cmd` cost the bridge its
/// link (MQTTFuzzTests had to wait for it to reconnect).
final class CommandGateDaemonTests: XCTestCase {
    let gate = CommandGate(
        allowed: Set(CommandCatalogue.names), maxPayloadBytes: 1 << 20, bridgeCommands: ["room.start"],
        maxLineBytes: 4096)

    /// The line the bridge sends for a forwarded command (`Bridge.command`: its own id).
    func forwardedLine(_ fields: JSONObject) -> [UInt8] {
        var o = fields
        o["id"] = .string("mqtt-12")
        return Array(JSONValue.object(o).jsonText.utf8)
    }

    func code(_ s: String) -> String? {
        if case .refuse(let r) = gate.check(Array(s.utf8)) { return r["error"]?["code"]?.stringValue }
        return nil
    }

    func testArgumentsTheDaemonRefusesAreRefusedByTheBridgeWithTheSenderId() throws {
        XCTAssertEqual(code(#"{"cmd":"status","pad":1}"#), "bad_argument", "a field status does not take")
        XCTAssertEqual(code(#"{"cmd":"watch","attitude_hz":1001}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"watch","attitude_hz":"fast"}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"history","n":0}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"watch","classes":["nope"]}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"status","x":""# + String(repeating: "x", count: 5000) + #""}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"ping"}"#), nil)
        guard case .refuse(let r) = gate.check(Array(#"{"cmd":"watch","id":"m-1","attitude_hz":-1}"#.utf8)) else {
            return XCTFail("forwarded")
        }
        XCTAssertEqual(r["id"], "m-1", "the refusal carries the sender's id: \(r)")
        XCTAssertEqual(r["cmd"], "watch")
    }

    /// The room's commands go through the same parser (`CommandCatalogue.roomCommands`): the
    /// arguments are checked after `allowed_commands`, and what reaches the room is checked.
    func testRoomCommandsAreParsedByTheCatalogue() {
        let gate = CommandGate(
            allowed: ["room.start", "room.state"], maxPayloadBytes: 4096,
            bridgeCommands: Set(CommandCatalogue.roomCommands.map(\.name)))
        func code(_ s: String) -> String? {
            if case .refuse(let r) = gate.check(Array(s.utf8)) { return r["error"]?["code"]?.stringValue }
            return nil
        }
        XCTAssertEqual(code(#"{"cmd":"room.start","round_s":2}"#), "invalid_round_length")
        XCTAssertEqual(code(#"{"cmd":"room.start","round_s":"x"}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"room.state","pad":1}"#), "bad_argument")
        XCTAssertEqual(code(#"{"cmd":"room.stop","round_s":"x"}"#), "forbidden", "allowed_commands first")
        XCTAssertEqual(code(#"{"cmd":"room.fly"}"#), "unknown_command")
        XCTAssertEqual(
            gate.check(Array(#"{"cmd":"room.start","id":3,"round_s":30}"#.utf8)),
            .bridge(cmd: "room.start", id: .int(3), fields: ["round_s": .int(30)]))
        guard case .refuse(let r) = gate.check(Array(#"{"cmd":"room.start","id":"m","round_s":1e9}"#.utf8)) else {
            return XCTFail("accepted")
        }
        XCTAssertEqual(r["id"], "m")
        XCTAssertEqual(r["cmd"], "room.start")
    }

    func testALineOverTheDaemonsLimitIsRefused() {
        // (The sender's id is not what is sent: the bridge's own id replaces it.)
        let gate = CommandGate(
            allowed: ["game.start"], maxPayloadBytes: 1 << 20, bridgeCommands: [], maxLineBytes: 100)
        let deck = String(repeating: "a", count: 80) + ".txt"
        guard case .refuse(let r) = gate.check(Array(#"{"cmd":"game.start","id":1,"deck":"\#(deck)"}"#.utf8)) else {
            return XCTFail("forwarded")
        }
        XCTAssertEqual(r["error"]?["code"], "line_too_long", "\(r)")
        XCTAssertEqual(r["id"], .int(1), "\(r)")
        guard case .daemon = gate.check(Array(#"{"cmd":"game.start","id":1,"deck":"a.txt"}"#.utf8)) else {
            return XCTFail("refused a short line")
        }
    }

    /// Seeded: every command of the catalogue with values of every type at and past their edges,
    /// unknown fields and odd ids. Whatever the gate forwards the daemon's parser accepts, within
    /// its line limit; and both verdicts occur.
    func testWhatTheGateForwardsTheDaemonAccepts() throws {
        let values: [JSONValue] = [
            .int(0), .int(-1), .int(Int64.max), .int(Int64.min), .double(1e-300), .double(5e-324), .double(1e300),
            .double(-0.0), .double(0.5), .string(""), .string("nearby"), .string(String(repeating: "é", count: 3000)),
            .bool(true), .null, .array([]), .array([.string("attitude")]), .object([:]), .object(["a": .int(1)]),
        ]
        var rng = SplitMix64(seed: 37)
        var forwarded = 0
        var refused = 0
        for _ in 0..<20_000 {
            let spec = CommandCatalogue.commands[Int(rng.next() % UInt64(CommandCatalogue.commands.count))]
            var o: JSONObject = ["cmd": .string(spec.name)]
            for a in spec.arguments where rng.next() % 2 == 0 {
                o[a.name] = values[Int(rng.next() % UInt64(values.count))]
            }
            if rng.next() % 8 == 0 { o["extra"] = .int(1) }
            if rng.next() % 8 == 0 { o["id"] = values[Int(rng.next() % UInt64(values.count))] }
            switch gate.check(Array(JSONValue.object(o).jsonText.utf8)) {
            case .daemon(_, _, let fields):
                forwarded += 1
                var sent = fields
                sent["id"] = nil
                let line = forwardedLine(sent)
                if case .failure(let e) = Request.parse(line) {
                    XCTFail("forwarded a line the daemon refuses (\(e.error.code.rawValue)): \(o)")
                }
                XCTAssertLessThanOrEqual(line.count, spec.name == "room.show" ? Int.max : 4096, "\(o)")
            case .refuse: refused += 1
            case .bridge: break
            }
        }
        XCTAssertGreaterThan(forwarded, 1000)
        XCTAssertGreaterThan(refused, 1000)
    }
}

/// A broker password in clear over the network is warned about; TLS or loopback is not.
final class ClearPasswordTests: XCTestCase {
    func mqtt(_ text: String) throws -> Configuration.MQTT {
        try Configuration.parse(
            text: "[mqtt]\nname = \"den\"\nusername = \"den\"\npassword_file = \"pw\"\n" + text,
            file: "/etc/tiltd/tiltd.toml"
        ).mqtt
    }

    func testAPasswordInClearToAnotherHostIsWarnedAbout() throws {
        XCTAssertNotNil(Bridge.clearPasswordWarning(try mqtt("broker = \"broker.lan\"\n")))
        XCTAssertNotNil(Bridge.clearPasswordWarning(try mqtt("broker = \"[fd00::1]:1883\"\n")))
        XCTAssertNil(Bridge.clearPasswordWarning(try mqtt("broker = \"127.0.0.1\"\n")))
        XCTAssertNil(Bridge.clearPasswordWarning(try mqtt("broker = \"localhost\"\n")))
        XCTAssertNil(Bridge.clearPasswordWarning(try mqtt("broker = \"broker.lan:8883\"\ntls = true\n")))
        XCTAssertNil(Bridge.clearPasswordWarning(try mqtt("broker = \"broker.lan\"\ntls_ca_file = \"ca.pem\"\n")))
    }

    func testTLSWithoutACAFileUsesTheSystemStore() throws {
        let m = try mqtt("tls = true\n")
        XCTAssertTrue(m.usesTLS)
        XCTAssertNil(m.tlsCAFile)
        XCTAssertEqual(Configuration.MQTT.systemCAPath, "/etc/ssl/certs")
        XCTAssertFalse(try mqtt("").usesTLS)
        // A client certificate with the system store is fine now.
        XCTAssertNoThrow(try mqtt("tls = true\ntls_cert_file = \"c.pem\"\ntls_key_file = \"k.pem\"\n"))
    }
}
