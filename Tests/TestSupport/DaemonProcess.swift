// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltProtocol

/// The repository root, found from this file's path.
public let repositoryRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    while url.path != "/" {
        url.deleteLastPathComponent()
        if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url.path }
    }
    return FileManager.default.currentDirectoryPath
}()

/// The `tiltd` binary under test: $TILTD_BIN, else the debug build.
public var tiltdBinary: String {
    ProcessInfo.processInfo.environment["TILTD_BIN"] ?? "\(repositoryRoot)/.build/debug/tiltd"
}

/// A real `tiltd` process started by a test, with its stderr captured to a file.
public final class DaemonProcess: Sendable {
    public let process = Process()
    public let logPath: String

    /// The command `tiltd` was started through (`umockdev-run … --`), empty when started itself.
    public let launcher: [String]

    /// Starts `tiltd ARGS` with an optional extra environment; with a `launcher`, as
    /// `LAUNCHER… tiltd ARGS` (`launcher[0]` an absolute path), e.g. under `umockdev-run`.
    public init(
        _ args: [String], launcher: [String] = [], environment: [String: String] = [:], logPath: String
    ) throws {
        self.logPath = logPath
        self.launcher = launcher
        process.executableURL = URL(fileURLWithPath: launcher.first ?? tiltdBinary)
        process.arguments = launcher.isEmpty ? args : Array(launcher.dropFirst()) + [tiltdBinary] + args
        var env = ProcessInfo.processInfo.environment
        for (k, v) in environment { env[k] = v }
        process.environment = env
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        process.standardError = log
        process.standardOutput = log
        try process.run()
    }

    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }
    public var isRunning: Bool { process.isRunning }
    public var pid: Int32 { process.processIdentifier }

    /// Sends `signal` and waits up to `timeout` for the exit; returns the exit status. Under a
    /// launcher the signal goes to tiltd itself (umockdev-run does not pass signals on; it exits
    /// with its child's status).
    @discardableResult
    public func stop(signal: Int32 = SIGTERM, timeout: Double = 10) -> Int32? {
        if process.isRunning { kill(daemonPID ?? process.processIdentifier, signal) }
        return waitForExit(timeout: timeout)
    }

    /// tiltd's own pid: the process started, or under a launcher the descendant of it that runs
    /// the tiltd binary (nil while there is none yet).
    public var daemonPID: Int32? {
        if launcher.isEmpty { return process.isRunning ? process.processIdentifier : nil }
        let binary = URL(fileURLWithPath: tiltdBinary).resolvingSymlinksInPath().path
        var parents: [Int32: Int32] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { continue }
            // "pid (comm) state ppid …": the fields after the last ')'.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            if fields.count > 1, let ppid = Int32(fields[1]) { parents[pid] = ppid }
        }
        func descends(_ pid: Int32) -> Bool {
            var p = pid
            for _ in 0..<16 {
                guard let up = parents[p] else { return false }
                if up == process.processIdentifier { return true }
                p = up
            }
            return false
        }
        return parents.keys.sorted().first { pid in
            descends(pid) && (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")) == binary
        }
    }

    /// Waits for the process to end by itself.
    public func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit(); return nil }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
    }
}

/// Runs `tiltd ARGS` to completion, returning (status, stdout+stderr).
public func runTiltd(_ args: [String], timeout: Double = 30) throws -> (Int32, String) {
    let dir = makeTempDir("run")
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let p = try DaemonProcess(args, logPath: "\(dir)/out")
    let status = p.waitForExit(timeout: timeout) ?? -1
    return (status, p.log)
}

/// Sends `lines` to the socket from a real second process running as user nobody (socat under
/// setpriv), and returns every JSON line it received. Needs root to change user.
public func exchangeAsNobody(_ lines: [String], socket: String) throws -> [JSONValue] {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    p.arguments = [
        "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/socat", "-t", "2", "-", "UNIX-CONNECT:\(socket)",
    ]
    let input = Pipe(), output = Pipe()
    p.standardInput = input; p.standardOutput = output
    try p.run()
    input.fileHandleForWriting.write(Data(lines.map { $0 + "\n" }.joined().utf8))
    try input.fileHandleForWriting.close()
    p.waitUntilExit()
    return String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        .split(separator: "\n").compactMap { try? JSONParser.parse(String($0)) }
}

/// Writes `dir/tiltd.toml` for a daemon of the tests' own: its socket and store in `dir`, then
/// `extra` (more tables). Returns the file's path.
public func writeDaemonConfig(in dir: String, _ extra: String = "") throws -> String {
    let path = "\(dir)/tiltd.toml"
    try """
    [socket]
    path = "\(dir)/tiltd.sock"
    [store]
    path = "\(dir)/tiltd.sqlite"
    \(extra)
    """.write(toFile: path, atomically: true, encoding: .utf8)
    return path
}
