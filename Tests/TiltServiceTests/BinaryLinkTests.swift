// SPDX-License-Identifier: Apache-2.0
import Foundation
import XCTest

/// Issue 28: the web screen and the MQTT bridge link what they use — the config model and the
/// protocol client — not the daemon's hub, SQLite store or io_uring fan-out. Issue 40: nor the
/// sensors' libiio and libgps (clocks, files and `HOST:PORT` are the platform layer's).
final class BinaryLinkTests: XCTestCase {
    let root = SystemdTestSupport.repositoryRoot()

    /// The dependencies Package.swift gives `target`.
    func dependencies(of target: String) throws -> String {
        let manifest = try String(contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
        guard let start = manifest.range(of: "name: \"\(target)\",") else { return "" }
        let rest = manifest[start.upperBound...]
        // Up to the next target's declaration or comment (targets are written on one line or many).
        let end =
            rest.range(
                of: #"\n\s*(//|\.(target|executableTarget|testTarget|systemLibrary)\()"#, options: .regularExpression)?
            .lowerBound ?? rest.endIndex
        return String(rest[..<end])
    }

    /// The directory of the built binaries.
    var binaries: URL {
        URL(
            fileURLWithPath: ProcessInfo.processInfo.environment["TILTD_BIN"]
                ?? root.appendingPathComponent(".build/debug/tiltd").path
        ).deletingLastPathComponent()
    }

    func testWebScreenLinksNoSensorLibraries() throws {
        // What `tiltd web`, the bridge, the logger and the config need is below the sensors: their
        // targets do not name TiltSensors, and the web screen's binary links neither libiio nor libgps.
        for target in ["TiltLogging", "TiltSystemd", "TiltConfig", "TiltWeb", "TiltCommandLine", "tiltd-web"] {
            let deps = try dependencies(of: target)
            XCTAssertFalse(deps.isEmpty, "\(target) not found in Package.swift")
            XCTAssertFalse(deps.contains("\"TiltSensors\""), "\(target) depends on TiltSensors")
        }
        let bin = binaries.appendingPathComponent("tiltd-web").path
        try SystemdTestSupport.requireTool(FileManager.default.fileExists(atPath: bin), "\(bin) not built")
        let ldd = try SystemdTestSupport.runProcess("/usr/bin/ldd", [bin])
        for lib in ["libiio", "libgps"] { XCTAssertFalse(ldd.stdout.contains(lib), "tiltd-web links \(lib)") }
        let defined = try SystemdTestSupport.runProcess("/usr/bin/nm", ["--defined-only", bin])
        XCTAssertFalse(defined.stdout.contains(" $s11TiltSensors"), "tiltd-web carries TiltSensors symbols")
    }

    func testWebScreenAndBridgeLinkNoStoreOrRing() throws {
        // The targets name no daemon module, and the built binaries (the web screen, and the bridge
        // without the daemon: bench/mqtt's MQTTBench) link neither its store nor its fan-out.
        for target in ["TiltWeb", "TiltBridge", "TiltCommandLine", "tiltd-web"] {
            XCTAssertFalse(try dependencies(of: target).contains("\"TiltService\""), "\(target) depends on TiltService")
        }
        let dir = binaries
        for exe in ["tiltd-web", "MQTTBench"] {
            let bin = dir.appendingPathComponent(exe).path
            try SystemdTestSupport.requireTool(FileManager.default.fileExists(atPath: bin), "\(bin) not built")
            let ldd = try SystemdTestSupport.runProcess("/usr/bin/ldd", [bin])
            for lib in ["libsqlite3", "liburing"] { XCTAssertFalse(ldd.stdout.contains(lib), "\(exe) links \(lib)") }
            let nm = try SystemdTestSupport.runProcess("/usr/bin/nm", ["-D", "--undefined-only", bin])
            for symbol in ["sqlite3_", "io_uring_"] {
                XCTAssertFalse(nm.stdout.contains(symbol), "\(exe) uses \(symbol)*")
            }
            // Swift symbols of the daemon's modules (hub, store, socket server; io_uring fan-out).
            let defined = try SystemdTestSupport.runProcess("/usr/bin/nm", ["--defined-only", bin])
            for module in ["$s11TiltService", "$s15SocketWriteRing"] {
                XCTAssertFalse(defined.stdout.contains(" " + module), "\(exe) carries \(module) symbols")
            }
        }
    }
}
