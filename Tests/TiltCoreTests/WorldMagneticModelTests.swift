// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import XCTest

/// WorldMagneticModel against NOAA's published WMM2025 test values (the WMM2025 release's test
/// values table: date, height above the WGS 84 ellipsoid, geodetic latitude and longitude →
/// X, Y, Z in nT and declination in degrees, printed to 0.1 nT and 0.01°).
final class WorldMagneticModelTests: XCTestCase {
    /// (decimal year, height km, latitude, longitude, X, Y, Z, declination).
    static let published: [(Double, Double, Double, Double, Double, Double, Double, Double)] = [
        (2025.0, 0, 80, 0, 6521.6, 145.9, 54791.5, 1.28),
        (2025.0, 0, 0, 120, 39677.8, -109.6, -10580.2, -0.16),
        (2025.0, 0, -80, 240, 6117.5, 15751.9, -52022.5, 68.78),
        (2025.0, 100, 80, 0, 6216.0, 92.4, 52598.8, 0.85),
        (2025.0, 100, 0, 120, 37688.6, -96.2, -10152.1, -0.15),
        (2025.0, 100, -80, 240, 5907.6, 14780.3, -49540.7, 68.21),
        (2027.5, 0, 80, 0, 6500.8, 294.5, 54869.4, 2.59),
        (2027.5, 0, 0, 120, 39701.6, -167.4, -10381.8, -0.24),
        (2027.5, 0, -80, 240, 6200.7, 15730.3, -51783.7, 68.49),
        (2027.5, 100, 80, 0, 6196.7, 233.8, 52670.5, 2.16),
        (2027.5, 100, 0, 120, 37711.5, -148.7, -9969.8, -0.23),
        (2027.5, 100, -80, 240, 5984.0, 14760.1, -49317.7, 67.93),
    ]

    func testPublishedTestValues() {
        let model = WorldMagneticModel.wmm2025
        XCTAssertEqual(model.name, "WMM-2025")
        XCTAssertEqual(model.epoch, 2025.0)
        XCTAssertEqual(model.maxDegree, 12)
        for (year, height, lat, lon, x, y, z, d) in Self.published {
            let f = model.field(latitude: lat, longitude: lon, height: height, decimalYear: year)
            let label = "\(year) \(height) km \(lat),\(lon)"
            XCTAssertEqual(f.north, x, accuracy: 0.1, label)
            XCTAssertEqual(f.east, y, accuracy: 0.1, label)
            XCTAssertEqual(f.down, z, accuracy: 0.1, label)
            XCTAssertEqual(f.declination, d, accuracy: 0.0051, label)
            XCTAssertEqual(
                model.declination(latitude: lat, longitude: lon, height: height, decimalYear: year), d,
                accuracy: 0.0051, label)
        }
    }

    func testDecimalYear() {
        XCTAssertEqual(WorldMagneticModel.decimalYear(unixNanoseconds: 0), 1970, accuracy: 1e-12)
        // 2025-01-01T00:00:00Z and 2027-07-02T12:00:00Z (2027 is no leap year: day 182.5 of 365).
        XCTAssertEqual(
            WorldMagneticModel.decimalYear(unixNanoseconds: 1_735_689_600 * 1_000_000_000), 2025, accuracy: 1e-12)
        XCTAssertEqual(
            WorldMagneticModel.decimalYear(unixNanoseconds: 1_814_529_600 * 1_000_000_000), 2027 + 182.5 / 365,
            accuracy: 1e-9)
        // 2028 is a leap year: 2028-12-31T00:00:00Z is day 365 of 366.
        XCTAssertEqual(
            WorldMagneticModel.decimalYear(unixNanoseconds: 1_861_833_600 * 1_000_000_000), 2028 + 365.0 / 366,
            accuracy: 1e-9)
        XCTAssertEqual(
            WorldMagneticModel.decimalYear(unixNanoseconds: -86_400_000_000_000 / 2), 1969 + 364.5 / 365, accuracy: 1e-9
        )
        XCTAssertTrue(WorldMagneticModel.wmm2025.validYears.contains(2029.99))
        XCTAssertFalse(WorldMagneticModel.wmm2025.validYears.contains(2030.01))
    }

    func testBadCoefficientFilesAreRefused() {
        XCTAssertThrowsError(try WorldMagneticModel(cof: ""))
        XCTAssertThrowsError(try WorldMagneticModel(cof: "2025.0 X 1/1/2025\n 1 0 abc 0 0 0\n"))
        XCTAssertThrowsError(try WorldMagneticModel(cof: "2025.0 X 1/1/2025\n999999\n"))
    }
}
