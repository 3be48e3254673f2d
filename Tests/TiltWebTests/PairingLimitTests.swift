// SPDX-License-Identifier: Apache-2.0
import TiltWeb
import XCTest

/// Pairing guesses are limited overall, not only per address (issue 37): with IPv6 each guess
/// can come from a new address. And the map of failing addresses stays bounded.
final class PairingLimitTests: XCTestCase {
    func testWrongCodesFromManyAddressesLockEveryoneOutForTheWindow() {
        let p = Pairing(fixedCode: "246-810")
        for i in 0..<Pairing.maxFailuresOverall {
            guard case .failure(.wrongCode) = p.pair("000-000", from: "fd00::\(i)", now: Double(i) * 0.1) else {
                return XCTFail("guess \(i) from a fresh address")
            }
        }
        // A fresh address, even with the right code, waits for the window.
        guard case .failure(.lockedOut(let wait)) = p.pair("246-810", from: "fd00::ffff", now: 5) else {
            return XCTFail("the next guess from a fresh address was not locked out")
        }
        XCTAssertGreaterThan(wait, 0)
        XCTAssertLessThanOrEqual(wait, Int(Pairing.lockout))
        // Once the window has passed, the right code pairs.
        guard case .success = p.pair("246-810", from: "fd00::ffff", now: Pairing.lockout + 5) else {
            return XCTFail("the right code after the window")
        }
    }

    func testTheFailureMapIsBounded() {
        let p = Pairing(fixedCode: "246-810")
        // 30 wrong codes a minute for a day, each from a new address.
        var now = 0.0
        for i in 0..<(24 * 60 * Pairing.maxFailuresOverall) {
            _ = p.pair("000-000", from: "fd00::\(i)", now: now)
            now += Pairing.lockout / Double(Pairing.maxFailuresOverall) + 0.001
        }
        XCTAssertLessThanOrEqual(p.trackedAddresses, Pairing.maxTrackedAddresses)
    }
}
