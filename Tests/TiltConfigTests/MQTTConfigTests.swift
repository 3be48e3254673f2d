// SPDX-License-Identifier: Apache-2.0
import XCTest

@testable import TiltConfig

/// `[mqtt]`: defaults, and each bad value refused with file, line and key.
final class MQTTConfigTests: XCTestCase {
    func parse(_ text: String) throws -> Configuration.MQTT {
        try Configuration.parse(text: text, file: "/etc/tiltd/tiltd.toml").mqtt
    }

    func testDefaults() throws {
        XCTAssertFalse(try parse("").enabled, "no table: no bridge")
        let m = try parse("[mqtt]\nname = \"den\"\n")
        XCTAssertTrue(m.enabled)
        XCTAssertEqual(m.host, "127.0.0.1"); XCTAssertEqual(m.port, 1883)
        XCTAssertEqual(m.prefix, "tiltd/den")
        XCTAssertEqual(m.effectiveClientID, "tiltd-den")
        XCTAssertEqual(m.attitudeHz, 2)
        XCTAssertEqual(m.allowedCommands, [])
        XCTAssertEqual(m.qos["attitude"], 0); XCTAssertEqual(m.qos["game"], 1)
        XCTAssertEqual(try parse("[mqtt]\nbroker = \"broker.lan\"\n").port, 1883)
        let v6 = try parse("[mqtt]\nbroker = \"[fd00::1]:8883\"\n")
        XCTAssertEqual(v6.host, "fd00::1"); XCTAssertEqual(v6.port, 8883)
        XCTAssertEqual(try parse("[mqtt]\npassword_file = \"pw\"\nusername = \"u\"\n").passwordFile, "/etc/tiltd/pw")
    }

    func testBadValuesNameFileLineAndKey() {
        let cases: [(String, String)] = [
            ("[mqtt]\nbroker = \"a:b:c\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.broker:"),
            (
                "[mqtt]\nallowed_commands = [\"fly\"]\n",
                "/etc/tiltd/tiltd.toml:2: mqtt.allowed_commands: unknown command \"fly\""
            ),
            (
                "[mqtt]\nallowed_commands = [\"room.show\"]\n",
                "/etc/tiltd/tiltd.toml:2: mqtt.allowed_commands: unknown command \"room.show\""
            ),
            ("[mqtt]\npassword_file = \"pw\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.password_file: needs username"),
            ("[mqtt]\ntopic_prefix = \"tiltd/#\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.topic_prefix:"),
            ("[mqtt]\nroom_host = true\n", "/etc/tiltd/tiltd.toml:2: mqtt.room_host: needs room"),
            ("[mqtt]\nroom = \"a/b\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.room:"),
            ("[mqtt]\nattitude_hz = 100\n", "/etc/tiltd/tiltd.toml:2: mqtt.attitude_hz: 100 is out of range"),
            ("[mqtt]\n[mqtt.qos]\ngame = 2\n", "/etc/tiltd/tiltd.toml:3: mqtt.qos.game: 2 is out of range"),
            ("[mqtt]\ntls_cert_file = \"c.pem\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.tls_cert_file:"),
            ("[mqtt]\nbrokr = \"x\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.brokr: unknown key"),
            // Its own topics would be the rooms' (tiltd/room/…): it could write every room's state.
            ("[mqtt]\nname = \"room\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.name: this device's topics"),
            ("[mqtt]\ntopic_prefix = \"tiltd/room/x\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.topic_prefix:"),
            ("[mqtt]\nname = \"a\"\nroom_topic = \"tiltd/a/rooms\"\n", "/etc/tiltd/tiltd.toml:2: mqtt.name:"),
        ]
        for (text, prefix) in cases {
            XCTAssertThrowsError(try parse(text), text) { e in
                XCTAssertTrue("\(e)".hasPrefix(prefix), "\(e) should start with \(prefix)")
            }
        }
    }

    func testCheckConfigPrintsTheTable() throws {
        let c = try Configuration.parse(
            text: "[mqtt]\nname = \"den\"\nroom = \"party\"\n", file: "/etc/tiltd/tiltd.toml")
        let text = EffectiveConfig.render(c)
        XCTAssertTrue(text.contains("[mqtt]\nenabled = true\nname = \"den\"\nbroker = \"127.0.0.1:1883\""), text)
        XCTAssertTrue(text.contains("room = \"party\""))
        // What check-config prints parses back to the same table.
        XCTAssertEqual(try Configuration.parse(text: text, file: "/etc/tiltd/tiltd.toml").mqtt.prefix, "tiltd/den")
        XCTAssertFalse(EffectiveConfig.render(try Configuration.parse(text: "", file: "/x.toml")).contains("[mqtt]"))
    }
}
