// SPDX-License-Identifier: Apache-2.0
import CEpoll
import Foundation
import Synchronization

/// What one reading client saw over a run.
struct ClientTally {
    /// `attitude` lines of this run's scans.
    var attitudeLines = 0
    /// Index of the last scan seen, to find holes in the sequence.
    var lastIndex = -1
    /// Scans skipped between two lines received (lines the daemon dropped for this client).
    var holes = 0
    /// `attitude` lines that arrived out of order or twice (should never happen).
    var disorder = 0
    var gapEvents = 0
    /// Sum of the `dropped` counts of the gap events.
    var droppedReported = 0
    var replied = false
    var closed = false
}

/// The reading clients handled by one thread: their sockets, read by one thread. Each line is
/// stamped with CLOCK_MONOTONIC right after the read(2) that returned it, and an `attitude` line's
/// latency is that minus the write time of the scan its `t_ns` names.
final class ReaderShard: @unchecked Sendable {
    let fds: [Int32]
    let timeline: ScanTimeline
    /// Per client; touched only by the shard's thread until `join` returns.
    private(set) var tallies: [ClientTally]
    private var pending: [[UInt8]]
    /// Latencies (ns) of every `attitude` line, in arrival order.
    private(set) var latencies: [Int64] = []
    /// Per scan: the latency of its first and of its last line to this shard's clients (ns;
    /// `Int64.max` / `Int64.min` when none arrived). Separates the time to the first client (the
    /// server's pipeline) from the spread over all of them (its fan-out).
    private(set) var firstLatency: [Int64]
    private(set) var lastLatency: [Int64]
    /// Running totals the main thread watches while the shard runs.
    let attitudeLines = Atomic<Int>(0)
    let replies = Atomic<Int>(0)
    private let stopFlag = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    /// epoll over the shard's sockets: its cost follows the sockets that are ready, where
    /// poll(2) would scan all of them for every line that arrives.
    private let epfd: Int32
    private let scratchSize = 1 << 18

    init(fds: [Int32], timeline: ScanTimeline, expectedLines: Int) throws {
        self.fds = fds; self.timeline = timeline
        tallies = Array(repeating: ClientTally(), count: fds.count)
        pending = Array(repeating: [], count: fds.count)
        latencies.reserveCapacity(expectedLines)
        firstLatency = Array(repeating: .max, count: timeline.capacity)
        lastLatency = Array(repeating: .min, count: timeline.capacity)
        epfd = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epfd >= 0 else { throw BenchError("epoll_create1: \(String(cString: strerror(errno)))") }
        for (i, fd) in fds.enumerated() {
            setNonBlocking(fd)
            var ev = epoll_event()
            ev.events = EPOLLIN.rawValue | EPOLLRDHUP.rawValue
            ev.data.u64 = UInt64(i)
            guard epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == 0 else {
                throw BenchError("epoll_ctl: \(String(cString: strerror(errno)))")
            }
        }
    }

    deinit { close(epfd) }

    func start(name: String) {
        let thread = Thread { [self] in
            run()
            done.signal()
        }
        thread.name = name
        thread.start()
    }

    /// Stops the thread and waits for it; afterwards `tallies` and `latencies` are stable.
    func join() {
        stopFlag.store(true, ordering: .releasing)
        done.wait()
    }

    private func run() {
        let scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: scratchSize)
        defer { scratch.deallocate() }
        var events = [epoll_event](repeating: epoll_event(), count: 1024)
        while !stopFlag.load(ordering: .acquiring) {
            let n = events.withUnsafeMutableBufferPointer { epoll_wait(epfd, $0.baseAddress, Int32($0.count), 50) }
            if n < 0 { if errno == EINTR { continue }; break }
            for e in 0..<Int(n) {
                let c = Int(events[e].data.u64)
                let got = read(fds[c], scratch, scratchSize)
                let readAt = monotonicNanoseconds()
                if got > 0 {
                    consume(UnsafeBufferPointer(start: scratch, count: got), client: c, readAt: readAt)
                } else if got == 0 || (errno != EAGAIN && errno != EINTR) {
                    tallies[c].closed = true
                    _ = epoll_ctl(epfd, EPOLL_CTL_DEL, fds[c], nil)
                }
            }
        }
    }

    /// Splits bytes into lines, joining a line split across reads.
    private func consume(_ bytes: UnsafeBufferPointer<UInt8>, client c: Int, readAt: Int64) {
        var start = 0
        if !pending[c].isEmpty {
            guard let nl = bytes.firstIndex(of: 0x0A) else {
                pending[c].append(contentsOf: bytes)
                return
            }
            pending[c].append(contentsOf: bytes[0...nl])
            let line = pending[c]
            line.withUnsafeBufferPointer { handle(line: $0, client: c, readAt: readAt) }
            pending[c].removeAll(keepingCapacity: true)
            start = nl + 1
        }
        var i = start
        while i < bytes.count {
            if bytes[i] == 0x0A {
                handle(line: UnsafeBufferPointer(rebasing: bytes[start...i]), client: c, readAt: readAt)
                start = i + 1
            }
            i += 1
        }
        if start < bytes.count { pending[c].append(contentsOf: bytes[start...]) }
    }

    private static let classPrefix = Array(#"{"class":""#.utf8)
    private static let tKey = Array(#""t_ns":"#.utf8)
    private static let droppedKey = Array(#""dropped":"#.utf8)

    /// Classifies a line by its leading `"class"` field (the daemon writes it first).
    private func handle(line: UnsafeBufferPointer<UInt8>, client c: Int, readAt: Int64) {
        let p = Self.classPrefix.count
        guard line.count > p + 4, line.starts(with: Self.classPrefix) else { return }
        func isClass(_ name: StaticString) -> Bool {
            let n = name.utf8CodeUnitCount
            guard line.count > p + n, line[p + n] == 0x22 else { return false }
            return name.withUTF8Buffer { UnsafeBufferPointer(rebasing: line[p..<(p + n)]).elementsEqual($0) }
        }
        if isClass("attitude") {
            guard let t = Self.integer(after: Self.tKey, in: line), let i = timeline.index(of: t) else { return }
            let latency = readAt - timeline.writeTime(i)
            latencies.append(latency)
            firstLatency[i] = min(firstLatency[i], latency)
            lastLatency[i] = max(lastLatency[i], latency)
            var tally = tallies[c]
            tally.attitudeLines += 1
            if i > tally.lastIndex {
                tally.holes += i - tally.lastIndex - 1
                tally.lastIndex = i
            } else {
                tally.disorder += 1
            }
            tallies[c] = tally
            attitudeLines.add(1, ordering: .relaxed)
        } else if isClass("gap") {
            tallies[c].gapEvents += 1
            tallies[c].droppedReported += Self.integer(after: Self.droppedKey, in: line).map(Int.init) ?? 0
        } else if isClass("reply") {
            if !tallies[c].replied {
                tallies[c].replied = true
                replies.add(1, ordering: .relaxed)
            }
        }
    }

    /// The non-negative integer right after `key` in `line`, if present.
    static func integer(after key: [UInt8], in line: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard line.count > key.count else { return nil }
        var i = 0
        search: while i + key.count < line.count {
            for k in 0..<key.count where line[i + k] != key[k] {
                i += 1
                continue search
            }
            var j = i + key.count
            var value: Int64 = 0
            var digits = 0
            while j < line.count, line[j] >= 0x30, line[j] <= 0x39 {
                value = value * 10 + Int64(line[j] - 0x30)
                j += 1; digits += 1
            }
            return digits > 0 ? value : nil
        }
        return nil
    }
}
