import FakeHardware
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
