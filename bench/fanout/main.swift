// Fan-out benchmark: the real release `tiltd run` reading an inv_mpu6050-like fake device through
// libiio, with N socket clients watching every attitude plus one client that never reads.
//
// For each rate (60, 200 Hz) and client count (100, 1000): scans are written into the device FIFO
// on a clock, each with a distinct kernel timestamp; the daemon echoes it as `t_ns`, and each
// client line's latency is (read time − that scan's write time), both CLOCK_MONOTONIC. Prints
// p50/p99/max latency, lines lost by reading clients (and gap events), daemon CPU and RSS, and
// what the stalled client cost.
//
// Must run under the fake-hardware harness, as root: `bench/fanout/run` does it all.
//
//   FanoutBench [--tiltd PATH] [--seconds S] [--rates 60,200] [--clients 100,1000] [--readers 2]

import FakeHardware
import Foundation

/// Writes a line to stdout unbuffered, so progress shows while a configuration runs.
func say(_ text: String, newline: Bool = true) {
    FileHandle.standardOutput.write(Data((newline ? text + "\n" : text).utf8))
}

var tiltd = ".build/release/tiltd"
var seconds = 30.0
var rates = [60, 200]
var clientCounts = [100, 1000]
var readers = 2
var it = CommandLine.arguments.dropFirst().makeIterator()
func list(_ s: String?) -> [Int] { (s ?? "").split(separator: ",").compactMap { Int($0) } }
while let a = it.next() {
    switch a {
    case "--tiltd": tiltd = it.next() ?? tiltd
    case "--seconds": seconds = it.next().flatMap(Double.init) ?? seconds
    case "--rates": rates = list(it.next())
    case "--clients": clientCounts = list(it.next())
    case "--readers": readers = max(1, it.next().flatMap(Int.init) ?? readers)
    default:
        say("usage: FanoutBench [--tiltd PATH] [--seconds S] [--rates 60,200] [--clients 100,1000] [--readers N]")
        exit(2)
    }
}
if let reason = FakeHarness.unavailableReason {
    say("FanoutBench needs the fake-hardware harness: \(reason)\n(run bench/fanout/run)")
    exit(1)
}
guard FileManager.default.isExecutableFile(atPath: tiltd) else {
    say("no tiltd binary at \(tiltd); build it with `swift build -c release --product tiltd`")
    exit(1)
}
// 1000 clients + the daemon's own descriptors: well past the usual 1024.
let fileLimit = raiseOpenFileLimit()
if fileLimit < UInt64((clientCounts.max() ?? 0) + 200) {
    say("open-file limit \(fileLimit) is too low for \(clientCounts.max() ?? 0) clients; raise `ulimit -n`")
    exit(1)
}
// A client the daemon drops must not kill the benchmark on its next write.
signal(SIGPIPE, SIG_IGN)

say("fanout benchmark: \(tiltd), \(Int(seconds)) s per configuration, \(readers) reader threads, "
    + "\(ProcessInfo.processInfo.activeProcessorCount) cores, open files \(fileLimit)")
var results: [FanoutResult] = []
for rate in rates {
    for n in clientCounts {
        let cfg = FanoutConfiguration(rateHz: rate, clients: n, seconds: seconds, readerThreads: readers)
        say("… \(rate) Hz, \(n) clients + 1 stalled", newline: false)
        do {
            let r = try runConfiguration(cfg, tiltd: tiltd)
            results.append(r)
            say(String(format: ": p99 %@ ms, lost %d, daemon CPU %.1f %%, load %.1f",
                         ms(r.latency.p99), r.linesLost, r.daemonCPU, r.loadAfter))
        } catch {
            say(": FAILED: \(error)")
        }
    }
}

func mib(_ kib: Int) -> String { String(format: "%.1f", Double(kib) / 1024) }
func pad(_ s: String, _ w: Int) -> String { s.count >= w ? s : String(repeating: " ", count: w - s.count) + s }
let header = ["Hz", "clients", "scans", "late", "p50 ms", "p99 ms", "max ms", "lost", "gaps", "daemon CPU%",
              "µs/line", "bench CPU%", "RSS idle/conn/10s/end MiB", "stalled held+dropped", "load"]
let rows: [[String]] = results.map { r in
    [String(r.configuration.rateHz), String(r.configuration.clients), String(r.scansWritten), String(r.lateScans),
     ms(r.latency.p50), ms(r.latency.p99), ms(r.latency.max),
     r.clientsLosing > 0 ? "\(r.linesLost) (\(r.clientsLosing) cl)" : "0", String(r.gapEvents),
     String(format: "%.1f", r.daemonCPU), String(format: "%.2f", r.daemonMicrosecondsPerLine),
     String(format: "%.1f", r.benchCPU),
     "\(mib(r.rssIdle))/\(mib(r.rssConnected))/\(mib(r.rssAt10s))/\(mib(r.rssEnd))",
     "\(r.stalledHeld)+\(r.stalledDropped)", String(format: "%.1f→%.1f", r.loadBefore, r.loadAfter)]
}
let widths = header.indices.map { i in max(header[i].count, rows.map { $0[i].count }.max() ?? 0) }
say("")
say(header.indices.map { pad(header[$0], widths[$0]) }.joined(separator: "  "))
for row in rows { say(row.indices.map { pad(row[$0], widths[$0]) }.joined(separator: "  ")) }
say("""

latency = line read by a client − scan written into the FIFO (CLOCK_MONOTONIC), over every attitude
line of every reading client. daemon CPU% = of one core, from the first scan until every line was
delivered; µs/line = that CPU time per line delivered. lost = scans written × clients − attitude
lines received. late = scans the feeder itself wrote > 1 period late (it was starved of CPU).
stalled held+dropped = attitude lines the never-reading client still got when read at the end
(kernel socket buffer + NIO + its bounded queue) + the count in its gap event; the two add up to
the scans written when nothing else was lost. load = 1-minute load average before → after.
""")


// Targets (issue 3, item 6).
var missed = 0
@MainActor func target(_ ok: Bool, _ text: String) {
    say("\(ok ? "MET   " : "MISSED") \(text)")
    if !ok { missed += 1 }
}
if let r = results.first(where: { $0.configuration.rateHz == 60 && $0.configuration.clients == 100 }) {
    target(r.latency.p99 <= 2_000_000, "p99 ≤ 2 ms with 100 clients at 60 Hz: p99 = \(ms(r.latency.p99)) ms")
}
if let r = results.first(where: { $0.configuration.rateHz == 200 && $0.configuration.clients == 1000 }) {
    target(r.linesLost == 0 && r.gapEvents == 0,
           "no line lost with 1000 clients at 200 Hz: lost \(r.linesLost) in \(r.clientsLosing) clients, \(r.gapEvents) gap events")
}
for r in results {
    let growth = r.rssEnd - r.rssAt10s
    let accounted = r.stalledHeld + r.stalledDropped == r.scansWritten
    target(growth <= 2048 && accounted,
           "\(r.configuration.rateHz) Hz, \(r.configuration.clients) clients: stalled client keeps memory bounded: "
           + "RSS 10 s → end \(growth >= 0 ? "+" : "")\(mib(growth)) MiB; it was left \(r.stalledHeld) lines, "
           + "\(r.stalledDropped) dropped (\(accounted ? "all \(r.scansWritten) accounted for" : "of \(r.scansWritten) written"))")
}
exit(missed == 0 && results.count == rates.count * clientCounts.count ? 0 : 1)
