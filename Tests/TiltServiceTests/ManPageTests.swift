// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltConfig
import XCTest

/// The three pages scripts/make-man makes (scripts/test makes them into .build/man before the
/// tests run) render with man(1) without a single warning, and say what they must.
final class ManPageTests: XCTestCase {
    let root = SystemdTestSupport.repositoryRoot()

    var pages: URL {
        if let dir = ProcessInfo.processInfo.environment["TILTD_MAN_DIR"], !dir.isEmpty {
            return URL(fileURLWithPath: dir)
        }
        return root.appendingPathComponent(".build/man")
    }

    /// What each page renders to, with every warning groff and man have.
    func render(_ page: String) throws -> (text: String, warnings: String) {
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/man"),
            "needs man (apt: man-db, groff-base)")
        let file = pages.appendingPathComponent(page)
        try SystemdTestSupport.requireTool(
            FileManager.default.fileExists(atPath: file.path),
            "\(file.path) missing: scripts/test makes it with scripts/make-man")
        let r = try SystemdTestSupport.runProcess(
            "/usr/bin/man", ["--warnings=all", "-l", file.path],
            environment: ["LC_ALL": "C.UTF-8", "MANWIDTH": "80", "MANPAGER": "cat", "PAGER": "cat"])
        XCTAssertEqual(r.status, 0, r.stderr)
        return (r.stdout, r.stderr)
    }

    func testTiltd8CoversEverySubcommand() throws {
        let (text, warnings) = try render("tiltd.8")
        XCTAssertEqual(warnings, "", "man -l tiltd.8 warned")
        XCTAssertTrue(text.hasPrefix("TILTD(8)"), String(text.prefix(200)))
        // Every subcommand the binary has, as its --help lists them.
        let help = try SystemdTestSupport.runProcess(
            ProcessInfo.processInfo.environment["TILTD_BIN"] ?? root.appendingPathComponent(".build/debug/tiltd").path,
            ["--help"])
        // Each is listed as "  name   abstract"; wrapped abstracts continue further indented.
        let subcommands = (help.stdout.components(separatedBy: "SUBCOMMANDS:").last ?? "")
            .split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("  "), !line.hasPrefix("   "), let name = line.split(separator: " ").first,
                    name.allSatisfy({ $0.isLowercase || $0 == "-" })
                else { return nil }
                return String(name)
            }
        XCTAssertGreaterThanOrEqual(subcommands.count, 5, help.stdout)
        // generate-manual lists each subcommand as an item: its name first on a line.
        let items = Set(text.split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) })
        for sub in subcommands { XCTAssertTrue(items.contains(sub), "tiltd.8 lacks \(sub)") }
    }

    func testConfigPageCoversTheKeys() throws {
        let (text, warnings) = try render("tiltd.toml.5")
        XCTAssertEqual(warnings, "", "man -l tiltd.toml.5 warned")
        for key in ["trusted_gids", "rate_hz", "[socket]", "[gps]", "Reloading"] {
            XCTAssertTrue(text.contains(key), "tiltd.toml.5 lacks \(key)")
        }
        // Every declared table and key (the page is made from docs/config.md, whose tables
        // ConfigReferenceTests holds to the declarations).
        for table in Configuration.tables {
            XCTAssertTrue(text.contains(table.heading), "tiltd.toml.5 lacks \(table.heading)")
            for key in table.keys {
                XCTAssertTrue(text.contains(key.name), "tiltd.toml.5 lacks \(table.heading) \(key.name)")
            }
        }
    }

    func testProtocolPageCoversTheLines() throws {
        let (text, warnings) = try render("tiltd-protocol.7")
        XCTAssertEqual(warnings, "", "man -l tiltd-protocol.7 warned")
        for word in ["t_ns", "hello", "game.start", "forbidden", "clock_offset_s"] {
            XCTAssertTrue(text.contains(word), "tiltd-protocol.7 lacks \(word)")
        }
    }
}
