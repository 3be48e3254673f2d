// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import XCTest

/// `tiltd monitor` in a real terminal: a tmux pane (100×30) on its own tmux server, read back
/// with capture-pane, driven with send-keys, against the real daemon replaying the demo recording.
final class MonitorTmuxTests: XCTestCase {
    var dir = ""
    var tmuxSocket = ""
    let session = "mon"

    override func setUpWithError() throws {
        dir = makeTempDir("mon")
        tmuxSocket = "\(dir)/tmux.sock"
        guard let tmux = Self.tmuxPath else {
            // tmux is in the project's apt list; under CI its absence is a failure, not a skip.
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail("tmux is not installed"); return }
            throw XCTSkip("tmux is not installed")
        }
        _ = tmux
    }

    override func tearDown() {
        _ = try? tmux(["kill-server"])
        try? FileManager.default.removeItem(atPath: dir)
    }

    static let tmuxPath: String? = ["/usr/bin/tmux", "/usr/local/bin/tmux"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs tmux on this test's private server; returns stdout.
    ///
    /// Spawned with posix_spawn and reaped with waitpid rather than with Foundation's Process:
    /// `new-session` starts the tmux server, which inherits the descriptors Process uses to
    /// notice a child's exit, so Process would wait for the server too. Output goes to a file
    /// for the same reason.
    @discardableResult
    func tmux(_ args: [String]) throws -> String {
        let outPath = "\(dir)/tmux-out-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: outPath) }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let path = Self.tmuxPath ?? "/usr/bin/tmux"
        let argv = ([path, "-S", tmuxSocket] + args).map { strdup($0) } + [nil]
        defer { for p in argv { free(p) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard rc == 0 else { throw LineClient.Failure(description: "spawn tmux: \(String(cString: strerror(rc)))") }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let data = FileManager.default.contents(atPath: outPath) ?? Data()
        // Exited normally with status 0 (WIFEXITED && WEXITSTATUS == 0).
        guard status & 0x7F == 0, (status >> 8) & 0xFF == 0 else {
            throw LineClient.Failure(description: "tmux \(args.joined(separator: " ")) failed (status \(status))")
        }
        return String(decoding: data, as: UTF8.self)
    }

    func pane() -> String { (try? tmux(["capture-pane", "-p", "-t", session])) ?? "" }
    func paneFlag(_ name: String) -> String {
        ((try? tmux(["display-message", "-p", "-t", session, "#{\(name)}"])) ?? "").trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// Starts the monitor in a detached 100×30 pane. A shell around it prints a marker before,
    /// and after it exits prints its status and the terminal modes, then stays (so the pane
    /// can be read after the monitor is gone).
    func startMonitor(_ args: String) throws {
        // Like an interactive shell, the wrapper survives the Ctrl-C meant for the monitor (a trap
        // with a command, unlike an ignored signal, is not inherited by the monitor).
        let script =
            "trap 'echo SHELL-SAW-INT' INT; printf 'BEFORE-MONITOR\\n'; '\(tiltdBinary)' monitor \(args); echo MONITOR-EXIT=$?; stty -a | tr ' ;' '\\n\\n' | grep -xE -- '-?(icanon|echo)' | tr '\\n' ' '; echo; echo AFTER-MONITOR; exec sleep 600"
        try tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "30", "sh", "-c", script])
    }

    func writeConfig() throws -> String { try writeDaemonConfig(in: dir, "[log]\nlevel = \"warning\"") }

    func startDaemon(_ config: String, log: String) throws -> DaemonProcess {
        try DaemonProcess(
            ["run", "--config", config, "--replay", "\(repositoryRoot)/config/demo/head.csv", "--speed", "2"],
            logPath: log)
    }

    /// The roll the pane shows (`roll  +90.0 deg`), if any.
    static func roll(in text: String) -> Double? {
        guard let r = text.range(of: #"roll +[+-][0-9]+\.[0-9] deg"#, options: .regularExpression) else { return nil }
        return Double(text[r].dropFirst(4).dropLast(4).trimmingCharacters(in: .whitespaces))
    }

    func testLiveViewDisconnectReconnectAndQuitRestoresTheTerminal() throws {
        let config = try writeConfig()
        var daemon = try startDaemon(config, log: "\(dir)/daemon1.log")
        try startMonitor("--socket '\(dir)/tiltd.sock'")

        // The upright head of the recording: roll ≈ +90 with the gauge and its thresholds.
        var screen = ""
        try waitUntil("the monitor shows roll near 90 and the gauge", timeout: 30) {
            screen = pane()
            guard let roll = Self.roll(in: screen) else { return false }
            return abs(roll - 90) < 5 && screen.contains("|roll| ") && screen.contains("O")
        }
        let lines = screen.components(separatedBy: "\n")
        XCTAssertTrue(lines.contains { $0.hasPrefix("connected (tiltd ") }, screen)
        let bar = try XCTUnwrap(lines.first { $0.hasPrefix("[") && $0.hasSuffix("]") }, screen)
        XCTAssertEqual(bar.count, 100, "the gauge spans the pane")
        XCTAssertEqual(bar.filter { $0 == "|" }.count, 2, "both thresholds drawn: \(bar)")
        let scale = try XCTUnwrap(lines.first { $0.hasPrefix(" 0 ") }, screen)
        XCTAssertTrue(scale.contains(" 63 ") && scale.contains(" 117 ") && scale.hasSuffix("180"), scale)
        XCTAssertTrue(screen.contains("game: idle"), screen)
        XCTAssertTrue(screen.contains("at rest: "), screen)
        XCTAssertEqual(paneFlag("alternate_on"), "1", "runs on the alternate screen")
        XCTAssertEqual(paneFlag("cursor_flag"), "0", "cursor hidden while running")

        // The periodic status request fills in the sample rate (60 Hz recording, by sample time).
        try waitUntil("the sample rate", timeout: 10) {
            screen = pane()
            guard let r = screen.range(of: #"rate: [0-9.]+ Hz"#, options: .regularExpression),
                let hz = Double(screen[r].dropFirst(6).dropLast(3))
            else { return false }
            return abs(hz - 60) < 3
        }
        XCTAssertTrue(screen.contains("dropped: 0 lines to this monitor"), screen)

        // The daemon goes away: the monitor says so and keeps the last readings.
        XCTAssertEqual(daemon.stop(), 0, daemon.log)
        try waitUntil("disconnected", timeout: 10) { pane().contains("disconnected, retrying...") }
        XCTAssertNotNil(Self.roll(in: pane()), "last readings stay on screen")

        // It comes back: the monitor reconnects by itself.
        daemon = try startDaemon(config, log: "\(dir)/daemon2.log")
        try waitUntil("reconnected", timeout: 15) {
            let p = pane()
            return p.contains("connected (tiltd ") && !p.contains("disconnected")
        }

        // q quits; the shell's screen is back, with the cursor and cooked terminal modes.
        try tmux(["send-keys", "-t", session, "q"])
        try waitUntil("the monitor exits and the shell reports", timeout: 10) { pane().contains("AFTER-MONITOR") }
        screen = pane()
        XCTAssertTrue(screen.contains("MONITOR-EXIT=0"), screen)
        XCTAssertTrue(screen.contains("BEFORE-MONITOR"), "the main screen is restored: \(screen)")
        XCTAssertFalse(screen.contains("|roll|"), "the view left with the alternate screen: \(screen)")
        XCTAssertTrue(screen.contains("icanon echo"), "canonical mode and echo restored: \(screen)")
        XCTAssertEqual(paneFlag("alternate_on"), "0")
        XCTAssertEqual(paneFlag("cursor_flag"), "1")
        XCTAssertEqual(daemon.stop(), 0, daemon.log)
    }

    func testCtrlCQuitsWhileWaitingForADaemon() throws {
        try startMonitor("--socket '\(dir)/absent.sock'")
        try waitUntil("the monitor waits for the daemon", timeout: 15) {
            pane().contains("disconnected, retrying... (no socket at \(dir)/absent.sock)")
        }
        XCTAssertEqual(paneFlag("alternate_on"), "1")
        try tmux(["send-keys", "-t", session, "C-c"])
        try waitUntil("the monitor exits and the shell reports", timeout: 10) { pane().contains("AFTER-MONITOR") }
        let screen = pane()
        XCTAssertTrue(screen.contains("MONITOR-EXIT=0"), screen)
        XCTAssertTrue(screen.contains("BEFORE-MONITOR"), screen)
        XCTAssertTrue(screen.contains("icanon echo"), screen)
        XCTAssertEqual(paneFlag("alternate_on"), "0")
        XCTAssertEqual(paneFlag("cursor_flag"), "1")
    }

    /// Not a terminal: one plain summary line a second, no escape sequences.
    func testPlainLinesWhenStdoutIsNotATerminal() throws {
        let config = try writeConfig()
        let daemon = try startDaemon(config, log: "\(dir)/daemon.log")
        _ = try LineClient(path: "\(dir)/tiltd.sock").next("hello")  // serving: the monitor's first try connects
        let monitor = try DaemonProcess(["monitor", "--config", config], logPath: "\(dir)/monitor.out")
        try waitUntil("three summary lines with roll and rate", timeout: 30) {
            monitor.log.components(separatedBy: "\n").filter {
                $0.hasPrefix("roll=") && $0.contains(" rate=") && !$0.contains("rate=?")
            }.count >= 3
        }
        XCTAssertEqual(monitor.stop(signal: SIGTERM), 0)
        let out = monitor.log
        XCTAssertTrue(out.hasPrefix("connected to \(dir)/tiltd.sock\n"), out)
        XCTAssertFalse(out.contains("\u{1B}"), "no escape sequences in plain output")
        let summary = try XCTUnwrap(out.components(separatedBy: "\n").last { $0.hasPrefix("roll=") })
        XCTAssertTrue(
            summary.contains(" thresholds=63,117 game=idle score=0 head_frame=assumed fix=none rate="), summary)
        XCTAssertEqual(daemon.stop(), 0, daemon.log)
    }
}
