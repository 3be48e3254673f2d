// SPDX-License-Identifier: Apache-2.0
import Foundation

/// What `tiltd run` holds after streaming with no client (bench/footprint/run).
struct IdleFootprint {
    var seconds: Double
    var rateHz: Int
    /// VmRSS and VmHWM (peak) of the daemon at the end, KiB.
    var rssKiB = 0, peakKiB = 0
    /// Of VmRSS: private memory (heap, stacks: RssAnon) and mapped file pages (the binary's code
    /// and data read so far, shared with the page cache and reclaimable: RssFile), KiB.
    var anonKiB = 0, fileKiB = 0
    /// Daemon CPU over the run, % of one core.
    var cpu = 0.0
}

/// Starts tiltd on the fake mpu6050 at `rateHz`, feeds it scans for `seconds` with no client
/// connected (or `watchers` clients reading every attitude line, as bench/footprint/text-order
/// asks for), and reads its memory at the end, as a Pi running it unattended would hold.
func runIdle(tiltd: String, rateHz: Int, seconds: Double, watchers: Int = 0) throws -> IdleFootprint {
    var result = IdleFootprint(seconds: seconds, rateHz: rateHz)
    let dir = NSTemporaryDirectory() + "footprint-\(getpid())"
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let cfg = FanoutConfiguration(rateHz: rateHz, clients: 0, seconds: seconds, readerThreads: 1)
    let count = Int(seconds * Double(rateHz))
    let timeline = ScanTimeline(t0: 1_000_000_000_000, period: Int64(1_000_000_000 / rateHz), capacity: count)
    let started = try startTiltd(
        tiltd, cfg: cfg, dir: dir, socketPath: "\(dir)/tiltd.sock", timeline: timeline, count: count)
    let pid = started.process.processIdentifier
    defer {
        started.close()
        kill(pid, SIGTERM)
        started.process.waitUntilExit()
    }
    // Watching clients read and discard every line until the daemon goes.
    for _ in 0..<watchers {
        let fd = try connectUnix("\(dir)/tiltd.sock")
        try sendAll(fd, #"{"cmd":"watch","id":1,"attitude_hz":1000}"# + "\n")
        Thread.detachNewThread {
            var buffer = [UInt8](repeating: 0, count: 65536)
            while buffer.withUnsafeMutableBytes({ read(fd, $0.baseAddress, $0.count) }) > 0 {}
            close(fd)
        }
    }
    let feeder = Feeder(timeline: timeline, count: count, feed: started.feed)
    let cpu0 = ProcStats.cpuSeconds(pid) ?? 0
    let start = monotonicNanoseconds() + 50_000_000
    feeder.start(at: start)
    while !feeder.isFinished { usleep(100_000) }
    if let e = feeder.error { throw BenchError("feeding scans: \(e)") }
    result.cpu = ((ProcStats.cpuSeconds(pid) ?? 0) - cpu0) / (Double(monotonicNanoseconds() - start) / 1e9) * 100
    result.rssKiB = ProcStats.rssKiB(pid) ?? 0
    result.peakKiB = ProcStats.statusKiB(pid, "VmHWM:") ?? 0
    result.anonKiB = ProcStats.statusKiB(pid, "RssAnon:") ?? 0
    result.fileKiB = ProcStats.statusKiB(pid, "RssFile:") ?? 0
    return result
}
