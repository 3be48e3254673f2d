// SPDX-License-Identifier: Apache-2.0
import FakeHardware
import TiltCore
import XCTest

@testable import TiltSensors

/// The pure parts of the IIO source: scan-type parsing and decoding, attribute text, joining split streams.
final class IIODecodingTests: XCTestCase {
    func testParsesScanTypes() {
        XCTAssertEqual(
            IIOElementFormat(sysfs: "le:s16/16>>0"),
            IIOElementFormat(bigEndian: false, signed: true, bits: 16, storageBytes: 2, shift: 0))
        XCTAssertEqual(
            IIOElementFormat(sysfs: "be:u12/16>>4"),
            IIOElementFormat(bigEndian: true, signed: false, bits: 12, storageBytes: 2, shift: 4))
        XCTAssertEqual(IIOElementFormat(sysfs: "le:S64/64>>0")?.signed, true)
        for bad in ["", "xe:s16/16>>0", "le:s16/16", "le:q16/16>>0", "le:s20/16>>0", "le:s16/24>>0", "le:s12/16>>8"] {
            XCTAssertNil(IIOElementFormat(sysfs: bad), bad)
        }
    }

    func testDecodesHandPackedBytes() {
        func decode(_ type: String, _ bytes: [UInt8]) -> Int64 {
            bytes.withUnsafeBytes { IIOElementFormat(sysfs: type)!.decode($0.baseAddress!) }
        }
        XCTAssertEqual(decode("le:s16/16>>0", [0x34, 0x12]), 0x1234)
        XCTAssertEqual(decode("be:s16/16>>0", [0x12, 0x34]), 0x1234)
        XCTAssertEqual(decode("be:s16/16>>0", [0xFF, 0xFE]), -2)
        XCTAssertEqual(decode("le:u16/16>>0", [0xFE, 0xFF]), 65534)
        // 12 significant bits above 4 junk bits: shift, mask, then sign-extend from bit 11.
        XCTAssertEqual(decode("le:s12/16>>4", [0xF7, 0xFF]), -1)
        XCTAssertEqual(decode("le:s12/16>>4", [0x0F, 0x80]), -2048)
        XCTAssertEqual(decode("le:u12/16>>4", [0x0F, 0x80]), 2048)
        XCTAssertEqual(decode("be:s20/32>>4", [0xFF, 0xFF, 0xFF, 0xE0]), -2)
        XCTAssertEqual(decode("be:s32/32>>0", [0x80, 0, 0, 0]), Int64(Int32.min))
        XCTAssertEqual(decode("le:s64/64>>0", [1, 0, 0, 0, 0, 0, 0, 0x80]), Int64.min + 1)
        XCTAssertEqual(decode("le:s8/8>>0", [0x80]), -128)
    }

    /// FakeHardware's encoder (the "kernel") and the source's decoder agree over each type's range.
    func testEncoderAndDecoderRoundTrip() {
        let types = [
            ScanType.le16, .be16, .timestamp,
            ScanType(bigEndian: true, signed: true, realBits: 20, storageBits: 32, shift: 4),
            ScanType(bigEndian: false, signed: false, realBits: 12, storageBits: 16, shift: 2),
            ScanType(bigEndian: true, signed: true, realBits: 24, storageBits: 32, shift: 8),
        ]
        for type in types {
            let format = IIOElementFormat(sysfs: type.sysfs)!
            let r = type.rawRange
            let probes: [Int64] = [r.lowerBound, r.upperBound, 0, 1, r.lowerBound / 3, r.upperBound / 7]
            for v in probes where r.contains(v) {
                let back = type.encode(v).withUnsafeBytes { format.decode($0.baseAddress!) }
                XCTAssertEqual(back, v, "\(type.sysfs) \(v)")
            }
        }
    }

    func testParsesMountMatrices() {
        XCTAssertEqual(IIOText.mountMatrix("1, 0, 0; 0, 1, 0; 0, 0, 1"), .identity)
        XCTAssertEqual(
            IIOText.mountMatrix("0, -1, 0; 1, 0, 0; 0, 0, 1\n"),
            Matrix3(Vector3(0, -1, 0), Vector3(1, 0, 0), Vector3(0, 0, 1)))
        XCTAssertEqual(IIOText.mountMatrix("0.7071, 0.7071, 0; -0.7071, 0.7071, 0; 0, 0, 1")?.r0.x, 0.7071)
        for bad in [
            "", "1, 0, 0; 0, 1, 0", "1, 0; 0, 1, 0; 0, 0, 1", "a, 0, 0; 0, 1, 0; 0, 0, 1", "1 0 0; 0 1 0; 0 0 1",
        ] {
            XCTAssertNil(IIOText.mountMatrix(bad), bad)
        }
    }

    func testChoosesNearestOfferedRate() {
        let odrs = "12.500 26.000 52.000 104.000 208.000 416.000"
        XCTAssertEqual(IIOText.nearestRate(to: 60, available: odrs)?.text, "52.000")
        XCTAssertEqual(IIOText.nearestRate(to: 80, available: odrs)?.text, "104.000")
        XCTAssertEqual(IIOText.nearestRate(to: 1000, available: odrs)?.value, 416)
        XCTAssertEqual(IIOText.nearestRate(to: 39, available: "26 52")?.text, "52", "tie: the higher rate")
        XCTAssertEqual(IIOText.nearestRate(to: 60, available: "10 60 100")?.text, "60")
        XCTAssertNil(IIOText.nearestRate(to: 60, available: "none"))
        XCTAssertEqual(IIOText.rateText(60), "60")
        XCTAssertEqual(IIOText.rateText(12.5), "12.500")
    }

    func testBufferSizeFollowsRate() {
        XCTAssertEqual(IIOSource.Settings(rateHz: 60).samplesPerBuffer, 1)
        XCTAssertEqual(IIOSource.Settings(rateHz: 10).samplesPerBuffer, 1)
        XCTAssertEqual(IIOSource.Settings(rateHz: 400).samplesPerBuffer, 4)
        XCTAssertEqual(IIOSource.Settings(rateHz: 1000).samplesPerBuffer, 10)
        XCTAssertEqual(IIOSource.Settings(rateHz: 1000, bufferSamples: 3).samplesPerBuffer, 3)
    }

    func testJoinsSplitStreamsByTimestamp() {
        var p = AccelGyroJoiner(rateHz: 100)  // 5 ms tolerance
        let a = Vector3(0, 0, 9.8), g = Vector3(0.1, 0, 0)
        XCTAssertEqual(p.addAccel(t: 1_000_000_000, a), [])
        XCTAssertEqual(p.addGyro(t: 1_001_000_000, g), [IMUSample(t: 1_000_000_000, accel: a, gyro: g)])
        // Gyro ahead by several samples: they wait for their partners.
        for i in 1...3 { XCTAssertEqual(p.addGyro(t: 1_000_000_000 + Int64(i) * 10_000_000, g), []) }
        XCTAssertEqual(p.addAccel(t: 1_010_000_000, a).map(\.t), [1_010_000_000])
        // The accel reading for 1.02 s was lost: that gyro reading is dropped, 1.03 s joins.
        XCTAssertEqual(p.addAccel(t: 1_030_000_000, a).map(\.t), [1_030_000_000])
        XCTAssertEqual(p.dropped, 1)
        // The gyro reading for 1.04 s was lost: that accel reading is dropped once 1.05 s arrives.
        XCTAssertEqual(p.addAccel(t: 1_040_000_000, a), [])
        XCTAssertEqual(p.addAccel(t: 1_050_000_000, a), [])
        XCTAssertEqual(p.addGyro(t: 1_050_400_000, g).map(\.t), [1_050_000_000])
        XCTAssertEqual(p.dropped, 2)
    }

    func testJoinerBoundsAStalledStream() {
        var p = AccelGyroJoiner(rateHz: 100, capacity: 8)
        for i in 0..<20 { _ = p.addAccel(t: Int64(i) * 10_000_000, .zero) }
        XCTAssertEqual(p.dropped, 12)
        XCTAssertEqual(p.addGyro(t: 190_000_000, .zero).map(\.t), [190_000_000])
    }
}

/// Which trigger is a device's own, and the rate a source reports.
final class IIOTriggerAndRateTests: XCTestCase {
    func testOwnTriggerByTheKernelsNameThenPrefixThenDevNSuffix() {
        let own = { (name: String, n: Int?, triggers: [String]) in
            IIOText.ownTrigger(deviceName: name, number: n, among: triggers)
        }
        XCTAssertEqual(own("bmi160", 1, ["bmi160-dev0", "bmi160-dev1"]), "bmi160-dev1")
        XCTAssertEqual(own("lis3dh", 0, ["lis3dh-trigger"]), "lis3dh-trigger", "st_sensors' naming")
        XCTAssertEqual(own("IIO Test Accelerometer", 0, ["accel_3d-dev0"]), "accel_3d-dev0", "iio-sensor-proxy's rule")
        XCTAssertNil(own("IIO Test Accelerometer", 1, ["accel_3d-dev0"]), "another device's trigger")
        XCTAssertNil(own("accel", 1, ["x-dev11", "accel-dev0"]), "-dev11 is not -dev1; accel-dev0 is device 0's")
        XCTAssertNil(own("bmi160", 0, ["sysfstrig0", "-dev0"]))
        XCTAssertNil(own("bmi160", nil, ["gyro-dev0"]))
    }

    func testDeliveredRateReportsNominalWithinToleranceAndMeasuredBeyond() {
        var rate = DeliveredRate(nominalHz: 100)
        var t: Int64 = 0
        var changes: [Double] = []
        func feed(hz: Double, seconds: Double) {
            for _ in 0..<Int(hz * seconds) {
                t += Int64(1e9 / hz)
                if let r = rate.add(at: t) { changes.append(r) }
            }
        }
        feed(hz: 98.5, seconds: 5)  // a chip 1.5 % slow: within tolerance
        XCTAssertEqual(rate.reportedHz, 100)
        XCTAssertEqual(changes, [])
        feed(hz: 20, seconds: 5)  // one-shot reads that cannot keep up
        XCTAssertEqual(rate.reportedHz, 20, accuracy: 0.2)
        XCTAssertTrue(rate.isShort)
        let reports = changes.count
        feed(hz: 20.3, seconds: 10)
        XCTAssertEqual(changes.count, reports, "a steady rate is reported once: \(changes)")
        feed(hz: 100, seconds: 5)
        XCTAssertEqual(rate.reportedHz, 100)
        XCTAssertFalse(rate.isShort)
    }

    func testDeliveredRateIsJudgedAfterTheFirstSecondNotCountingTheWakeUp() {
        var rate = DeliveredRate(nominalHz: 60)
        var t: Int64 = 0
        var changes: [Double] = []
        // The drivers' wake-up: 0.6 s with a handful of samples, then 60 Hz.
        for _ in 0..<5 {
            t += 120_000_000
            if let r = rate.add(at: t) { changes.append(r) }
        }
        for _ in 0..<(60 * 4) {
            t += 16_666_667
            if let r = rate.add(at: t) { changes.append(r) }
        }
        XCTAssertEqual(changes, [], "the wake-up is not counted as a short rate")
        XCTAssertEqual(rate.reportedHz, 60)
        XCTAssertNotNil(rate.measuredHz)
    }

    func testMagnetometerPaceReportsWhatSlowOneShotReadsDeliver() {
        // st_magn at 80 Hz: one read of x, y and z sleeps 3 × 2 output periods, 75 ms; polled at 60.
        var pace = MagnetometerPace(polledHz: 60)
        XCTAssertTrue(pace.isSlow(75_000_000))
        XCTAssertFalse(pace.isSlow(5_000_000))
        pace.start(readNs: 75_000_000)
        XCTAssertEqual(pace.reportedHz, 13.3, accuracy: 0.05, "expected before any window: 1 / 75 ms")
        XCTAssertTrue(
            pace.note("polled at 60 Hz (device set to 80 Hz)").contains(
                "reads deliver 13.300 Hz of the 60 Hz polled: one read of x, y and z takes 75 ms"))
        // Measured: back to back at 90 ms a read (11.1 a second) moves the report once.
        var t: Int64 = 0
        var changes = 0
        for _ in 0..<100 {
            t += 90_000_000
            if pace.add(readNs: 90_000_000, at: t) { changes += 1 }
        }
        XCTAssertEqual(pace.reportedHz, 11.1, accuracy: 0.05)
        XCTAssertEqual(changes, 1)
        XCTAssertEqual(Double(pace.readNs), 90e6, accuracy: 1e6)
        // Quick reads at the polled rate: the nominal rate, and no note.
        var quick = MagnetometerPace(polledHz: 50)
        quick.start(readNs: 1_000_000)
        for k in 1...200 { _ = quick.add(readNs: 1_000_000, at: Int64(k) * 20_000_000) }
        XCTAssertEqual(quick.reportedHz, 50)
        XCTAssertEqual(quick.note("polled at 50 Hz"), "polled at 50 Hz")
    }
}
