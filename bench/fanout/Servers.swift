// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TiltCore

/// What serves the clients: the real daemon (fan-out through io_uring as configured by default,
/// or with `[socket] io_uring = false`: write(2) per client), or the plain C baseline (cfanout.c)
/// making the same writes the same way — with `hop`, from a thread other than the one that reads
/// the scans, as tiltd's event loop writes what its sampler thread read.
enum FanoutServer {
    case tiltd(String, ioURing: Bool)
    case baseline(String, ioURing: Bool, hop: Bool = false)

    var name: String {
        switch self {
        case .tiltd(_, let ioURing): ioURing ? "tiltd" : "tiltd write(2)"
        case .baseline(_, let ioURing, let hop): (ioURing ? "C io_uring" : "C write(2)") + (hop ? " hop" : "")
        }
    }

    /// Whether its writes go through io_uring.
    var ioURing: Bool {
        switch self {
        case .tiltd(_, let on), .baseline(_, let on, _): on
        }
    }

    var isBaseline: Bool {
        if case .baseline = self { return true }
        return false
    }

    /// The C baseline with the thread hop.
    var isHopBaseline: Bool {
        if case .baseline(_, _, true) = self { return true }
        return false
    }

    /// The daemon as configured by default: the one the targets are about.
    var isDefaultTiltd: Bool {
        if case .tiltd(_, true) = self { return true }
        return false
    }
}

/// A server under test, started: its process, and where the feeder's scans go.
struct StartedServer {
    var process: Process
    var log: String
    /// Writes scan i (its timestamp is `timeline.timestamp(i)`).
    var feed: (Int) throws -> Void
    /// Releases what feeding holds (the FIFO); the server is stopped separately.
    var close: () -> Void
}

/// Starts the server under test with its socket at `socketPath` in `dir`, ready to be fed.
func startServer(
    _ server: FanoutServer, cfg: FanoutConfiguration, dir: String, socketPath: String,
    timeline: ScanTimeline, count: Int
) throws -> StartedServer {
    switch server {
    case .tiltd(let tiltd, let ioURing):
        return try startTiltd(
            tiltd, ioURing: ioURing, cfg: cfg, dir: dir, socketPath: socketPath, timeline: timeline, count: count)
    case .baseline(let path, let ioURing, let hop):
        return try startBaseline(
            path, ioURing: ioURing, hop: hop, dir: dir, socketPath: socketPath, timeline: timeline)
    }
}

/// The C baseline: scans are 8-byte timestamps written into a FIFO it reads.
func startBaseline(
    _ path: String, ioURing: Bool, hop: Bool, dir: String, socketPath: String, timeline: ScanTimeline
) throws -> StartedServer {
    let fifo = "\(dir)/ticks"
    guard mkfifo(fifo, 0o600) == 0 else { throw BenchError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: path)
    process.arguments = [socketPath, fifo] + (ioURing ? ["io_uring"] : []) + (hop ? ["hop"] : [])
    let logPath = "\(dir)/baseline.log"
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
    process.standardOutput = log
    process.standardError = log
    try process.run()
    // Blocks until cfanout opens its end, which it does right after listening.
    let fd = open(fifo, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else { throw BenchError("open \(fifo): \(String(cString: strerror(errno)))") }
    return StartedServer(
        process: process, log: logPath,
        feed: { i in
            var t = timeline.timestamp(i)
            guard write(fd, &t, 8) == 8 else {
                throw BenchError("write to cfanout: \(String(cString: strerror(errno)))")
            }
        }, close: { Glibc.close(fd) })
}

/// The real daemon reading an inv_mpu6050-like fake device: scans go into the device's FIFO.
func startTiltd(
    _ tiltd: String, ioURing: Bool = true, cfg: FanoutConfiguration, dir: String, socketPath: String,
    timeline: ScanTimeline, count: Int
) throws -> StartedServer {
    try """
    [imu]
    device = "auto"
    rate_hz = \(cfg.rateHz)
    # The feeder starts after all clients have connected, later than the one second auto mode
    # waits for a buffer's first scan before it polls instead: stay buffered.
    mode = "buffered"
    [socket]
    path = "\(socketPath)"
    io_uring = \(ioURing)
    [store]
    path = "\(dir)/tiltd.sqlite"
    [log]
    level = "warning"
    """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)

    let device = FakeIIODevice.mpu6050()
    let scenario = try FakeScenario([device])
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tiltd)
    process.arguments = ["run", "--config", "\(dir)/tiltd.toml"]
    let logPath = "\(dir)/daemon.log"
    _ = FileManager.default.createFile(atPath: logPath, contents: nil)
    let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
    process.standardOutput = log
    process.standardError = log
    try process.run()

    // The daemon has the device streaming once libiio enabled its buffer.
    let writer: ScanWriter
    do {
        writer = try ScanWriter(scenario: scenario, device: device, timeout: 20)
    } catch {
        kill(process.processIdentifier, SIGKILL)
        scenario.remove()
        throw BenchError("\(error)\ndaemon log:\n\((try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "")")
    }
    // Precompute the raw scans so the paced loop only writes; the fake IMU turns, so attitudes change.
    let motion = Motion(start: Quaternion(roll: 0.3, pitch: -0.2, yaw: 0), bodyRate: Vector3(0.2, -0.1, 0.5))
    let rateHz = 1e9 / Double(timeline.period)
    let scans = (0..<count).map { i in
        let r = motion.reading(at: Double(i) / rateHz)
        return ScanWriter.scan(
            t: timeline.timestamp(i), accel: device.rawCounts(r.accel, group: device.accel!),
            gyro: device.rawCounts(r.gyro, group: device.gyro!))
    }
    return StartedServer(
        process: process, log: logPath, feed: { i in try writer.write([scans[i]]) },
        close: {
            writer.close(); scenario.remove()
        })
}
