// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import TiltCore
import XCTest

@testable import TiltSensors

/// `IIOSideBySideReads`: split devices read on two threads give the same readings as one by one.
/// (That it halves the time of slow one-shot reads is measured on the real driver by
/// scripts/kernel-test.) Needs `scripts/fakehw-ns`.
final class IIOSideBySideReadsTests: XCTestCase {
    func testSplitDevicesReadSideBySideMatchOneByOne() throws {
        try requireFakeHardware()
        let pair = FakeIIODevice.lsm6dsxPairWithoutInterrupt()
        let s = try FakeScenario(pair)
        defer { s.remove() }
        try s.setRaw(pair[0], pair[0].accel!, [120, -340, 16393])
        try s.setRaw(pair[1], pair[1].gyro!, [7, -8, 900])
        let ctx = try IIOContext(timeoutMs: 1000)
        let devices = try IIODeviceSetup.choose("auto", in: ctx).map {
            try IIODeviceSetup.configure($0, rateHz: 60, mountOverride: nil, logger: nil)
        }
        let readers = devices.map { IIOPolledReader(device: $0) }
        let together = try IIOSideBySideReads(readers).read(at: 42)
        let apart = try readers.map { try $0.read(at: 42) }
        XCTAssertEqual(together.count, 2)
        XCTAssertEqual(together.map(\.t), [42, 42])
        assertClose(try XCTUnwrap(together[0].accel), Vector3(120, -340, 16393) * 0.000598205, 1e-12)
        assertClose(try XCTUnwrap(together[1].gyro), Vector3(7, -8, 900) * 0.000152716, 1e-12)
        XCTAssertEqual(together.map(\.accel), apart.map(\.accel))
        XCTAssertEqual(together.map(\.gyro), apart.map(\.gyro))

        // A gone gyroscope comes through as its reading's error (the session goes on with tilt);
        // a gone accelerometer as the read's error.
        s.vanish(pair[1])
        let gyroGone = try IIOSideBySideReads(readers).read(at: 43)
        XCTAssertNil(gyroGone[1].gyro)
        XCTAssertNotNil(gyroGone[1].gyroError)
        s.vanish(pair[0])
        XCTAssertThrowsError(try IIOSideBySideReads(readers).read(at: 44), "a gone device's error comes through")
    }
}
