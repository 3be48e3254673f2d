// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import XCTest

/// The fixture of the tests that start the real daemon on the demo recording
/// (`config/demo/head.csv`, replayed at real speed: a live-like stream) with no hardware: a
/// temporary directory for its config, socket, store and log, the daemon stopped and the
/// directory removed after each test. `FakeHardwareDaemonTestCase` is the one for fake IIO devices.
class ReplayDaemonTestCase: XCTestCase {
    /// The test's temporary directory (config, socket, store, log).
    var dir = ""
    /// The daemon the test started; stopped in `tearDown`.
    var daemon: DaemonProcess?

    /// The temporary directory's tag (it names the test class in /tmp).
    var tempTag: String { "daemon" }

    override func setUp() {
        super.setUp()
        dir = makeTempDir(tempTag)
    }

    override func tearDown() {
        if let d = daemon { _ = d.stop() }
        daemon = nil
        try? FileManager.default.removeItem(atPath: dir)
        super.tearDown()
    }

    /// Writes `dir/tiltd.toml`: `[socket]` with its path in `dir` and `socketKeys`, `[store]`
    /// likewise with `storeKeys`, then `extra` (more tables). Returns its path.
    @discardableResult
    func writeConfig(socketKeys: String = "", storeKeys: String = "", extra: String = "") throws -> String {
        let path = "\(dir)/tiltd.toml"
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        \(socketKeys)
        [store]
        path = "\(dir)/tiltd.sqlite"
        \(storeKeys)
        \(extra)
        """.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// Starts tiltd with `config` (default: `dir/tiltd.toml`, as `writeConfig` leaves it, written
    /// with no extra keys when it is not there yet) replaying the demo head at real speed, and
    /// returns a client that has read its hello. `connectTimeout`: how long the client waits for
    /// the socket to appear.
    @discardableResult
    func startReplayDaemon(config: String? = nil, connectTimeout: Double = 10) throws -> LineClient {
        let path = config ?? "\(dir)/tiltd.toml"
        if config == nil, !FileManager.default.fileExists(atPath: path) { try writeConfig() }
        daemon = try DaemonProcess(
            ["run", "--config", path, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "1"],
            logPath: "\(dir)/log")
        let c = try LineClient(path: "\(dir)/tiltd.sock", timeout: connectTimeout)
        _ = try c.next("hello")
        return c
    }
}
