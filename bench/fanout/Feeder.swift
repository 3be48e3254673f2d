// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import Synchronization
import TiltCore

/// When each scan went into the FIFO, found from the scan's timestamp.
///
/// Scan i carries the kernel timestamp `t0 + i · period` (distinct and evenly spaced, as a
/// driver's would be); the daemon echoes it as `t_ns`, so a client maps a line back to its scan
/// by arithmetic. Write times are stored before the scan is written and read only after a line
/// derived from it came back through the FIFO, the daemon and a socket: those system calls order
/// the two accesses, so plain memory suffices.
final class ScanTimeline: @unchecked Sendable {
    let t0: Int64
    let period: Int64
    let capacity: Int
    private let writeTimes: UnsafeMutablePointer<Int64>

    init(t0: Int64, period: Int64, capacity: Int) {
        self.t0 = t0; self.period = period; self.capacity = capacity
        writeTimes = .allocate(capacity: capacity)
        writeTimes.initialize(repeating: 0, count: capacity)
    }

    deinit { writeTimes.deallocate() }

    /// The timestamp of scan `i`.
    func timestamp(_ i: Int) -> Int64 { t0 + Int64(i) * period }

    /// The scan index a `t_ns` belongs to, or nil when it is not one of ours.
    func index(of t: Int64) -> Int? {
        let d = t - t0
        guard d >= 0, d % period == 0, d / period < Int64(capacity) else { return nil }
        return Int(d / period)
    }

    func setWriteTime(_ i: Int, _ ns: Int64) { writeTimes[i] = ns }
    func writeTime(_ i: Int) -> Int64 { writeTimes[i] }
}

/// Feeds scans at a fixed rate, on its own thread, paced by CLOCK_MONOTONIC with absolute
/// deadlines (no drift), recording each write time.
final class Feeder: @unchecked Sendable {
    let timeline: ScanTimeline
    let count: Int
    /// Scans written so far.
    let written = Atomic<Int>(0)
    /// Scans that went out more than one period late (the writer itself was starved of CPU).
    let late = Atomic<Int>(0)
    private let finished = Atomic<Bool>(false)
    private let failure = Mutex<String?>(nil)
    private let feed: (Int) throws -> Void

    /// - Parameter feed: writes scan i to the server under test.
    init(timeline: ScanTimeline, count: Int, feed: @escaping (Int) throws -> Void) {
        self.timeline = timeline; self.count = count; self.feed = feed
    }

    /// Starts writing; scan i is due at `start + i · period`.
    func start(at start: Int64) {
        let thread = Thread { [self] in
            for i in 0..<count {
                let due = start + Int64(i) * timeline.period
                sleepUntil(due)
                let now = monotonicNanoseconds()
                if now - due > timeline.period { late.add(1, ordering: .relaxed) }
                timeline.setWriteTime(i, now)
                do {
                    try feed(i)
                } catch {
                    failure.withLock { $0 = "\(error)" }
                    break
                }
                written.store(i + 1, ordering: .releasing)
            }
            finished.store(true, ordering: .releasing)
        }
        thread.name = "fanout-feeder"
        // The feeder stands in for the kernel: keep it from being the thing that is late.
        thread.qualityOfService = .userInteractive
        thread.start()
    }

    var isFinished: Bool { finished.load(ordering: .acquiring) }
    var error: String? { failure.withLock { $0 } }
}
