// SPDX-License-Identifier: Apache-2.0
import Foundation
import XCTest

/// Helpers shared by the systemd, udev and install tests (namespaced to stay clear of other test files).
enum SystemdTestSupport {
    /// The repository root, found by walking up from this file to the directory holding Package.swift.
    static func repositoryRoot(file: String = #filePath) -> URL {
        var url = URL(fileURLWithPath: file).deletingLastPathComponent()
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) { return url }
            url.deleteLastPathComponent()
        }
        fatalError("Package.swift not found above \(file)")
    }

    /// Output of a finished child process.
    struct ProcessResult {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Runs a program to completion, capturing its output.
    static func runProcess(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> ProcessResult {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.run()
        // Read before waiting so a chatty child never blocks on a full pipe.
        let stdoutData = out.fileHandleForReading.readDataToEndOfFile()
        let stderrData = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return ProcessResult(
            status: process.terminationStatus,
            stdout: String(decoding: stdoutData, as: UTF8.self),
            stderr: String(decoding: stderrData, as: UTF8.self))
    }

    /// Skips a test whose tool is missing here — except under CI (`CI=true`), where it must fail instead.
    static func requireTool(
        _ condition: Bool, _ reason: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        if condition { return }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("required in CI: \(reason)", file: file, line: line)
            throw XCTSkip("failed above")
        }
        throw XCTSkip(reason)
    }
}
