// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// A full disk under the daemon's store (issue 6 item 8): the state directory is a 1 MiB tmpfs
/// the test fills up while the daemon runs. Credit writes then fail with a `status` event for
/// the store instead of a crash, the daemon keeps serving, writes succeed again once space is
/// freed, and nothing committed before is lost.
///
/// Fixes come from a real gpsd, so the test can hold the walk (`pause` to the stand-in
/// receiver) between its three parts: credits earned on a roomy disk, visits while it is full,
/// credits earned after space is freed.
///
/// Mounting needs root and a private mount namespace, so the tmpfs never shows outside the
/// test: scripts/test runs the tests under scripts/fakehw-ns, which provides both.
final class FaultDiskFullTests: XCTestCase {
    var dir = ""
    var state = ""
    var mounted = false
    var rig: GPSDRig?
    var daemon: DaemonProcess?

    /// True inside scripts/fakehw-ns, which runs the tests in a private mount namespace of
    /// their own (and says so in FAKEHW_SYS). Comparing /proc/self/ns/mnt with init's is no
    /// help: in containers init's namespace link is often unreadable.
    static var inPrivateMountNamespace: Bool {
        ProcessInfo.processInfo.environment["FAKEHW_SYS"] != nil
    }

    static func run(_ tool: String, _ args: [String]) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: tool)
        p.arguments = args
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw LineClient.Failure(
                description: "\(tool) \(args.joined(separator: " ")): \(String(decoding: text, as: UTF8.self))")
        }
    }

    /// Mounts a 1 MiB tmpfs at `path` (made if missing); skips, or fails under CI=true, outside
    /// root in a private mount namespace.
    static func mountSmallState(at path: String) throws {
        guard geteuid() == 0, inPrivateMountNamespace else {
            let why =
                "needs root in a private mount namespace to mount a tmpfs: run it through scripts/test (scripts/fakehw-ns)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { throw LineClient.Failure(description: why) }
            throw XCTSkip(why)
        }
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        try run("/bin/mount", ["-t", "tmpfs", "-o", "size=1m,mode=0755", "tiltd-test-state", path])
    }

    override func setUpWithError() throws {
        try requireSQLiteCLI()
        try GPSDRig.requireGPSD { XCTSkip($0) }
        dir = makeTempDir("full")
        state = "\(dir)/state"
        try Self.mountSmallState(at: state)
        mounted = true
        rig = try GPSDRig()
    }

    override func tearDown() {
        daemon?.stop(signal: SIGKILL)
        rig?.tearDown()
        if mounted { try? Self.run("/bin/umount", ["-l", state]) }
        try? FileManager.default.removeItem(atPath: dir)
    }

    /// Fills the file system holding `path` with a file of zeros until it has no room left;
    /// returns the bytes written.
    static func fill(_ path: String) throws -> Int {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard fd >= 0 else {
            throw LineClient.Failure(description: "open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var total = 0
        for chunk in [65536, 4096, 512, 1] {
            let zeros = [UInt8](repeating: 0, count: chunk)
            while true {
                let n = write(fd, zeros, chunk)
                if n > 0 { total += n; continue }
                if n < 0 && errno == EINTR { continue }
                guard n < 0 && errno == ENOSPC else {
                    throw LineClient.Failure(description: "write \(path): \(String(cString: strerror(errno)))")
                }
                break
            }
        }
        return total
    }

    /// The stand-in receiver's latest "epoch K" line: the index of the last fix it sent.
    func lastEpochSent() -> Int {
        rig?.receiver?.output.last { $0.hasPrefix("epoch ") }.flatMap { Int($0.dropFirst(6)) } ?? -1
    }

    /// Reads until `count` `earned` credit events arrived; returns their request ids and the
    /// store's status events seen meanwhile.
    func earned(_ c: LineClient, count: Int, timeout: Double = 20) throws -> (ids: [String], storeStatuses: [JSONValue])
    {
        var ids: [String] = []
        var statuses: [JSONValue] = []
        let deadline = Date().addingTimeInterval(timeout)
        while ids.count < count {
            guard let v = try c.readJSON(timeout: max(0.01, deadline.timeIntervalSinceNow)) else {
                throw LineClient.Failure(description: "disconnected after \(ids.count) of \(count) credits")
            }
            if v["class"] == "status" && v["source"] == "store" { statuses.append(v) }
            if v["class"] == "credit" && v["event"] == "earned" { ids.append(v["request_id"]?.stringValue ?? "?") }
        }
        return (ids, statuses)
    }

    func testFullStateDirectoryFailsWritesWithStatusThenRecovers() throws {
        let rig = try XCTUnwrap(rig)
        let t0 = ContinuousClock.now
        // Three groups of three credit fences; 60 s of fixes outside every fence after each
        // group (3 s of stream) leave ample room to pause the receiver in between.
        let walk = GPSWalk(count: 9, prefix: "d", idleAfter: [2: 60, 5: 60, 8: 60])
        try rig.startReceiver(lines: walk.nmeaLines, interval: 0.05)
        rig.receiver?.send("pause")
        try rig.startGPSD()
        let db = "\(state)/tiltd.sqlite"
        let config = try writeDaemonConfig(
            in: dir, storePath: db,
            """
            [gps]
            enabled = true
            server = "127.0.0.1:\(rig.gpsdPort)"
            \(walk.geofenceTOML())
            """)
        let d = try DaemonProcess(["run", "--config", config], logPath: "\(dir)/log")
        daemon = d
        let c = try LineClient(path: "\(dir)/tiltd.sock")
        _ = try c.next("hello")
        _ = try c.request(#"{"cmd":"watch","id":1,"classes":["credit","status","fix","place"]}"#, id: 1)
        // gpsd opens the receiver once the daemon watches; then let the walk go.
        try waitUntil("gpsd to open the receiver", timeout: 20) { rig.receiver?.output.contains("connect") ?? false }

        // Part 1, roomy disk: three credits, committed.
        let walkStarted = ContinuousClock.now
        rig.receiver?.send("resume")
        let (firstIds, statusesBefore) = try earned(c, count: 3)
        XCTAssertEqual(statusesBefore.count, 0, "store trouble on a roomy disk: \(statusesBefore)")
        rig.receiver?.send("pause")
        XCTAssertEqual(Set(firstIds), Set((0..<3).map(walk.creditRequestId)))
        try waitUntil("the receiver to hold", timeout: 5) {
            let k = lastEpochSent()
            usleep(100_000)
            return lastEpochSent() == k
        }
        XCTAssertLessThan(
            lastEpochSent(), walk.enterIndex[3] - 1, "paused before the second group (the test was too slow)")

        // Part 2, full disk: the visits to d4…d6 cannot be written.
        let filled = try Self.fill("\(state)/filler")
        rig.receiver?.send("resume")
        var storeStatuses: [JSONValue] = []
        var creditsWhileFull: [JSONValue] = []
        var placesWhileFull: [JSONValue] = []
        // Read until a fix a few seconds past the last of d4…d6 (the idle stretch after them).
        let pastSecondGroup = walk.points[walk.enterIndex[5] + 10].time * 1_000_000_000
        reading: while true {
            let v = try XCTUnwrap(try c.readJSON(timeout: 20), "disconnected while the disk was full:\n\(d.log)")
            switch v["class"]?.stringValue {
            case "status": if v["source"] == "store" { storeStatuses.append(v) }
            case "credit": creditsWhileFull.append(v)
            case "place": placesWhileFull.append(v)
            case "fix": if (v["time_ns"]?.intValue ?? 0) >= pastSecondGroup { break reading }
            default: break
            }
        }
        rig.receiver?.send("pause")
        XCTAssertEqual(creditsWhileFull.count, 0, "credits published though the disk was full: \(creditsWhileFull)")
        XCTAssertEqual(
            placesWhileFull.filter { $0["event"] == "dwell" }.count, 3,
            "the visits themselves are still reported: \(placesWhileFull)")
        XCTAssertFalse(storeStatuses.isEmpty, "no store status event while writes failed")
        XCTAssertTrue(storeStatuses.allSatisfy { $0["state"] == "retrying" }, "\(storeStatuses)")
        let message = storeStatuses.first?["message"]?.stringValue ?? ""
        XCTAssertTrue(message.lowercased().contains("full"), "the status says why: \(message)")
        XCTAssertTrue(d.isRunning, d.log)

        // Still serving while full: status and credits answer; a redeem is refused, not lost
        // halfway, and says so to everyone.
        XCTAssertEqual(try c.request(#"{"cmd":"status","id":2}"#, id: 2)["ok"], .bool(true))
        XCTAssertEqual(try c.credits(id: 3).balance, 3)
        try c.send(#"{"cmd":"credits.redeem","id":4,"amount":1,"request_id":"while-full"}"#)
        let refused = try c.next("reply", timeout: 10) { $0["id"] == .int(4) }
        XCTAssertEqual(refused["ok"], .bool(false), "\(refused)")
        XCTAssertEqual(refused["error"]?["code"], "unavailable", "\(refused)")
        let redeemStatus = try c.next("status", timeout: 10) {
            $0["source"] == "store" && ($0["message"]?.stringValue?.contains("redeem") ?? false)
        }
        XCTAssertEqual(redeemStatus["state"], "retrying", "\(redeemStatus)")
        XCTAssertEqual(try c.credits(id: 5).balance, 3)

        // Part 3, space freed: the next visits earn again and a redeem goes through.
        try FileManager.default.removeItem(atPath: "\(state)/filler")
        rig.receiver?.send("resume")
        let (lastIds, statusesAfter) = try earned(c, count: 3)
        XCTAssertEqual(statusesAfter.first?["state"], "streaming", "the store says it is back: \(statusesAfter)")
        let sources = try c.request(#"{"cmd":"status","id":9}"#, id: 9)["sources"]?.arrayValue ?? []
        XCTAssertEqual(sources.first { $0["source"] == "store" }?["state"], "streaming", "\(sources)")
        XCTAssertEqual(Set(lastIds), Set((6..<9).map(walk.creditRequestId)))
        let redeemed = try c.request(#"{"cmd":"credits.redeem","id":6,"amount":1,"request_id":"after-full"}"#, id: 6)
        XCTAssertEqual(redeemed["ok"], .bool(true), "\(redeemed)")
        XCTAssertEqual(redeemed["balance"]?.intValue, 5)
        XCTAssertEqual(d.stop(), 0, d.log)

        // The file: the first three credits survived the full disk, the last three and the
        // redeem were written after it; nothing from the full spell, nothing twice.
        let audit = try LedgerAudit(db: db)
        audit.assertConsistent("after the full disk")
        XCTAssertEqual(audit.earnedIds, Set(firstIds + lastIds))
        XCTAssertEqual(audit.requestIds.filter { !audit.earnedIds.contains($0) }, ["after-full"])
        XCTAssertEqual(audit.balance, 5)
        print(
            "tiltd full disk: filled \(filled) bytes; \(storeStatuses.count) store status events while full; recovered after freeing; setup \(walkStarted - t0), walk \(ContinuousClock.now - walkStarted)"
        )
    }
}
