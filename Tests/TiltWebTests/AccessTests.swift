// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol
import TiltWeb
import XCTest

/// Pairing, origins, rate limits and the browser command filter, without a server.
final class AccessTests: XCTestCase {
    func testTheRightCodePairsAndWrongCodesLockTheAddressOut() {
        let p = Pairing(fixedCode: "246-810")
        XCTAssertFalse(p.isPaired(token: nil))
        XCTAssertFalse(p.isPaired(token: "made-up"))
        // Dashes, spaces and case do not matter.
        guard case .success(let token) = p.pair("246 810", from: "10.0.0.2", now: 0) else {
            return XCTFail("the right code must pair")
        }
        XCTAssertTrue(p.isPaired(token: token))
        XCTAssertEqual(token.count, 64)

        for i in 1..<Pairing.maxFailures {
            XCTAssertEqual(
                p.pair("111-111", from: "10.0.0.9", now: Double(i)),
                .failure(.wrongCode(attemptsLeft: Pairing.maxFailures - i)))
        }
        XCTAssertEqual(
            p.pair("111-111", from: "10.0.0.9", now: 5), .failure(.lockedOut(retryAfter: Int(Pairing.lockout))))
        // Locked out: even the right code is refused until the lockout ends…
        guard case .failure(.lockedOut) = p.pair("246-810", from: "10.0.0.9", now: 10) else {
            return XCTFail("must stay locked out")
        }
        // …other addresses are not affected…
        guard case .success = p.pair("246-810", from: "10.0.0.3", now: 10) else {
            return XCTFail("another address must pair")
        }
        // …and afterwards it pairs again.
        guard case .success = p.pair("246-810", from: "10.0.0.9", now: 1 + Pairing.lockout + 1) else {
            return XCTFail("must pair after the lockout")
        }

        p.forget(token: token)
        XCTAssertFalse(p.isPaired(token: token))
    }

    func testARandomCodeIsSixDigits() {
        let codes = (0..<50).map { _ in Pairing(fixedCode: nil).code }
        for c in codes { XCTAssertNotNil(c.wholeMatch(of: /[0-9]{3}-[0-9]{3}/), c) }
        XCTAssertGreaterThan(Set(codes).count, 40, "codes must differ between starts")
    }

    func testOriginsMustBeThePagesOwnOrListed() {
        let policy = OriginPolicy(allowed: ["http://tiltd.local:8080"])
        XCTAssertTrue(policy.accepts(origin: "http://192.168.1.20:8080", host: "192.168.1.20:8080"))
        XCTAssertTrue(policy.accepts(origin: "http://tiltd.local:8080", host: "192.168.1.20:8080"))
        XCTAssertTrue(policy.accepts(origin: nil, host: "127.0.0.1:8080"), "no Origin: not a browser page")
        XCTAssertFalse(policy.accepts(origin: "http://evil.example", host: "192.168.1.20:8080"))
        XCTAssertFalse(policy.accepts(origin: "http://192.168.1.20:9999", host: "192.168.1.20:8080"))
        XCTAssertFalse(policy.accepts(origin: "null", host: "192.168.1.20:8080"))
        XCTAssertFalse(policy.accepts(origin: "http://192.168.1.20:8080", host: nil))
        XCTAssertTrue(policy.accepts(origin: "ws://127.0.0.1", host: "192.168.1.20:8080"), "not a browser page")
    }

    func testOnlyTheServersOwnHostsAreServed() {
        // DNS rebinding: another site's name re-pointed at the Pi makes its page same-origin
        // (Origin and Host both that name), so the Host itself must be one this server goes by.
        let policy = OriginPolicy(allowed: ["http://tiltd.example:8080"])
        for host in [
            "192.168.1.20:8080", "127.0.0.1", "[::1]:8080", "[fe80::1%25eth0]:8080", "localhost:8080", "pi:8080",
            "PI.local:8080", "tiltd.example:8080", nil, "",
        ] as [String?] {
            XCTAssertTrue(policy.acceptsHost(host, machineName: "pi"), host ?? "nil")
        }
        for host in [
            "evil.example:8080", "evil.example", "pi.evil.example", "192.168.1.20.evil.example", "localhost.evil",
        ] {
            XCTAssertFalse(policy.acceptsHost(host, machineName: "pi"), host)
        }
    }

    func testTheTokenBucketAllowsABurstThenTheRate() {
        var b = TokenBucket(rate: 10, burst: 20)
        XCTAssertEqual((0..<25).filter { _ in b.take(now: 0) }.count, 20)
        XCTAssertFalse(b.take(now: 0.05))
        XCTAssertTrue(b.take(now: 0.2), "two tokens back after 0.2 s at 10/s")
        XCTAssertTrue(b.take(now: 0.2))
        XCTAssertFalse(b.take(now: 0.2))
    }

    func testBrowserCommandsAreTheCataloguesGameCommandsAndPairingGuardsTheMutatingOnes() {
        func refusal(_ json: String, paired: Bool) -> String? {
            if case .failure(let f) = BrowserCommands.check(json, paired: paired) { return f.refusal.code }
            return nil
        }
        XCTAssertEqual(refusal(#"{"cmd":"game.start","id":1}"#, paired: false), "not_paired")
        guard
            case .success(let ok) = BrowserCommands.check(
                #"{"cmd":"game.start","id":1,"deck":"nearby","round_s":30}"#, paired: true)
        else { return XCTFail() }
        XCTAssertEqual(ok.fields["cmd"], .string("game.start"))
        XCTAssertEqual(ok.fields["deck"], .string("nearby"))
        XCTAssertNil(ok.fields["id"], "the web process sets its own id")
        XCTAssertEqual(ok.browserID, .int(1))
        XCTAssertNil(refusal(#"{"cmd":"status"}"#, paired: false), "reading is open")
        XCTAssertNil(refusal(#"{"cmd":"stats"}"#, paired: false), "reading is open")
        // The socket's other trusted commands, the shared stream's watch, and unknown commands.
        for cmd in ["credits.redeem", "snooze", "quest.complete", "reload", "watch"] {
            XCTAssertEqual(refusal(#"{"cmd":"\#(cmd)"}"#, paired: true), "not_allowed", cmd)
        }
        XCTAssertEqual(refusal(#"{"cmd":"fly"}"#, paired: true), "unknown_command")
        // Arguments are checked as the daemon checks them, before anything is sent.
        XCTAssertEqual(refusal(#"{"cmd":"game.start","deck":{"a":1}}"#, paired: true), "bad_argument")
        XCTAssertEqual(refusal(#"{"cmd":"game.start","round_s":1}"#, paired: true), "invalid_round_length")
        XCTAssertEqual(refusal(#"{"cmd":"game.start","round_s":"x"}"#, paired: true), "bad_argument")
        XCTAssertEqual(refusal(#"{"cmd":"game.stop","extra":true}"#, paired: true), "bad_argument")
        XCTAssertEqual(Set(BrowserCommands.pairedOnly), ["game.start", "game.stop", "game.reset", "game.neutral"])
        let line = BrowserCommands.refusalLine(.init(code: "not_allowed", message: "no"), id: .int(7), cmd: "fly")
        let v = try! JSONParser.parse(line)
        XCTAssertEqual(v["class"], .string("reply"))
        XCTAssertEqual(v["ok"], .bool(false))
        XCTAssertEqual(v["id"], .int(7))
    }
}
