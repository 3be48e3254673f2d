// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import Foundation
import TestSupport
import XCTest

/// The fixture of the tests that start the real daemon on fake IIO hardware (`scripts/fakehw-ns`):
/// a temporary directory, the daemon and the scenario, all removed after each test. Without the
/// harness a test is skipped with the reason, and fails under `CI=true`.
class FakeHardwareDaemonTestCase: XCTestCase {
    /// The test's temporary directory (config, socket, store).
    var dir = ""
    /// The daemon the test started; stopped in `tearDown`.
    var daemon: DaemonProcess?
    /// The fake IIO devices the test made; removed in `tearDown`.
    var scenario: FakeScenario?

    /// The temporary directory's tag (it names the test class in /tmp).
    var tempTag: String { "fakehw" }
    /// Whether `tearDown` asserts that the daemon exits 0 when stopped.
    var checksExitStatus: Bool { true }

    override func setUpWithError() throws {
        guard let reason = FakeHarness.unavailableReason else {
            dir = makeTempDir(tempTag)
            return
        }
        if FakeHarness.isCI { XCTFail("fake-hardware harness required in CI: \(reason)") }
        throw XCTSkip(reason)
    }

    override func tearDown() {
        if let daemon {
            let status = daemon.stop()
            if checksExitStatus { XCTAssertEqual(status, 0, "tiltd exit status; log:\n\(daemon.log)") }
            if (testRun?.hasSucceeded ?? true) == false { print("tiltd log:\n\(daemon.log)") }
        }
        daemon = nil
        scenario?.remove()
        scenario = nil
        if !dir.isEmpty { try? FileManager.default.removeItem(atPath: dir) }
        super.tearDown()
    }
}
