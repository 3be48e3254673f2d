// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import XCTest

/// One `KEY{attr}OP"value"` token of a udev rule.
struct UdevToken: Equatable {
    var key: String
    var attribute: String?
    var op: String
    var value: String
}

/// A small parser of the udev rules syntax (udev(7)), strict enough to catch typos that udev would only
/// log and ignore at run time.
enum UdevRulesLint {
    static let matchKeys: Set<String> = [
        "ACTION", "DEVPATH", "KERNEL", "KERNELS", "NAME", "SYMLINK", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER",
        "DRIVERS", "ATTR", "ATTRS", "SYSCTL", "ENV", "CONST", "TAG", "TAGS", "TEST", "PROGRAM", "RESULT",
    ]
    static let assignKeys: Set<String> = [
        "NAME", "SYMLINK", "OWNER", "GROUP", "MODE", "SECLABEL", "ATTR", "SYSCTL", "ENV", "TAG", "RUN",
        "LABEL", "GOTO", "IMPORT", "OPTIONS",
    ]
    static let keysWithAttribute: Set<String> = [
        "ATTR", "ATTRS", "SYSCTL", "ENV", "CONST", "TEST", "RUN", "IMPORT", "SECLABEL",
    ]

    /// Joins continuation lines and drops comments and blank lines; returns (line number, rule text).
    static func logicalLines(_ text: String) -> [(Int, String)] {
        var result: [(Int, String)] = []
        var pending = ""
        var start = 0
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if pending.isEmpty {
                if line.isEmpty || line.hasPrefix("#") { continue }
                start = index + 1
            }
            if line.hasSuffix("\\") {
                pending += line.dropLast() + " "
                continue
            }
            result.append((start, pending + line))
            pending = ""
        }
        return result
    }

    /// Splits one rule into tokens, or says what is wrong with it.
    static func tokens(_ rule: String) throws -> [UdevToken] {
        let pattern = #"^\s*([A-Z_]+)(\{([^}]*)\})?\s*(==|!=|\+=|-=|:=|=)\s*"((?:[^"\\]|\\.)*)"\s*(,|$)"#
        let regex = try NSRegularExpression(pattern: pattern)
        var rest = rule
        var tokens: [UdevToken] = []
        while !rest.trimmingCharacters(in: .whitespaces).isEmpty {
            let ns = rest as NSString
            guard let match = regex.firstMatch(in: rest, range: NSRange(location: 0, length: ns.length)) else {
                throw LintError(message: "cannot parse at: \(rest)")
            }
            func group(_ index: Int) -> String? {
                let range = match.range(at: index)
                return range.location == NSNotFound ? nil : ns.substring(with: range)
            }
            let token = UdevToken(key: group(1)!, attribute: group(3), op: group(4)!, value: group(5)!)
            let isMatch = token.op == "==" || token.op == "!="
            if isMatch && !matchKeys.contains(token.key) {
                throw LintError(message: "\(token.key) cannot be matched")
            }
            if !isMatch && !assignKeys.contains(token.key) {
                throw LintError(message: "\(token.key) cannot be assigned")
            }
            if token.attribute != nil && !keysWithAttribute.contains(token.key) {
                throw LintError(message: "\(token.key) takes no {attribute}")
            }
            if ["ATTR", "ATTRS", "ENV", "SYSCTL"].contains(token.key) && token.attribute == nil {
                throw LintError(message: "\(token.key) needs an {attribute}")
            }
            tokens.append(token)
            rest = ns.substring(from: match.range.location + match.range.length)
        }
        return tokens
    }

    struct LintError: Error, CustomStringConvertible {
        var message: String
        var description: String { message }
    }
}

final class UdevRulesTests: XCTestCase {
    let root = SystemdTestSupport.repositoryRoot()
    var rulesPath: String { root.appendingPathComponent("udev/61-tiltd.rules").path }
    var helperPath: String { root.appendingPathComponent("udev/tiltd-udev-setup").path }

    func testRulesParseWithKnownKeysAndLabels() throws {
        let text = try String(contentsOfFile: rulesPath, encoding: .utf8)
        var gotos: [String] = []
        var labels: [String] = []
        var groups: [String] = []
        for (line, rule) in UdevRulesLint.logicalLines(text) {
            let tokens: [UdevToken]
            do { tokens = try UdevRulesLint.tokens(rule) } catch {
                XCTFail("61-tiltd.rules:\(line): \(error)")
                continue
            }
            XCTAssertFalse(tokens.isEmpty)
            gotos += tokens.filter { $0.key == "GOTO" }.map(\.value)
            labels += tokens.filter { $0.key == "LABEL" }.map(\.value)
            groups += tokens.filter { $0.key == "GROUP" }.map(\.value)
            for run in tokens where run.key == "RUN" {
                XCTAssertTrue(run.value.hasPrefix("/usr/local/lib/tiltd/"), "RUN must use the path install rewrites")
            }
        }
        XCTAssertFalse(gotos.isEmpty)
        for target in gotos { XCTAssertTrue(labels.contains(target), "GOTO \(target) has no LABEL") }
        XCTAssertEqual(groups, ["tiltd"])
    }

    func testLintRejectsMistakes() {
        XCTAssertThrowsError(try UdevRulesLint.tokens(#"SUBSYSTEM=="iio", GROUP=="tiltd""#))  // GROUP is not matchable
        XCTAssertThrowsError(try UdevRulesLint.tokens(#"KERNAL=="iio*""#))  // typo
        XCTAssertThrowsError(try UdevRulesLint.tokens(#"ENV="x""#))  // missing {name}
        XCTAssertThrowsError(try UdevRulesLint.tokens(#"MODE="0660" GROUP="tiltd""#))  // missing comma
        XCTAssertEqual(
            try UdevRulesLint.tokens(#"ENV{A}+="b", TEST=="c""#),
            [
                UdevToken(key: "ENV", attribute: "A", op: "+=", value: "b"),
                UdevToken(key: "TEST", attribute: nil, op: "==", value: "c"),
            ])
    }

    /// The real `udevadm test` on fake devices in a private mount namespace (udev/udevadm-test-fake-devices).
    func testUdevadmOnFakeDevices() throws {
        try SystemdTestSupport.requireTool(getuid() == 0, "needs root for a private mount namespace")
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare"), "needs util-linux unshare")
        try SystemdTestSupport.requireTool(
            FileManager.default.isExecutableFile(atPath: "/usr/bin/udevadm")
                || FileManager.default.isExecutableFile(atPath: "/bin/udevadm"), "needs udevadm (apt: udev)")
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-udev-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: out) }
        let script = root.appendingPathComponent("udev/udevadm-test-fake-devices").path
        let result = try SystemdTestSupport.runProcess(script, [out.path])
        XCTAssertEqual(result.status, 0, result.stderr)

        func read(_ name: String) throws -> String {
            try String(contentsOf: out.appendingPathComponent(name), encoding: .utf8)
        }
        let gid = try read("tiltd.gid").trimmingCharacters(in: .whitespacesAndNewlines)

        // Combined accel + gyro device: group, mode, setup helper, service wanted, hwdb matrix kept.
        let mpu = try read("mpu6050.out")
        XCTAssertTrue(mpu.contains("\nTILTD_IMU=1\n"))
        XCTAssertTrue(mpu.contains("\nSYSTEMD_WANTS=tiltd.service\n"))
        XCTAssertTrue(mpu.contains("\nTAGS=:systemd:\n"))
        XCTAssertTrue(mpu.contains("\nACCEL_MOUNT_MATRIX=0, 1, 0; -1, 0, 0; 0, 0, 1\n"))
        XCTAssertTrue(
            mpu.contains(
                "run: '/usr/local/lib/tiltd/tiltd-udev-setup add iio:device0 /sys/devices/platform/mpu6050/iio:device0'"
            ))
        let mpuLog = try read("mpu6050.log")
        XCTAssertTrue(mpuLog.contains("61-tiltd.rules:28 GROUP \(gid)"), mpuLog)
        XCTAssertTrue(mpuLog.contains("61-tiltd.rules:28 MODE 0660"))

        // Gyro-only device (split accel/gyro drivers) with polled channels only.
        let gyro = try read("gyro.out")
        XCTAssertTrue(gyro.contains("\nSYSTEMD_WANTS=tiltd.service\n"))
        XCTAssertTrue(gyro.contains("run: '/usr/local/lib/tiltd/tiltd-udev-setup add iio:device1 "))
        XCTAssertFalse(gyro.contains("ACCEL_MOUNT_MATRIX"))

        // A magnetometer of its own: its rate is tiltd's to set, so it gets the same treatment.
        let magn = try read("magn.out")
        XCTAssertTrue(magn.contains("\nTILTD_IMU=1\n"))
        XCTAssertTrue(magn.contains("run: '/usr/local/lib/tiltd/tiltd-udev-setup add iio:device3 "))
        XCTAssertTrue(try read("magn.log").contains("61-tiltd.rules:28 MODE 0660"))

        // Not an IMU: untouched.
        let adc = try read("adc.out")
        XCTAssertFalse(adc.contains("TILTD_IMU"))
        XCTAssertFalse(adc.contains("tiltd"))
        XCTAssertFalse(try read("adc.log").contains("61-tiltd.rules:28"))

        // Removal forgets the exported matrix.
        XCTAssertTrue(
            try read("mpu6050-remove.out").contains("run: '/usr/local/lib/tiltd/tiltd-udev-setup remove iio:device0'"))

        // udev reads the file without complaint: its only log lines about it are the applied keys.
        for name in ["mpu6050.log", "gyro.log", "magn.log", "adc.log", "mpu6050-remove.log"] {
            for line in try read(name).split(separator: "\n") where line.contains("61-tiltd.rules:") {
                XCTAssertNotNil(
                    line.range(of: #"61-tiltd\.rules:\d+ (GROUP|MODE|RUN) "#, options: .regularExpression),
                    "\(name): \(line)")
            }
        }
    }

    /// The RUN helper on a fake sysfs directory: exactly the written attributes change group and mode,
    /// and the hwdb mount matrix is exported atomically and removed again.
    func testSetupHelperOnFakeSysfs() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-helper-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: base) }
        let sys = base.appendingPathComponent("iio:device0")
        let writable = [
            "scan_elements/in_accel_x_en", "scan_elements/in_anglvel_z_en", "scan_elements/in_timestamp_en",
            "buffer/enable", "buffer/length", "sampling_frequency", "trigger/current_trigger",
            "current_timestamp_clock", "in_accel_sampling_frequency", "in_magn_sampling_frequency",
        ]
        let readOnly = [
            "name", "in_accel_scale", "scan_elements/in_accel_x_index", "scan_elements/in_accel_x_type",
            "sampling_frequency_available",
        ]
        for file in writable + readOnly {
            let url = sys.appendingPathComponent(file)
            try FileManager.default.createDirectory(
                at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            XCTAssertTrue(
                FileManager.default.createFile(
                    atPath: url.path, contents: Data(), attributes: [.posixPermissions: 0o644]))
        }
        // A group other than the caller's, so a change is visible: gid of "daemon" on Debian (1).
        guard let group = getgrnam("daemon") else { return XCTFail("no group 'daemon' on this system") }
        let gid = group.pointee.gr_gid
        let runDir = base.appendingPathComponent("run")
        let env = [
            "TILTD_GROUP": "daemon", "TILTD_UDEV_RUNDIR": runDir.path,
            "ACCEL_MOUNT_MATRIX": "0, 1, 0; -1, 0, 0; 0, 0, 1",
        ]

        let added = try SystemdTestSupport.runProcess(helperPath, ["add", "iio:device0", sys.path], environment: env)
        XCTAssertEqual(added.status, 0, added.stderr)
        for file in writable {
            var info = stat()
            XCTAssertEqual(stat(sys.appendingPathComponent(file).path, &info), 0)
            XCTAssertEqual(info.st_gid, gid, file)
            XCTAssertEqual(info.st_mode & 0o777, 0o664, file)
        }
        for file in readOnly {
            var info = stat()
            XCTAssertEqual(stat(sys.appendingPathComponent(file).path, &info), 0)
            XCTAssertNotEqual(info.st_gid, gid, file)
            XCTAssertEqual(info.st_mode & 0o777, 0o644, file)
        }
        let matrixFile = runDir.appendingPathComponent("iio:device0.accel_mount_matrix")
        XCTAssertEqual(try String(contentsOf: matrixFile, encoding: .utf8), "0, 1, 0; -1, 0, 0; 0, 0, 1\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: matrixFile.path + ".tmp"))

        // Without the property (e.g. the hwdb entry was deleted) a stale matrix must not survive.
        var noMatrix = env
        noMatrix["ACCEL_MOUNT_MATRIX"] = ""
        XCTAssertEqual(
            try SystemdTestSupport.runProcess(helperPath, ["add", "iio:device0", sys.path], environment: noMatrix)
                .status, 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: matrixFile.path))

        XCTAssertEqual(
            try SystemdTestSupport.runProcess(helperPath, ["add", "iio:device0", sys.path], environment: env).status, 0)
        let removed = try SystemdTestSupport.runProcess(helperPath, ["remove", "iio:device0"], environment: env)
        XCTAssertEqual(removed.status, 0, removed.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: matrixFile.path))
    }

    func testSetupHelperRejectsBadArguments() throws {
        let badName = try SystemdTestSupport.runProcess(helperPath, ["add", "../etc", "/tmp"])
        XCTAssertEqual(badName.status, 2)
        XCTAssertTrue(badName.stderr.contains("not an IIO device name"))
        XCTAssertEqual(try SystemdTestSupport.runProcess(helperPath, ["remove", "iio:device0/../../x"]).status, 2)
        let missingDir = try SystemdTestSupport.runProcess(
            helperPath, ["add", "iio:device0", "/nonexistent/iio:device0"])
        XCTAssertEqual(missingDir.status, 2)
        let badAction = try SystemdTestSupport.runProcess(helperPath, ["frob", "iio:device0"])
        XCTAssertEqual(badAction.status, 2)
        XCTAssertTrue(badAction.stderr.contains("usage"))
    }
}
