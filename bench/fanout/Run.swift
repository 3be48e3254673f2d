// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TiltCore

/// One benchmark configuration.
struct FanoutConfiguration {
    var rateHz: Int
    var clients: Int
    var seconds: Double
    var readerThreads: Int
}

/// The figures measured for one configuration.
struct FanoutResult {
    var configuration: FanoutConfiguration
    var scansWritten = 0
    /// Scans the feeder wrote more than one period late (it was starved of CPU itself).
    var lateScans = 0
    var latency = LatencySummary()
    /// Over scans: the latency of each scan's first line to any client, and of its last.
    var firstLine = LatencySummary(), lastLine = LatencySummary()
    /// Σ over reading clients of (scans written − attitude lines received).
    var linesLost = 0
    /// Reading clients that lost at least one line.
    var clientsLosing = 0
    var gapEvents = 0
    var droppedReported = 0
    var disorder = 0
    var closedClients = 0
    /// Daemon CPU from the first scan until every line was delivered, % of one core.
    var daemonCPU = 0.0
    /// Daemon CPU time per attitude line delivered to a reading client, µs.
    var daemonMicrosecondsPerLine = 0.0
    /// This process's CPU over the same period (the clients compete for the same 2 cores).
    var benchCPU = 0.0
    /// Daemon VmRSS (KiB): streaming with no client; with every client connected, before the
    /// first scan; after 10 s of feeding (and of the stalled client); at the end of feeding.
    var rssIdle = 0, rssConnected = 0, rssAt10s = 0, rssEnd = 0
    /// RSS samples (seconds since feeding began, KiB), one a second.
    var rssTrace: [(Double, Int)] = []
    /// The stalled client, read at the end: attitude lines it still got (held by the kernel, NIO
    /// and its bounded queue) and what its gap event said was dropped.
    var stalledHeld = 0, stalledDropped = 0
    var loadBefore = 0.0, loadAfter = 0.0
}

/// Starts the server (tiltd or the C baseline), connects the clients, feeds scans at the rate for
/// the configured time and measures. Needs the fake-hardware harness.
func runConfiguration(_ cfg: FanoutConfiguration, server: FanoutServer) throws -> FanoutResult {
    var result = FanoutResult(configuration: cfg)
    result.loadBefore = ProcStats.loadAverage()
    let dir = NSTemporaryDirectory() + "fanout-\(getpid())-\(cfg.rateHz)-\(cfg.clients)"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let socketPath = "\(dir)/tiltd.sock"
    // Scans: evenly spaced kernel timestamps, one per period, starting after the connections.
    let period = Int64(1_000_000_000 / cfg.rateHz)
    let count = Int(cfg.seconds * Double(cfg.rateHz))
    let timeline = ScanTimeline(t0: 1_000_000_000_000, period: period, capacity: count)
    let started = try startServer(server, cfg: cfg, dir: dir, socketPath: socketPath, timeline: timeline, count: count)
    let daemon = started.process
    let pid = daemon.processIdentifier
    var daemonLog: String { (try? String(contentsOfFile: started.log, encoding: .utf8)) ?? "" }
    defer {
        started.close()
        if daemon.isRunning {
            kill(pid, SIGTERM)
            let deadline = monotonicNanoseconds() + 10_000_000_000
            while daemon.isRunning && monotonicNanoseconds() < deadline { usleep(10_000) }
            if daemon.isRunning { kill(pid, SIGKILL); daemon.waitUntilExit() }
        }
    }
    let clientFDsProbe = try connectUnix(socketPath)  // the socket is up
    close(clientFDsProbe)
    usleep(200_000)
    result.rssIdle = ProcStats.rssKiB(pid) ?? 0
    let feeder = Feeder(timeline: timeline, count: count, feed: started.feed)
    // Reading clients: connect, ask for every attitude, then hand them to the reader threads.
    let watch = #"{"cmd":"watch","id":1,"attitude_hz":1000}"# + "\n"
    var fds: [Int32] = []
    defer { for fd in fds { close(fd) } }
    for _ in 0..<cfg.clients {
        let fd = try connectUnix(socketPath)
        fds.append(fd)
        try sendAll(fd, watch)
    }
    let per = (cfg.clients + cfg.readerThreads - 1) / cfg.readerThreads
    var shards: [ReaderShard] = []
    for s in 0..<cfg.readerThreads where s * per < cfg.clients {
        let part = Array(fds[(s * per)..<min(cfg.clients, (s + 1) * per)])
        let shard = try ReaderShard(fds: part, timeline: timeline, expectedLines: part.count * count)
        shard.start(name: "fanout-reader-\(s)")
        shards.append(shard)
    }
    var joined = false
    defer { if !joined { for s in shards { s.join() } } }
    let replyDeadline = monotonicNanoseconds() + 30_000_000_000
    while shards.reduce(0, { $0 + $1.replies.load(ordering: .relaxed) }) < cfg.clients {
        guard monotonicNanoseconds() < replyDeadline else {
            throw BenchError("not every client got its watch reply within 30 s\ndaemon log:\n\(daemonLog)")
        }
        usleep(5_000)
    }

    // The stalled client: watches attitude at full rate like the others, and never reads. It
    // watches attitude alone, so every line its queue drops is an attitude line and held +
    // dropped adds up to the scans written (a dropped `status` line would count one too many).
    let stalled = try connectUnix(socketPath)
    defer { close(stalled) }
    try sendAll(stalled, #"{"cmd":"watch","id":1,"classes":["attitude"],"attitude_hz":1000}"# + "\n")
    usleep(200_000)
    result.rssConnected = ProcStats.rssKiB(pid) ?? 0

    // Feed, sampling the daemon's memory once a second.
    let cpu0 = ProcStats.cpuSeconds(pid) ?? 0
    let selfCPU0 = ProcStats.selfCPUSeconds()
    let start = monotonicNanoseconds() + 50_000_000
    feeder.start(at: start)
    var nextSample = start + 1_000_000_000
    while !feeder.isFinished {
        sleepUntil(min(nextSample, monotonicNanoseconds() + 100_000_000))
        let now = monotonicNanoseconds()
        if now >= nextSample {
            result.rssTrace.append((Double(now - start) / 1e9, ProcStats.rssKiB(pid) ?? 0))
            nextSample += 1_000_000_000
        }
    }
    result.rssEnd = ProcStats.rssKiB(pid) ?? 0
    result.rssAt10s = result.rssTrace.first { $0.0 >= 10 }?.1 ?? result.rssEnd
    if let e = feeder.error { throw BenchError("feeding scans: \(e)") }
    result.scansWritten = feeder.written.load(ordering: .acquiring)
    result.lateScans = feeder.late.load(ordering: .relaxed)

    // Let the last lines arrive: until everything expected came, or nothing more for 2 s.
    let expectedTotal = cfg.clients * result.scansWritten
    var last = -1, lastChange = monotonicNanoseconds()
    while true {
        let got = shards.reduce(0) { $0 + $1.attitudeLines.load(ordering: .relaxed) }
        if got >= expectedTotal { break }
        if got != last { last = got; lastChange = monotonicNanoseconds() }
        if monotonicNanoseconds() - lastChange > 2_000_000_000 { break }
        usleep(5_000)
    }
    // CPU over feeding and delivering everything (a daemon that fell behind works on after the
    // last scan).
    let deliveredAt = monotonicNanoseconds()
    let daemonSeconds = (ProcStats.cpuSeconds(pid) ?? 0) - cpu0
    result.daemonCPU = daemonSeconds / (Double(deliveredAt - start) / 1e9) * 100
    result.benchCPU = (ProcStats.selfCPUSeconds() - selfCPU0) / (Double(deliveredAt - start) / 1e9) * 100
    let delivered = shards.reduce(0) { $0 + $1.attitudeLines.load(ordering: .relaxed) }
    result.daemonMicrosecondsPerLine = delivered > 0 ? daemonSeconds / Double(delivered) * 1e6 : 0
    for s in shards { s.join() }
    joined = true

    var all: [Int64] = []
    all.reserveCapacity(shards.reduce(0) { $0 + $1.latencies.count })
    for s in shards {
        all.append(contentsOf: s.latencies)
        for t in s.tallies {
            let lost = result.scansWritten - t.attitudeLines
            result.linesLost += lost
            if lost > 0 { result.clientsLosing += 1 }
            result.gapEvents += t.gapEvents
            result.droppedReported += t.droppedReported
            result.disorder += t.disorder
            if t.closed { result.closedClients += 1 }
        }
    }
    result.latency = LatencySummary(&all)
    var firstLines: [Int64] = [], lastLines: [Int64] = []
    for i in 0..<min(result.scansWritten, timeline.capacity) {
        let f = shards.map { $0.firstLatency[i] }.min() ?? .max
        let l = shards.map { $0.lastLatency[i] }.max() ?? .min
        if f != .max { firstLines.append(f) }
        if l != .min { lastLines.append(l) }
    }
    result.firstLine = LatencySummary(&firstLines)
    result.lastLine = LatencySummary(&lastLines)
    (result.stalledHeld, result.stalledDropped) = drainStalled(stalled)
    result.loadAfter = ProcStats.loadAverage()
    return result
}

/// Reads what the stalled client was left with: attitude lines, and the `dropped` count of its
/// gap event(s). Reads until the daemon has nothing more for it (300 ms of silence).
func drainStalled(_ fd: Int32) -> (held: Int, dropped: Int) {
    setNonBlocking(fd)
    var buffer: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    var quietSince = monotonicNanoseconds()
    while monotonicNanoseconds() - quietSince < 300_000_000 {
        var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&p, 1, 50) > 0 else { continue }
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n <= 0 { if n < 0 && errno == EAGAIN { continue }; break }
        buffer.append(contentsOf: chunk[0..<n])
        quietSince = monotonicNanoseconds()
    }
    var held = 0, dropped = 0
    let key = Array(#""dropped":"#.utf8)
    for line in buffer.split(separator: 0x0A) {
        if line.starts(with: Array(#"{"class":"attitude""#.utf8)) { held += 1 }
        if line.starts(with: Array(#"{"class":"gap""#.utf8)) {
            dropped +=
                Array(line).withUnsafeBufferPointer { ReaderShard.integer(after: key, in: $0) }.map(Int.init) ?? 0
        }
    }
    return (held, dropped)
}
