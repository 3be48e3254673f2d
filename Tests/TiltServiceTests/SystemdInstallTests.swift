// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import XCTest

/// scripts/install and scripts/uninstall into a staging directory (DESTDIR), and scripts/check-units.
final class SystemdInstallTests: XCTestCase {
    let root = SystemdTestSupport.repositoryRoot()
    var stage: URL!
    var binary: URL!
    var exampleConfig: URL!
    /// Stand-in pages (scripts/make-man's real ones need a build; ManPageTests checks those).
    var manPages: URL!
    var webBinary: URL!

    override func setUpWithError() throws {
        stage = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-stage-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: stage, withIntermediateDirectories: true)
        // A stand-in binary: the install script copies whatever it is given, and building the release
        // binary here would take minutes.
        binary = stage.appendingPathComponent("tiltd-built")
        try "#!/bin/sh\necho tiltd\n".write(to: binary, atomically: true, encoding: .utf8)
        chmod(binary.path, 0o755)
        // `tiltd web`'s executable, which the scripts take from beside the daemon's.
        webBinary = stage.appendingPathComponent("tiltd-web")
        try "#!/bin/sh\necho tiltd-web\n".write(to: webBinary, atomically: true, encoding: .utf8)
        chmod(webBinary.path, 0o755)
        exampleConfig = stage.appendingPathComponent("example.toml")
        try "# example config\n".write(to: exampleConfig, atomically: true, encoding: .utf8)
        manPages = stage.appendingPathComponent("man")
        try FileManager.default.createDirectory(at: manPages, withIntermediateDirectories: true)
        for page in ["tiltd.8", "tiltd-web.8", "tiltd.toml.5", "tiltd-protocol.7"] {
            try ".TH STUB 1\n".write(to: manPages.appendingPathComponent(page), atomically: true, encoding: .utf8)
        }
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: stage)
    }

    private func run(
        _ script: String, _ arguments: [String] = [], prefix: String
    ) throws -> SystemdTestSupport.ProcessResult {
        try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/\(script)").path, arguments,
            environment: [
                "DESTDIR": stage.appendingPathComponent("root").path, "PREFIX": prefix,
                "TILTD_BINARY": binary.path, "CONFIG_SRC": exampleConfig.path, "MAN_DIR": manPages.path,
            ])
    }

    /// Every regular file and symlink under the staging root, as absolute target paths.
    private func installedFiles() -> [String] {
        let base = stage.appendingPathComponent("root")
        guard let walker = FileManager.default.enumerator(atPath: base.path) else { return [] }
        var files: [String] = []
        while let relative = walker.nextObject() as? String {
            var isDirectory: ObjCBool = false
            FileManager.default.fileExists(
                atPath: base.appendingPathComponent(relative).path, isDirectory: &isDirectory)
            if !isDirectory.boolValue { files.append("/" + relative) }
        }
        return files.sorted()
    }

    private func contents(_ path: String) throws -> String {
        try String(contentsOfFile: stage.appendingPathComponent("root").path + path, encoding: .utf8)
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        stat(stage.appendingPathComponent("root").path + path, &info)
        return info.st_mode & 0o7777
    }

    func testInstallIntoDestdirWithDefaultPrefix() throws {
        let result = try run("install", prefix: "/usr/local")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            installedFiles(),
            [
                "/etc/tiltd/decks/animals.txt",
                "/etc/tiltd/decks/party.json",
                "/etc/tiltd/tiltd.toml",
                "/etc/udev/rules.d/61-tiltd.rules",
                "/usr/local/bin/tiltd",
                "/usr/local/bin/tiltd-web",
                "/usr/local/lib/systemd/system/tiltd-mqtt.service",
                "/usr/local/lib/systemd/system/tiltd-web.service",
                "/usr/local/lib/systemd/system/tiltd.service",
                "/usr/local/lib/systemd/system/tiltd.socket",
                "/usr/local/lib/tiltd/tiltd-udev-setup",
                "/usr/local/share/man/man5/tiltd.toml.5",
                "/usr/local/share/man/man7/tiltd-protocol.7",
                "/usr/local/share/man/man8/tiltd-web.8",
                "/usr/local/share/man/man8/tiltd.8",
            ])
        XCTAssertTrue(result.stdout.contains("no user/group created"))
        XCTAssertEqual(mode("/usr/local/bin/tiltd"), 0o755)
        XCTAssertEqual(mode("/usr/local/lib/tiltd/tiltd-udev-setup"), 0o755)
        XCTAssertEqual(mode("/usr/local/lib/systemd/system/tiltd.service"), 0o644)
        XCTAssertEqual(try contents("/usr/local/bin/tiltd"), "#!/bin/sh\necho tiltd\n")
        XCTAssertEqual(try contents("/etc/tiltd/tiltd.toml"), "# example config\n")
        XCTAssertTrue(
            try contents("/usr/local/lib/systemd/system/tiltd.service")
                .contains("\nExecStart=/usr/local/bin/tiltd run --config /etc/tiltd/tiltd.toml\n"))
    }

    func testPrefixIsRewrittenIntoUnitsAndRules() throws {
        let result = try run("install", prefix: "/usr")
        XCTAssertEqual(result.status, 0, result.stderr)
        XCTAssertEqual(
            installedFiles(),
            [
                "/etc/tiltd/decks/animals.txt",
                "/etc/tiltd/decks/party.json",
                "/etc/tiltd/tiltd.toml",
                "/usr/bin/tiltd",
                "/usr/bin/tiltd-web",
                "/usr/lib/systemd/system/tiltd-mqtt.service",
                "/usr/lib/systemd/system/tiltd-web.service",
                "/usr/lib/systemd/system/tiltd.service",
                "/usr/lib/systemd/system/tiltd.socket",
                "/usr/lib/tiltd/tiltd-udev-setup",
                "/usr/lib/udev/rules.d/61-tiltd.rules",
                "/usr/share/man/man5/tiltd.toml.5",
                "/usr/share/man/man7/tiltd-protocol.7",
                "/usr/share/man/man8/tiltd-web.8",
                "/usr/share/man/man8/tiltd.8",
            ])
        XCTAssertTrue(
            try contents("/usr/lib/systemd/system/tiltd-web.service").contains(
                "\nExecStart=/usr/bin/tiltd web --config /etc/tiltd/tiltd.toml\n"))
        let service = try contents("/usr/lib/systemd/system/tiltd.service")
        XCTAssertTrue(service.contains("\nExecStart=/usr/bin/tiltd run --config /etc/tiltd/tiltd.toml\n"))
        XCTAssertEqual(Self.settingsMentioning("/usr/local", in: service), [])
        let bridge = try contents("/usr/lib/systemd/system/tiltd-mqtt.service")
        XCTAssertTrue(bridge.contains("\nExecStart=/usr/bin/tiltd mqtt --config /etc/tiltd/tiltd.toml\n"))
        XCTAssertEqual(Self.settingsMentioning("/usr/local", in: bridge), [])
        let rules = try contents("/usr/lib/udev/rules.d/61-tiltd.rules")
        XCTAssertTrue(rules.contains(#"RUN+="/usr/lib/tiltd/tiltd-udev-setup add %k %S%p""#))
        XCTAssertEqual(Self.settingsMentioning("/usr/local", in: rules), [])
    }

    /// Non-comment lines containing `text` (comments may mention the default prefix).
    static func settingsMentioning(_ text: String, in file: String) -> [String] {
        file.split(separator: "\n").map(String.init)
            .filter { !$0.hasPrefix("#") && $0.contains(text) }
    }

    func testExistingConfigIsNeverOverwritten() throws {
        XCTAssertEqual(try run("install", prefix: "/usr/local").status, 0)
        let configPath = stage.appendingPathComponent("root/etc/tiltd/tiltd.toml")
        try "# edited by the user\n[imu]\nrate_hz = 100\n".write(to: configPath, atomically: true, encoding: .utf8)

        let again = try run("install", prefix: "/usr/local")
        XCTAssertEqual(again.status, 0, again.stderr)
        XCTAssertTrue(again.stdout.contains("kept existing /etc/tiltd/tiltd.toml"))
        XCTAssertEqual(try contents("/etc/tiltd/tiltd.toml"), "# edited by the user\n[imu]\nrate_hz = 100\n")
        // The example decks too: a deck the user edited is theirs.
        let deckPath = stage.appendingPathComponent("root/etc/tiltd/decks/animals.txt")
        try "mine\n".write(to: deckPath, atomically: true, encoding: .utf8)
        let third = try run("install", prefix: "/usr/local")
        XCTAssertEqual(third.status, 0, third.stderr)
        XCTAssertTrue(third.stdout.contains("kept existing /etc/tiltd/decks/animals.txt"), third.stdout)
        XCTAssertEqual(try contents("/etc/tiltd/decks/animals.txt"), "mine\n")
    }

    func testUninstallKeepsConfigUnlessPurged() throws {
        XCTAssertEqual(try run("install", prefix: "/usr/local").status, 0)
        let removed = try run("uninstall", prefix: "/usr/local")
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertEqual(
            installedFiles(), ["/etc/tiltd/decks/animals.txt", "/etc/tiltd/decks/party.json", "/etc/tiltd/tiltd.toml"])

        let purged = try run("uninstall", ["--purge"], prefix: "/usr/local")
        XCTAssertEqual(purged.status, 0, purged.stderr)
        XCTAssertEqual(installedFiles(), [])
    }

    func testBadInputIsRefusedWithAMessage() throws {
        let relative = try run("install", prefix: "usr/local")
        XCTAssertEqual(relative.status, 2)
        XCTAssertTrue(relative.stderr.contains("PREFIX must be an absolute path"))

        let unknown = try run("install", ["--prefx=/usr"], prefix: "/usr/local")
        XCTAssertEqual(unknown.status, 2)
        XCTAssertTrue(unknown.stderr.contains("unknown argument '--prefx=/usr'"))

        let missingConfig = try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/install").path, [],
            environment: [
                "DESTDIR": stage.appendingPathComponent("root").path, "TILTD_BINARY": binary.path,
                "CONFIG_SRC": stage.appendingPathComponent("nope.toml").path, "MAN_DIR": manPages.path,
            ])
        XCTAssertEqual(missingConfig.status, 1)
        XCTAssertTrue(missingConfig.stderr.contains("example config"))
        XCTAssertEqual(installedFiles(), [], "a refused install writes nothing")
    }

    /// scripts/build-deb packs the PREFIX=/usr staging with dpkg-deb: config as a conffile, docs,
    /// the device-tree overlays (compiled and as source), and a Depends: that dpkg-shlibdeps
    /// derived from the libraries the binary really links.
    func testDebianPackageContents() throws {
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/dpkg-shlibdeps"),
            "needs dpkg-shlibdeps (apt: dpkg-dev)")
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/dtc"), "needs dtc (apt: device-tree-compiler)")
        let completer = root.appendingPathComponent(".build/debug/tiltd").path
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: completer), "needs the debug build (\(completer))")
        // A real ELF file of this machine linked to libsqlite3 (install-deps installs sqlite3), so
        // the generated Depends can be checked; the packaging does not care what the binary does.
        let elf = "/usr/bin/sqlite3"
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: elf), "needs \(elf) (apt: sqlite3)")
        for b in [binary!, webBinary!] {
            try FileManager.default.removeItem(at: b)
            try FileManager.default.copyItem(atPath: elf, toPath: b.path)
        }
        let arch = try SystemdTestSupport.runProcess("/usr/bin/dpkg", ["--print-architecture"]).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let out = stage.appendingPathComponent("deb")
        let built = try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/build-deb").path, ["--no-lintian", out.path],
            environment: [
                "TILTD_BINARY": binary.path, "CONFIG_SRC": exampleConfig.path, "MAN_DIR": manPages.path,
                "VERSION": "9.8.7",
                // The stand-in binary cannot write shell completions: the real build does.
                "TILTD_COMPLETER": completer,
            ])
        XCTAssertEqual(built.status, 0, built.stderr)
        let deb = out.appendingPathComponent("tiltd_9.8.7_\(arch).deb").path
        let listing = try SystemdTestSupport.runProcess("/usr/bin/dpkg-deb", ["-c", deb])
        XCTAssertEqual(listing.status, 0, listing.stderr)
        let files = Set(
            listing.stdout.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("-") else { return nil }
                return line.split(separator: " ").last.map { String($0.dropFirst()) }
            })
        for expected in [
            "/etc/tiltd/tiltd.toml", "/etc/tiltd/decks/animals.txt", "/etc/tiltd/decks/party.json", "/usr/bin/tiltd",
            "/usr/bin/tiltd-web", "/usr/lib/systemd/system/tiltd.service",
            "/usr/lib/systemd/system/tiltd-mqtt.service",
            "/usr/lib/systemd/system/tiltd-web.service",
            "/usr/lib/systemd/system/tiltd.socket", "/usr/lib/tiltd/tiltd-udev-setup",
            "/usr/lib/udev/rules.d/61-tiltd.rules", "/usr/share/man/man5/tiltd.toml.5.gz",
            "/usr/share/man/man7/tiltd-protocol.7.gz", "/usr/share/man/man8/tiltd.8.gz",
            "/usr/share/man/man8/tiltd-web.8.gz",
            "/usr/share/doc/tiltd/copyright", "/usr/share/doc/tiltd/changelog.gz",
            "/usr/share/doc/tiltd/README.md", "/usr/share/doc/tiltd/docs/config.md",
            "/usr/share/doc/tiltd/docs/protocol.md",
        ] {
            XCTAssertTrue(files.contains(expected), "\(expected) missing from \(files.sorted())")
        }
        // Every overlay in overlays/, compiled (what a Pi copies to /boot/firmware/overlays) and
        // as its source: a new board's overlay is shipped without a change here.
        let dts = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("overlays").path)
            .filter { $0.hasSuffix(".dts") }
        XCTAssertFalse(dts.isEmpty, "no overlays/*.dts to ship")
        for source in dts {
            let name = String(source.dropLast(".dts".count))
            for expected in ["/usr/share/tiltd/overlays/\(name).dtbo", "/usr/share/tiltd/overlays/\(name).dts"] {
                XCTAssertTrue(files.contains(expected), "\(expected) missing from the package")
            }
        }
        XCTAssertTrue(listing.stdout.contains("root/root"))
        let conffiles = try SystemdTestSupport.runProcess("/usr/bin/dpkg-deb", ["-I", deb, "conffiles"])
        XCTAssertEqual(
            conffiles.stdout, "/etc/tiltd/decks/animals.txt\n/etc/tiltd/decks/party.json\n/etc/tiltd/tiltd.toml\n")
        let control = try SystemdTestSupport.runProcess(
            "/usr/bin/dpkg-deb", ["-f", deb, "Package", "Version", "Architecture"])
        XCTAssertEqual(control.stdout, "Package: tiltd\nVersion: 9.8.7\nArchitecture: \(arch)\n")
        let depends = try SystemdTestSupport.runProcess("/usr/bin/dpkg-deb", ["-f", deb, "Depends"]).stdout
        for package in ["libsqlite3-0 (>= ", "libc6 (>= ", "passwd"] {
            XCTAssertTrue(depends.contains(package), "Depends lacks \(package): \(depends)")
        }
        XCTAssertFalse(depends.contains("libiio0"), "Depends names only what the binary links: \(depends)")
    }

    /// build-deb refuses an architecture it cannot package, and arm64 without the cross-built binary.
    func testDebianPackageRefusesUnknownArchitectures() throws {
        let armhf = try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/build-deb").path, ["--arch", "armhf", stage.path], environment: [:])
        XCTAssertEqual(armhf.status, 2)
        XCTAssertTrue(armhf.stderr.contains("'armhf' not supported"), armhf.stderr)
        let arm64 = try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/build-deb").path, ["--arch", "arm64", stage.path],
            environment: ["TILTD_BINARY": stage.appendingPathComponent("none").path])
        XCTAssertEqual(arm64.status, 1)
        XCTAssertTrue(arm64.stderr.contains("run scripts/cross-build arm64 first"), arm64.stderr)
    }

    /// `systemd-analyze verify` has nothing to say about the units, and the exposure is at most 1.5.
    func testUnitsVerifyAndExposureWithinLimit() throws {
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "needs systemd-analyze (apt: systemd)")
        let result = try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/check-units").path, [],
            environment: ["TILTD_BINARY": binary.path, "MAN_DIR": manPages.path])
        XCTAssertEqual(result.status, 0, result.stdout + result.stderr)
        XCTAssertTrue(result.stdout.contains("verify: OK (no findings)"), result.stdout)
        let exposure = result.stdout.split(separator: "\n")
            .first { $0.hasPrefix("exposure: ") }
            .flatMap { Double($0.dropFirst("exposure: ".count).prefix { $0 != " " }) }
        let value = try XCTUnwrap(exposure, result.stdout)
        XCTAssertLessThanOrEqual(value, 1.5)
        print("tiltd.service exposure (systemd-analyze security --offline=true): \(value)")
        // tiltd-web.service: its own line, limit 2.0.
        let web = result.stdout.split(separator: "\n").filter { $0.hasPrefix("exposure: ") }.dropFirst().first
            .flatMap { Double($0.dropFirst("exposure: ".count).prefix { $0 != " " }) }
        XCTAssertLessThanOrEqual(try XCTUnwrap(web, result.stdout), 2.0)
    }

    /// check-units really fails above the limit (so the test above could fail).
    func testCheckUnitsFailsAboveLimit() throws {
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/systemd-analyze"),
            "needs systemd-analyze (apt: systemd)")
        let result = try SystemdTestSupport.runProcess(
            root.appendingPathComponent("scripts/check-units").path, [],
            environment: ["TILTD_BINARY": binary.path, "MAN_DIR": manPages.path, "EXPOSURE_LIMIT": "0.5"])
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderr.contains("is above the limit 0.5"), result.stderr)
    }
}
