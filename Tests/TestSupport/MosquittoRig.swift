// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A real Mosquitto broker (Debian's `mosquitto`) on a free loopback port with a generated
/// config — optionally with users, passwords and an ACL file — plus `mosquitto_sub` /
/// `mosquitto_pub` helpers. Persistence is on, so a restart keeps sessions and retained messages
/// the way an installed broker does.
public final class MosquittoRig: @unchecked Sendable {
    public let dir: String
    public let port: Int
    private var process: Process?
    private var log: FileHandle?

    /// Why the broker cannot run here (no mosquitto installed), or nil.
    public static var unavailableReason: String? {
        FileManager.default.isExecutableFile(atPath: "/usr/sbin/mosquitto")
            && FileManager.default.isExecutableFile(atPath: "/usr/bin/mosquitto_sub")
            ? nil : "mosquitto and mosquitto-clients are not installed (scripts/install-deps --test)"
    }

    /// Writes the config (with `users` name → password and `acl` text when given) and starts
    /// the broker; returns when it accepts connections.
    public init(dir: String, users: [String: String] = [:], acl: String? = nil) throws {
        self.dir = dir
        port = try Self.freePort()
        var conf = """
            listener \(port) 127.0.0.1
            persistence true
            persistence_location \(dir)/
            autosave_interval 1
            user root
            log_dest file \(dir)/mosquitto.log
            log_type all
            max_queued_messages 10000

            """
        if users.isEmpty {
            conf += "allow_anonymous true\n"
        } else {
            conf += "allow_anonymous false\npassword_file \(dir)/passwd\n"
            _ = FileManager.default.createFile(atPath: "\(dir)/passwd", contents: nil)
            chmod("\(dir)/passwd", 0o600)
            for (u, p) in users.sorted(by: { $0.key < $1.key }) {
                let (status, out) = try Self.run("/usr/bin/mosquitto_passwd", ["-b", "\(dir)/passwd", u, p])
                guard status == 0 else { throw RigError("mosquitto_passwd failed: \(out)") }
            }
        }
        if let acl {
            try acl.write(toFile: "\(dir)/acl", atomically: true, encoding: .utf8)
            conf += "acl_file \(dir)/acl\n"
        }
        try conf.write(toFile: "\(dir)/mosquitto.conf", atomically: true, encoding: .utf8)
        try start()
    }

    deinit { _ = stop(signal: SIGKILL) }

    /// Starts (or restarts) the broker with the same config and port.
    public func start() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/sbin/mosquitto")
        p.arguments = ["-c", "\(dir)/mosquitto.conf"]
        _ = FileManager.default.createFile(atPath: "\(dir)/stderr", contents: nil)
        let h = try FileHandle(forWritingTo: URL(fileURLWithPath: "\(dir)/stderr"))
        h.seekToEndOfFile()
        p.standardError = h
        p.standardOutput = h
        try p.run()
        process = p
        log = h
        try waitUntil("mosquitto to listen on \(port)", timeout: 10) {
            if !p.isRunning { throw RigError("mosquitto exited: \(brokerLog)") }
            return Self.canConnect(port: port)
        }
    }

    /// Stops the broker (SIGTERM saves the persistence file); returns once it has exited.
    @discardableResult
    public func stop(signal: Int32 = SIGTERM) -> Int32? {
        guard let p = process else { return nil }
        process = nil
        if p.isRunning { kill(p.processIdentifier, signal) }
        let deadline = Date().addingTimeInterval(10)
        while p.isRunning && Date() < deadline { usleep(10_000) }
        if p.isRunning { kill(p.processIdentifier, SIGKILL); p.waitUntilExit() }
        try? log?.close()
        return p.terminationStatus
    }

    /// The broker's own log (connections, denials).
    public var brokerLog: String {
        ((try? String(contentsOfFile: "\(dir)/mosquitto.log", encoding: .utf8)) ?? "")
            + ((try? String(contentsOfFile: "\(dir)/stderr", encoding: .utf8)) ?? "")
    }

    /// Publishes one message with `mosquitto_pub` (as `user` when given).
    public func publish(
        _ topic: String, _ payload: String, user: (String, String)? = nil, qos: Int = 1, retain: Bool = false
    ) throws {
        var args = ["-h", "127.0.0.1", "-p", "\(port)", "-t", topic, "-m", payload, "-q", "\(qos)"]
        if retain { args.append("-r") }
        if let (u, p) = user { args += ["-u", u, "-P", p] }
        let (status, out) = try Self.run("/usr/bin/mosquitto_pub", args)
        guard status == 0 else { throw RigError("mosquitto_pub \(topic) failed: \(out)") }
    }

    /// Starts `mosquitto_sub -v` on `topics`, its output going to a file read by `Subscriber`.
    public func subscribe(
        _ topics: [String], user: (String, String)? = nil, clientID: String? = nil
    ) throws -> Subscriber {
        var args = ["-h", "127.0.0.1", "-p", "\(port)", "-v", "-q", "1", "-F", "%t\t%r\t%p"]
        for t in topics { args += ["-t", t] }
        if let (u, p) = user { args += ["-u", u, "-P", p] }
        // A persistent session: messages published while the broker restarts are kept for it.
        if let id = clientID { args += ["-i", id, "-c"] }
        return try Subscriber(args: args, path: "\(dir)/sub-\(UUID().uuidString.prefix(6))")
    }

    /// A running `mosquitto_sub`: every message it printed, as (topic, retained, payload).
    public final class Subscriber: @unchecked Sendable {
        let process = Process()
        let path: String
        init(args: [String], path: String) throws {
            self.path = path
            process.executableURL = URL(fileURLWithPath: "/usr/bin/mosquitto_sub")
            process.arguments = args
            _ = FileManager.default.createFile(atPath: path, contents: nil)
            let h = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            process.standardOutput = h
            process.standardError = h
            try process.run()
        }
        deinit { stop() }
        public func stop() {
            if process.isRunning { kill(process.processIdentifier, SIGTERM); process.waitUntilExit() }
        }
        /// Messages so far (a payload with a newline would split: tiltd's JSON has none).
        public var messages: [(topic: String, retained: Bool, payload: String)] {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            return text.split(separator: "\n", omittingEmptySubsequences: false).compactMap { line in
                let parts = line.split(separator: "\t", maxSplits: 2, omittingEmptySubsequences: false)
                guard parts.count >= 2 else { return nil }
                return (String(parts[0]), parts[1] == "1", parts.count > 2 ? String(parts[2]) : "")
            }
        }
        /// Payloads seen on `topic`.
        public func payloads(_ topic: String) -> [String] { messages.filter { $0.topic == topic }.map(\.payload) }
        /// Waits for a message on `topic` matching `match`; returns its payload.
        @discardableResult
        public func wait(
            _ topic: String, timeout: Double = 15, _ match: (String) -> Bool = { _ in true }
        ) throws -> String {
            var found: String?
            try waitUntil("a message on \(topic)", timeout: timeout) {
                found = payloads(topic).last(where: match)
                return found != nil
            }
            return found!
        }
    }

    public struct RigError: Error, CustomStringConvertible {
        public var description: String
        public init(_ d: String) { description = d }
    }

    /// Runs a program to completion; (status, stdout+stderr).
    static func run(_ exe: String, _ args: [String]) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: exe)
        p.arguments = args
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    static func freePort() throws -> Int {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = 0
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &addr) { ptr in
            ptr.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(s, $0, len) == 0 && getsockname(s, $0, &len) == 0
            }
        }
        guard ok else { throw RigError("no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: addr.sin_port))
    }

    static func canConnect(port: Int) -> Bool {
        let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(s) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        addr.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &addr) { ptr in
            ptr.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(s, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
