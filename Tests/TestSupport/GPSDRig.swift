// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

// The rig for testing against the real gpsd: a stand-in receiver (scripts/nmea-source) on a
// loopback port and a gpsd reading it as a tcp:// device. Used by the GPSDSource tests
// (TiltSensorsTests) and by the daemon-level GPS and fault tests (IntegrationTests).
// Every wait polls a condition against a deadline; every process is killed in tearDown.

/// Thrown when the rig cannot be set up; the test fails with the message.
public struct RigError: Error, CustomStringConvertible {
    /// What went wrong, for the test's failure message.
    public var description: String
    /// A rig error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// Polls `condition` every 20 ms until it holds or `timeout` seconds pass. Returns whether it held.
public func waitFor(_ timeout: Double, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now.advanced(by: .milliseconds(Int64(timeout * 1000)))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(20_000)
    }
    return condition()
}

/// A free TCP port on 127.0.0.1, found by letting the kernel pick one for a socket bound to port 0.
/// The socket is closed again, so another process could in principle take the port first; on a
/// test machine's loopback that is rare, and gpsd failing to bind shows up as a clear rig error.
public func freeLoopbackPort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RigError("socket: \(String(cString: strerror(errno)))") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    guard bound == 0 else { throw RigError("bind: \(String(cString: strerror(errno)))") }
    let named = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    guard named == 0 else { throw RigError("getsockname: \(String(cString: strerror(errno)))") }
    return Int(UInt16(bigEndian: address.sin_port))
}

/// True when something listens on TCP `port` (asked of the kernel with `ss`, without connecting:
/// a probe connection would itself be a gpsd client).
public func isListening(port: Int) -> Bool {
    let ss = Process()
    ss.executableURL = URL(fileURLWithPath: "/usr/bin/ss")
    ss.arguments = ["-Hltn", "sport = :\(port)"]
    let out = Pipe()
    ss.standardOutput = out
    ss.standardError = FileHandle.nullDevice
    guard (try? ss.run()) != nil else { return false }
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    ss.waitUntilExit()
    return text.contains("LISTEN")
}

/// A child process whose stdout lines are collected, with stdin kept open for commands.
public final class ChildProcess: Sendable {
    /// A label for messages.
    public let name: String
    private let process = Process()
    private let input = Pipe()
    private let lines = Mutex<[String]>([])
    private let partial = Mutex<String>("")

    /// Starts `executable` with `arguments`; stdout is collected by line unless `logFile` is given
    /// (then stdout and stderr go there).
    public init(name: String, executable: String, arguments: [String], logFile: URL? = nil) throws {
        self.name = name
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = input
        if let logFile {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
            let handle = try FileHandle(forWritingTo: logFile)
            process.standardOutput = handle
            process.standardError = handle
        } else {
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.standardError
            output.fileHandleForReading.readabilityHandler = { [weak self] handle in
                let data = handle.availableData
                guard let self, !data.isEmpty else { return }
                let text = String(decoding: data, as: UTF8.self)
                self.partial.withLock { buffer in
                    buffer += text
                    while let newline = buffer.firstIndex(of: "\n") {
                        let line = String(buffer[..<newline])
                        buffer = String(buffer[buffer.index(after: newline)...])
                        self.lines.withLock { $0.append(line) }
                    }
                }
            }
        }
        try process.run()
    }

    /// The child's process id.
    public var pid: Int32 { process.processIdentifier }
    /// Whether the child still runs.
    public var isRunning: Bool { process.isRunning }
    /// Every complete stdout line so far.
    public var output: [String] { lines.withLock { $0 } }

    /// Waits for a stdout line starting with `prefix`; returns it.
    public func line(startingWith prefix: String, timeout: Double) -> String? {
        var found: String?
        _ = waitFor(timeout) {
            found = output.first { $0.hasPrefix(prefix) }
            return found != nil
        }
        return found
    }

    /// Sends one command line on stdin.
    public func send(_ command: String) {
        input.fileHandleForWriting.write(Data((command + "\n").utf8))
    }

    /// Sends `signal` and waits (bounded) for the process to end.
    public func kill(_ signal: Int32 = SIGTERM, timeout: Double = 5) {
        guard process.isRunning else { return }
        Glibc.kill(process.processIdentifier, signal)
        if !waitFor(timeout, { !process.isRunning }) {
            Glibc.kill(process.processIdentifier, SIGKILL)
            _ = waitFor(timeout) { !process.isRunning }
        }
    }
}

/// Writes NMEA sentences with correct checksums, for files the stand-in receiver serves.
public enum NMEA {
    /// `$BODY*CS` with the XOR checksum of BODY.
    public static func sentence(_ body: String) -> String {
        let sum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
        return "$" + body + "*" + String(format: "%02X", sum)
    }

    /// An angle as NMEA's (d)ddmm.mmmmm text and its hemisphere letter.
    public static func angle(_ value: Double, degreeDigits: Int, positive: String, negative: String) -> (String, String)
    {
        let magnitude = abs(value)
        let degrees = Int(magnitude)
        let minutes = (magnitude - Double(degrees)) * 60
        let degreeText = String(format: "%0\(degreeDigits)d", degrees)
        return (degreeText + String(format: "%08.5f", minutes), value >= 0 ? positive : negative)
    }

    /// RMC + GGA for one epoch with a fix.
    public static func epoch(
        time: Int64, lat: Double, lon: Double, altMSL: Double, speed: Double, track: Double
    ) -> [String] {
        let date = Date(timeIntervalSince1970: TimeInterval(time))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let hms = String(format: "%02d%02d%02d.00", c.hour!, c.minute!, c.second!)
        let dmy = String(format: "%02d%02d%02d", c.day!, c.month!, c.year! % 100)
        let (latText, ns) = angle(lat, degreeDigits: 2, positive: "N", negative: "S")
        let (lonText, ew) = angle(lon, degreeDigits: 3, positive: "E", negative: "W")
        let knots = String(format: "%.3f", speed / 0.514444)
        return [
            sentence(
                "GPRMC,\(hms),A,\(latText),\(ns),\(lonText),\(ew),\(knots),\(String(format: "%.1f", track)),\(dmy),,,A"),
            sentence(
                "GPGGA,\(hms),\(latText),\(ns),\(lonText),\(ew),1,08,0.9,\(String(format: "%.1f", altMSL)),M,47.0,M,,"),
        ]
    }

    /// RMC + GGA for one epoch of a receiver that has no fix (RMC status V, GGA quality 0).
    public static func noFixEpoch(time: Int64) -> [String] {
        let date = Date(timeIntervalSince1970: TimeInterval(time))
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let c = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        let hms = String(format: "%02d%02d%02d.00", c.hour!, c.minute!, c.second!)
        let dmy = String(format: "%02d%02d%02d", c.day!, c.month!, c.year! % 100)
        return [
            sentence("GPRMC,\(hms),V,,,,,,,\(dmy),,,N"),
            sentence("GPGGA,\(hms),,,,,0,00,99.99,,,,,,"),
        ]
    }
}

/// One expected epoch of a test track.
public struct TrackPoint: Sendable {
    /// Unix seconds.
    public var time: Int64
    /// Degrees.
    public var lat: Double
    /// Degrees.
    public var lon: Double
    /// Metres above mean sea level.
    public var altMSL: Double
    /// Metres per second.
    public var speed: Double
    /// Degrees from true north.
    public var track: Double

    /// One epoch's values.
    public init(time: Int64, lat: Double, lon: Double, altMSL: Double, speed: Double, track: Double) {
        self.time = time; self.lat = lat; self.lon = lon; self.altMSL = altMSL; self.speed = speed; self.track = track
    }

    /// This epoch as RMC + GGA sentences.
    public var sentences: [String] {
        NMEA.epoch(time: time, lat: lat, lon: lon, altMSL: altMSL, speed: speed, track: track)
    }
}

/// A walk north-east from a start point, one epoch per second of fix time.
public func testTrack(count: Int, start: Int64 = 1_714_564_800) -> [TrackPoint] {
    (0..<count).map { (k: Int) -> TrackPoint in
        let step = Double(k)
        let lat: Double = 47.3769 + step * 1e-5
        let lon: Double = 8.5417 + step * 1.5e-5
        let alt: Double = 408.0 + Double(k % 7)
        let speed: Double = 1.2 + Double(k % 5) * 0.1
        return TrackPoint(time: start + Int64(k), lat: lat, lon: lon, altMSL: alt, speed: speed, track: 44.0)
    }
}

/// The whole rig for one test: a temporary directory, the stand-in receiver, gpsd.
///
/// `@unchecked`: no lock; the rig's processes are started and stopped by the test's own thread
/// only, and other threads just read its constant port and directory.
public final class GPSDRig: @unchecked Sendable {
    /// Where Debian installs gpsd.
    public static let gpsdPath = "/usr/sbin/gpsd"

    /// A temporary directory for the NMEA file and gpsd's logs.
    public let directory: URL
    /// The port gpsd serves clients on (put it in the daemon's `[gps] server`).
    public let gpsdPort: Int
    /// The stand-in receiver, once started; `send("pause")`/`send("resume")` hold and release it.
    public private(set) var receiver: ChildProcess?
    /// The receiver's port (gpsd's tcp:// device).
    public private(set) var sourcePort: Int?
    /// gpsd (under its wrappers, when root), once started.
    public private(set) var gpsd: ChildProcess?
    private var gpsdStarts = 0

    /// Makes the directory and picks gpsd's port; starts nothing.
    public init() throws {
        directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("tiltd-gps-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        gpsdPort = try freeLoopbackPort()
    }

    /// Starts the stand-in receiver serving `lines`, one epoch per `interval` seconds.
    public func startReceiver(lines: [String], interval: Double = 0.1) throws {
        let file = directory.appendingPathComponent("track.nmea")
        try (lines.joined(separator: "\r\n") + "\r\n").write(to: file, atomically: true, encoding: .ascii)
        let script = "\(repositoryRoot)/scripts/nmea-source"
        let child = try ChildProcess(
            name: "nmea-source", executable: "/usr/bin/env",
            arguments: [
                "python3", script, "--file", file.path,
                "--interval", String(interval),
            ])
        receiver = child
        guard let line = child.line(startingWith: "port ", timeout: 10),
            let port = Int(line.dropFirst(5))
        else {
            throw RigError("nmea-source did not report its port; output: \(child.output)")
        }
        sourcePort = port
    }

    /// Starts gpsd on `gpsdPort`, reading the receiver, and waits until it listens.
    public func startGPSD() throws {
        guard let sourcePort else { throw RigError("start the receiver first") }
        gpsdStarts += 1
        let log = directory.appendingPathComponent("gpsd-\(gpsdStarts).log")
        let gpsdArguments = ["-N", "-b", "-S", String(gpsdPort), "tcp://127.0.0.1:\(sourcePort)"]
        let child: ChildProcess
        if geteuid() == 0 {
            // gpsd drops root for its own user, which clears a parent-death signal, so it runs
            // under a shell that is PID 1 of a fresh PID namespace: if the test runner is killed
            // (a CI timeout), setpriv's signal takes unshare, --kill-child takes the shell, and
            // the namespace's end takes gpsd. No gpsd outlives the tests.
            child = try ChildProcess(
                name: "gpsd", executable: "/usr/bin/setpriv",
                arguments: [
                    "--pdeathsig", "KILL", "/usr/bin/unshare", "--pid", "--kill-child=KILL",
                    "/bin/sh", "-c", "\"$0\" \"$@\" & wait", Self.gpsdPath,
                ] + gpsdArguments,
                logFile: log)
        } else {
            child = try ChildProcess(name: "gpsd", executable: Self.gpsdPath, arguments: gpsdArguments, logFile: log)
        }
        gpsd = child
        guard waitFor(10, { isListening(port: gpsdPort) || !child.isRunning }), child.isRunning else {
            let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
            throw RigError("gpsd did not listen on \(gpsdPort) within 10 s; log:\n\(text)")
        }
    }

    /// The pid of gpsd itself (below the unshare and shell wrappers, when they are used).
    private func gpsdProcessID() -> Int32? {
        guard var pid = gpsd?.pid else { return nil }
        for _ in 0..<3 {
            if (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8))?.hasPrefix("gpsd") == true {
                return pid
            }
            let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
            guard let first = children.split(separator: " ").first, let child = Int32(first) else { return nil }
            pid = child
        }
        return nil
    }

    /// Sends `signal` to gpsd itself and waits until it is gone and its port is free.
    public func killGPSD(_ signal: Int32 = SIGKILL) {
        if let pid = gpsdProcessID() {
            Glibc.kill(pid, signal)
            // The wrappers end when gpsd does.
            _ = waitFor(5) { !(gpsd?.isRunning ?? false) }
        }
        gpsd?.kill(SIGKILL)
        _ = waitFor(5) { !isListening(port: gpsdPort) }
    }

    /// Ends every process and removes the directory.
    public func tearDown() {
        // unshare ignores SIGTERM (it leaves signals to its child), so gpsd is signalled itself.
        killGPSD(SIGTERM)
        receiver?.send("quit")
        receiver?.kill(SIGTERM)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Fails (in CI) or skips (locally, by throwing what `skip` makes, e.g. `XCTSkip`) when the
    /// real gpsd is not installed. TestSupport does not link XCTest, hence the closure.
    public static func requireGPSD(skip: (String) -> any Error) throws {
        guard FileManager.default.isExecutableFile(atPath: gpsdPath) else {
            if ProcessInfo.processInfo.environment["CI"] == "true" {
                throw RigError("\(gpsdPath) is missing; CI must install gpsd")
            }
            throw skip("\(gpsdPath) is not installed")
        }
    }
}
