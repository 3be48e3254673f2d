// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization
import TestSupport
import TiltCore
import TiltSensors
import XCTest

// What a FixSource emits, collected for the GPSDSource and replay tests. The gpsd rig itself
// (stand-in receiver, gpsd, NMEA writer) lives in TestSupport/GPSDRig.swift, shared with the
// daemon-level tests in IntegrationTests.

/// Collects what a FixSource emits while it runs on its own thread.
final class FixCollector: Sendable {
    private let outputs = Mutex<[(at: ContinuousClock.Instant, output: FixOutput)]>([])
    let stop = StopSignal()
    private let finished = Mutex(false)
    private let thrown = Mutex<(any Error)?>(nil)

    /// Starts `source.run` on a new thread.
    init(running source: some FixSource) {
        let thread = Thread { [self] in
            do {
                try source.run(stop: stop) { output in
                    self.outputs.withLock { $0.append((ContinuousClock.now, output)) }
                }
            } catch {
                self.thrown.withLock { $0 = error }
            }
            self.finished.withLock { $0 = true }
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    var hasReturned: Bool { finished.withLock { $0 } }
    var error: (any Error)? { thrown.withLock { $0 } }
    var timeline: [(at: ContinuousClock.Instant, output: FixOutput)] { outputs.withLock { $0 } }
    var all: [FixOutput] { timeline.map(\.output) }

    var fixes: [Fix] {
        all.compactMap { if case .fix(let f) = $0 { f } else { nil } }
    }

    var statuses: [SourceStatus] {
        all.compactMap { if case .status(let s) = $0 { s } else { nil } }
    }

    /// Index in `all` of the first output after `index` matching `predicate`.
    func firstIndex(after index: Int = -1, where predicate: (FixOutput) -> Bool) -> Int? {
        let list = all
        guard index + 1 < list.count else { return nil }
        return list[(index + 1)...].firstIndex(where: predicate)
    }

    /// Stops the source and waits (bounded) for `run` to return.
    @discardableResult
    func stopAndWait(timeout: Double = 5) -> Bool {
        stop.stop()
        return waitFor(timeout) { hasReturned }
    }
}

extension FixOutput {
    var fix: Fix? { if case .fix(let f) = self { f } else { nil } }
    var status: SourceStatus? { if case .status(let s) = self { s } else { nil } }
}
