// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import XCTest

/// `[web]` in the shared configuration file.
final class WebConfigTests: XCTestCase {
    func testDefaultsAndValues() throws {
        let d = try Configuration.parse(text: "", file: "/etc/tiltd/tiltd.toml")
        XCTAssertEqual(d.web.host, "127.0.0.1")
        XCTAssertEqual(d.web.port, 8080)
        XCTAssertNil(d.web.pairingCode)
        let c = try Configuration.parse(
            text: """
                [web]
                listen = "0.0.0.0:9090"
                pairing_code = "correct-horse"
                allowed_origins = ["http://tiltd.local:9090"]
                max_clients = 10
                max_messages_per_s = 5
                recordings = "recs"
                """, file: "/etc/tiltd/tiltd.toml")
        XCTAssertEqual(c.web.host, "0.0.0.0")
        XCTAssertEqual(c.web.port, 9090)
        XCTAssertEqual(c.web.pairingCode, "correct-horse")
        XCTAssertEqual(c.web.allowedOrigins, ["http://tiltd.local:9090"])
        XCTAssertEqual(c.web.maxClients, 10)
        XCTAssertEqual(c.web.maxMessagesPerSecond, 5)
        XCTAssertEqual(c.web.recordings, "/etc/tiltd/recs")
    }

    func testErrorsNameFileLineAndKey() {
        let cases: [(String, String)] = [
            ("[web]\nlisten = \"8080\"", "web.listen"),
            ("[web]\npairing_code = \"12\"", "web.pairing_code"),
            ("[web]\nallowed_origins = [\"tiltd.local\"]", "web.allowed_origins"),
            ("[web]\nmax_clients = 0", "web.max_clients"),
            ("[web]\nlisten_on = \"x\"", "web.listen_on"),
        ]
        for (text, key) in cases {
            XCTAssertThrowsError(try Configuration.parse(text: text, file: "/etc/tiltd/tiltd.toml"), text) { e in
                let s = "\(e)"
                XCTAssertTrue(s.contains("/etc/tiltd/tiltd.toml:2"), s)
                XCTAssertTrue(s.contains(key), s)
            }
        }
    }
}
