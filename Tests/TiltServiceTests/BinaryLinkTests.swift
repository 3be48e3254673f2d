import Foundation
import XCTest

/// Issue 28: the web screen and the MQTT bridge link what they use — the config model and the
/// protocol client — not the daemon's hub, SQLite store or io_uring fan-out.
final class BinaryLinkTests: XCTestCase {
    let root = SystemdTestSupport.repositoryRoot()

    /// The dependencies Package.swift gives `target`.
    func dependencies(of target: String) throws -> String {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        guard let start = manifest.range(of: "name: \"\(target)\",") else { return "" }
        let rest = manifest[start.upperBound...]
        let end = rest.range(of: "\n        ),")?.lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    func testWebScreenAndBridgeLinkNoStoreOrRing() throws {
        // TiltWeb's and TiltBridge's own DaemonLink files, and tiltd-web's TiltdVersion, still
        // come from TiltService until the protocol module and its client land (issue 28, point 1).
        for target in ["TiltWeb", "TiltBridge", "tiltd-web"]
        where try dependencies(of: target).contains("\"TiltService\"") {
            throw XCTSkip("\(target) still depends on TiltService (its daemon links are replaced by DaemonClient)")
        }
        let bin = URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["TILTD_BIN"]
                ?? root.appendingPathComponent(".build/debug/tiltd").path
        ).deletingLastPathComponent().appendingPathComponent("tiltd-web").path
        try SystemdTestSupport.requireTool(FileManager.default.fileExists(atPath: bin), "\(bin) not built")
        let ldd = try SystemdTestSupport.runProcess("/usr/bin/ldd", [bin])
        for lib in ["libsqlite3", "liburing"] { XCTAssertFalse(ldd.stdout.contains(lib), "tiltd-web links \(lib)") }
        let nm = try SystemdTestSupport.runProcess("/usr/bin/nm", ["-D", "--undefined-only", bin])
        for symbol in ["sqlite3_", "io_uring_"] {
            XCTAssertFalse(nm.stdout.contains(symbol), "tiltd-web uses \(symbol)*")
        }
    }
}
