// SPDX-License-Identifier: Apache-2.0
import TiltSensors
import XCTest

/// The flag the daemon uses to refuse gyro-only game vocabularies on an accelerometer-only IMU.
final class SourceStatusTests: XCTestCase {
    func testVocabularyRefusalNeedsAKnownMissingGyroscope() {
        let accelOnly = SourceStatus(
            source: "imu", state: .streaming, message: "", device: "adxl345 (iio:device0)",
            hasGyroscope: false)
        let reason = accelOnly.refusal(forVocabulary: "nod")
        XCTAssertEqual(
            reason,
            "the \"nod\" vocabulary needs a gyroscope and adxl345 (iio:device0) has none "
                + "(no gyroscope: tilt from the accelerometer only); use \"tilt\"")
        XCTAssertNil(accelOnly.refusal(forVocabulary: "tilt"), "tilt needs only gravity")
        let sixAxis = SourceStatus(source: "imu", state: .streaming, message: "", hasGyroscope: true)
        XCTAssertNil(sixAxis.refusal(forVocabulary: "nod"))
        let unknown = SourceStatus(source: "imu", state: .starting, message: "")
        XCTAssertNil(unknown.refusal(forVocabulary: "nod"), "not known yet: not refused")
    }

    func testNoDataStateIsNamedForTheWire() {
        XCTAssertEqual(SourceStatus.State.noData.rawValue, "no_data")
    }
}
