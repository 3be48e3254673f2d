// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A real headless Chromium (Debian's `chromium`) started for a test or a bench, with the
/// DevTools protocol on a loopback port it picks itself (read back from `DevToolsActivePort`).
public final class Chromium: @unchecked Sendable {
    public let process = Process()
    public let userDataDir: String
    /// The log file this object chose (and so removes when Chromium stops), if the caller gave none.
    private var ownLog: String?
    /// `ws://127.0.0.1:PORT/devtools/browser/ID`.
    public let browserURL: String

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// The browser binary: $CHROMIUM, else Debian's.
    public static var binary: String? {
        let env = ProcessInfo.processInfo.environment["CHROMIUM"]
        return [env, "/usr/bin/chromium", "/usr/bin/chromium-browser"].compactMap { $0 }.first {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    /// Starts Chromium and waits (up to `timeout`) until its DevTools endpoint is up.
    public init(timeout: Double = 60, logPath: String? = nil) throws {
        guard let bin = Self.binary else {
            throw Failure("chromium is not installed (apt-get install chromium, see scripts/install-deps --test)")
        }
        userDataDir = "/tmp/tiltd-chromium-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: userDataDir, withIntermediateDirectories: true)
        process.executableURL = URL(fileURLWithPath: bin)
        var args = [
            "--headless=new", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking", "--disable-extensions", "--disable-component-update",
            "--remote-debugging-port=0", "--remote-debugging-address=127.0.0.1",
            // The DevTools client here is not a web page; Chromium checks Origin otherwise.
            "--remote-allow-origins=*", "--user-data-dir=\(userDataDir)",
            // Pages in background tabs must keep drawing: the test watches several at once.
            "--disable-background-timer-throttling", "--disable-renderer-backgrounding",
            "--disable-backgrounding-occluded-windows",
            "--window-size=1280,900", "about:blank",
        ]
        // Chromium's sandbox refuses to run as root; the tests run as root in the fake-hardware namespace.
        if getuid() == 0 { args.insert("--no-sandbox", at: 0) }
        process.arguments = args
        // Chromium's own temporary files (its singleton socket) go in the profile, removed by `stop`.
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = userDataDir
        process.environment = environment
        let log = logPath ?? "\(userDataDir).log"
        ownLog = logPath == nil ? log : nil
        FileManager.default.createFile(atPath: log, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        let portFile = "\(userDataDir)/DevToolsActivePort"
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if let text = try? String(contentsOfFile: portFile, encoding: .utf8) {
                let lines = text.split(separator: "\n")
                if lines.count >= 2, let port = Int(lines[0]) {
                    browserURL = "ws://127.0.0.1:\(port)\(lines[1])"; break
                }
            }
            if !process.isRunning {
                throw Failure(
                    "chromium exited with status \(process.terminationStatus): \((try? String(contentsOfFile: log, encoding: .utf8))?.suffix(2000) ?? "")"
                )
            }
            if Date() > deadline {
                process.terminate(); throw Failure("chromium did not open its DevTools port within \(timeout) s")
            }
            usleep(50_000)
        }
    }

    /// CPU time (user + system, seconds) Chromium and its children have used, from /proc.
    public var pid: Int32 { process.processIdentifier }

    public func stop() {
        if process.isRunning {
            process.terminate()
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(20_000) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL); process.waitUntilExit() }
        }
        try? FileManager.default.removeItem(atPath: userDataDir)
        if let ownLog { try? FileManager.default.removeItem(atPath: ownLog) }
    }

    deinit { stop() }
}
