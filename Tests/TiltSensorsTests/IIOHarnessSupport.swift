// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import Synchronization
import TiltCore
import TiltSensors
import XCTest

/// Skips (locally) or fails (CI=true) a test that needs the fake-hardware harness when it is absent.
func requireFakeHardware(file: StaticString = #filePath, line: UInt = #line) throws {
    guard let reason = FakeHarness.unavailableReason else { return }
    if FakeHarness.isCI {
        XCTFail("fake-hardware harness required in CI: \(reason)", file: file, line: line)
        throw XCTSkip("failed above")
    }
    throw XCTSkip(reason)
}

/// Runs a sample source on its own thread and records everything it emits.
final class SourceRun: Sendable {
    let stop = StopSignal()
    private let outputs = Mutex<[SourceOutput]>([])
    private let finished = Mutex(false)

    init(_ source: any SampleSource) {
        let stop = self.stop
        Thread.detachNewThread { [self] in
            try? source.run(stop: stop) { output in self.outputs.withLock { $0.append(output) } }
            self.finished.withLock { $0 = true }
        }
    }

    var samples: [IMUSample] {
        outputs.withLock { $0.compactMap { if case .sample(let s) = $0 { s } else { nil } } }
    }

    var fields: [MagSample] {
        outputs.withLock { $0.compactMap { if case .magnetometer(let m) = $0 { m } else { nil } } }
    }

    var statuses: [SourceStatus] {
        outputs.withLock { $0.compactMap { if case .status(let s) = $0 { s } else { nil } } }
    }

    var isFinished: Bool { finished.withLock { $0 } }

    /// Polls `condition` every 5 ms until it holds; false when `timeout` passes first.
    @discardableResult
    func wait(timeout: Double = 5, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return false }
            usleep(5000)
        }
        return true
    }

    /// Waits for the n-th (1-based) status in `state`.
    func waitForStatus(_ state: SourceStatus.State, count: Int = 1, timeout: Double = 5) -> SourceStatus? {
        var found: SourceStatus?
        wait(timeout: timeout) {
            let matching = statuses.filter { $0.state == state }
            found = matching.count >= count ? matching[count - 1] : nil
            return found != nil
        }
        return found
    }

    /// Waits for the first status in `state` that `matches`.
    func waitForStatus(
        _ state: SourceStatus.State, timeout: Double = 5, where matches: (SourceStatus) -> Bool
    ) -> SourceStatus? {
        var found: SourceStatus?
        wait(timeout: timeout) {
            found = statuses.first { $0.state == state && matches($0) }
            return found != nil
        }
        return found
    }

    /// Stops the source and waits for `run` to return.
    func finish(file: StaticString = #filePath, line: UInt = #line) {
        stop.stop()
        XCTAssertTrue(wait(timeout: 3) { isFinished }, "source did not stop within 3 s", file: file, line: line)
    }
}

/// Asserts two vectors agree within `tolerance` on every axis.
func assertClose(
    _ a: Vector3, _ b: Vector3, _ tolerance: Double, _ message: String = "",
    file: StaticString = #filePath, line: UInt = #line
) {
    for i in 0..<3 {
        XCTAssertEqual(a[i], b[i], accuracy: tolerance, "\(message) axis \(i): \(a) vs \(b)", file: file, line: line)
    }
}
