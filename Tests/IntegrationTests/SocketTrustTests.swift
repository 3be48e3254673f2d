// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// `[socket] trusted_gids` against real peers of another uid: a gid counts whether it is the
/// peer's primary group or a supplementary one (what `usermod -aG tiltd` gives a user).
final class SocketTrustTests: XCTestCase {
    var dir = ""
    override func setUp() { dir = makeTempDir("trust") }
    override func tearDown() { try? FileManager.default.removeItem(atPath: dir) }

    /// A gid no account on a test machine uses.
    static let trustedGID = 48_213

    func testSupplementaryGroupIsTrusted() throws {
        let sock = try startDaemon()
        // nobody, primary group nogroup, the trusted gid only as a supplementary group.
        let reply = try command("game.start", socket: sock, asUID: 65534, gid: 65534, groups: [Self.trustedGID])
        XCTAssertEqual(reply["ok"], .bool(true), "\(reply)")
    }

    func testPrimaryGroupIsTrusted() throws {
        let sock = try startDaemon()
        let reply = try command("game.start", socket: sock, asUID: 65534, gid: Self.trustedGID, groups: [])
        XCTAssertEqual(reply["ok"], .bool(true), "\(reply)")
    }

    func testOtherGroupsAreNotTrusted() throws {
        let sock = try startDaemon()
        let reply = try command("game.start", socket: sock, asUID: 65534, gid: 65534, groups: [Self.trustedGID + 1, 0])
        XCTAssertEqual(reply["ok"], .bool(false), "\(reply)")
        XCTAssertEqual(reply["error"]?["code"], "forbidden", "\(reply)")
    }

    /// Starts tiltd on a replay with a socket anyone may connect to, trusting `trustedGID`.
    func startDaemon() throws -> String {
        try requireRoot()
        chmod(dir, 0o755)
        let sock = "\(dir)/tiltd.sock"
        let config = "\(dir)/tiltd.toml"
        try """
        [socket]
        path = "\(sock)"
        mode = "0666"
        trusted_gids = [\(Self.trustedGID)]
        [store]
        path = "\(dir)/tiltd.sqlite"
        """.write(toFile: config, atomically: true, encoding: .utf8)
        let d = try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv"],
            logPath: "\(dir)/log")
        addTeardownBlock { _ = d.stop() }
        try waitUntil("the socket") { FileManager.default.fileExists(atPath: sock) }
        // game.start needs streaming samples: wait for the first attitude.
        _ = try LineClient(path: sock).next("attitude", timeout: 10)
        return sock
    }

    /// Sends one command as another user (util-linux `setpriv`) and returns its reply.
    func command(_ cmd: String, socket: String, asUID uid: Int, gid: Int, groups: [Int]) throws -> JSONValue {
        let client = """
            import json, socket, sys
            s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect(sys.argv[1])
            f = s.makefile("rwb")
            f.write(json.dumps({"cmd": sys.argv[2], "id": 1}).encode() + b"\\n"); f.flush()
            for line in f:
                if json.loads(line).get("class") == "reply": print(line.decode().strip()); break
            """
        let groupArg = groups.isEmpty ? "--clear-groups" : "--groups=\(groups.map(String.init).joined(separator: ","))"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        p.arguments = [
            "--reuid=\(uid)", "--regid=\(gid)", groupArg, "--", "/usr/bin/python3", "-c", client, socket, cmd,
        ]
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 0)
        let line = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !line.isEmpty else { throw LineClient.Failure(description: "no reply from the client as uid \(uid)") }
        return try JSONParser.parse(line)
    }

    /// Changing uid needs root; under CI=true its absence fails instead of skipping.
    func requireRoot() throws {
        if getuid() == 0 { return }
        let reason = "needs root to connect as another user (setpriv)"
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(reason) }
        throw XCTSkip(reason)
    }
}
