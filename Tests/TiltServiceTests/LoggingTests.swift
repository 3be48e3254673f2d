// SPDX-License-Identifier: Apache-2.0
import Foundation
import Glibc
import Logging
import XCTest

@testable import TiltLogging

/// Collects written text and serves a settable monotonic clock.
/// `@unchecked`: every field is guarded by `lock`.
final class LogCapture: @unchecked Sendable {
    private let lock = NSLock()
    private var text = ""
    private var now: Int64 = 1_000_000_000

    var lines: [String] {
        lock.lock()
        defer { lock.unlock() }
        return text.split(separator: "\n").map(String.init)
    }

    func append(_ chunk: String) {
        lock.lock()
        text += chunk
        lock.unlock()
    }

    func advance(seconds: Double) {
        lock.lock()
        now += Int64(seconds * 1e9)
        lock.unlock()
    }

    func monotonic() -> Int64 {
        lock.lock()
        defer { lock.unlock() }
        return now
    }

    func output(style: LogOutputStyle, limit: RepeatLimit? = .standard) -> LogOutput {
        LogOutput(
            style: style, repeatLimit: limit, monotonicNanoseconds: { self.monotonic() },
            wallClock: { timespec(tv_sec: 0, tv_nsec: 0) }, write: { self.append($0) })
    }
}

final class LoggingTests: XCTestCase {
    func testJournalLinesCarryPriorityAndNoTimestamp() {
        let capture = LogCapture()
        var logger = Logger(label: "tiltd.iio") { TiltLogHandler(label: $0, output: capture.output(style: .journal)) }
        logger.logLevel = .trace
        logger.trace("t")
        logger.debug("d")
        logger.info("i", metadata: ["device": "iio:device0", "b": "2"])
        logger.notice("n")
        logger.warning("w")
        logger.error("e")
        logger.critical("c")
        XCTAssertEqual(
            capture.lines,
            [
                "<7>tiltd.iio: t",
                "<7>tiltd.iio: d",
                "<6>tiltd.iio: i b=2 device=iio:device0",
                "<5>tiltd.iio: n",
                "<4>tiltd.iio: w",
                "<3>tiltd.iio: e",
                "<2>tiltd.iio: c",
            ])
    }

    func testJournalMultilineMessageGetsPrefixOnEveryLine() {
        let capture = LogCapture()
        let logger = Logger(label: "cfg") { TiltLogHandler(label: $0, output: capture.output(style: .journal)) }
        logger.error("bad config:\nline 3: unknown key")
        XCTAssertEqual(capture.lines, ["<3>cfg: bad config:", "<3>line 3: unknown key"])
    }

    func testTerminalLinesHaveTimestampAndLevel() throws {
        let capture = LogCapture()
        let logger = Logger(label: "tiltd") { TiltLogHandler(label: $0, output: capture.output(style: .terminal)) }
        logger.warning("gpsd lost")
        let line = try XCTUnwrap(capture.lines.first)
        // The wall clock is pinned to the epoch; its local rendering depends on TZ, so match the shape.
        let pattern = #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.000[+-]\d{4} warning tiltd: gpsd lost$"#
        XCTAssertNotNil(line.range(of: pattern, options: .regularExpression), line)
        XCTAssertFalse(line.hasPrefix("<"))
    }

    func testTimestampFormat() {
        var parts = tm()
        parts.tm_year = 124
        parts.tm_mon = 4
        parts.tm_mday = 1
        parts.tm_hour = 14
        parts.tm_min = 3
        parts.tm_sec = 7
        parts.tm_gmtoff = 2 * 3600
        XCTAssertEqual(LogOutput.timestamp(parts: parts, milliseconds: 42), "2024-05-01T14:03:07.042+0200")
        parts.tm_gmtoff = -(3 * 3600 + 30 * 60)
        XCTAssertEqual(LogOutput.timestamp(parts: parts, milliseconds: 999), "2024-05-01T14:03:07.999-0330")
    }

    func testLoggerMetadataAndErrorAreWritten() {
        let capture = LogCapture()
        var logger = Logger(label: "hub") { TiltLogHandler(label: $0, output: capture.output(style: .journal)) }
        logger[metadataKey: "client"] = "7"
        logger.info("joined", metadata: ["client": "8"])
        logger.error("send failed", error: POSIXError(.EPIPE))
        XCTAssertEqual(capture.lines.first, "<6>hub: joined client=8")
        XCTAssertEqual(capture.lines.count, 2)
        XCTAssertTrue(capture.lines[1].hasPrefix("<3>hub: send failed client=7 error="), capture.lines[1])
    }

    func testLevelBelowThresholdIsDropped() {
        let capture = LogCapture()
        let logger = Logger(label: "x") { TiltLogHandler(label: $0, output: capture.output(style: .journal)) }
        logger.debug("hidden")
        logger.info("shown")
        XCTAssertEqual(capture.lines, ["<6>x: shown"])
    }

    /// A device failing at 60 Hz for 3 s: 5 lines, then one summary when the window is over.
    func testRepeatsFromOneCallSiteAreSummarised() {
        let capture = LogCapture()
        let output = capture.output(style: .journal, limit: RepeatLimit(burst: 5, window: .seconds(10)))
        let logger = Logger(label: "iio") { TiltLogHandler(label: $0, output: output) }
        for sample in 0..<180 {
            logger.error("read failed at sample \(sample)")  // one call site, changing text
            capture.advance(seconds: 1.0 / 60)
        }
        XCTAssertEqual(capture.lines, (0..<5).map { "<3>iio: read failed at sample \($0)" })

        capture.advance(seconds: 10)
        logger.info("device back")
        XCTAssertEqual(
            Array(capture.lines.dropFirst(5)),
            [
                "<3>175 more lines from the same statement held back in 10 s, the last: iio: read failed at sample 179",
                "<6>iio: device back",
            ])
    }

    func testDifferentCallSitesAreCountedSeparately() {
        let capture = LogCapture()
        let output = capture.output(style: .journal, limit: RepeatLimit(burst: 2, window: .seconds(10)))
        let logger = Logger(label: "a") { TiltLogHandler(label: $0, output: output) }
        for _ in 0..<4 {
            logger.warning("first")
            logger.warning("second")
        }
        XCTAssertEqual(capture.lines, ["<4>a: first", "<4>a: second", "<4>a: first", "<4>a: second"])
    }

    func testFlushWritesPendingSummaryAndResets() {
        let capture = LogCapture()
        let output = capture.output(style: .terminal, limit: RepeatLimit(burst: 1, window: .seconds(5)))
        let logger = Logger(label: "gps") { TiltLogHandler(label: $0, output: output) }
        for _ in 0..<4 { logger.warning("no fix") }
        XCTAssertEqual(capture.lines.count, 1)
        output.flushRepeats()
        XCTAssertEqual(capture.lines.count, 2)
        XCTAssertTrue(
            capture.lines[1].hasSuffix(" warning last message repeated 3 more times in 5 s: gps: no fix"),
            capture.lines[1])
        output.flushRepeats()
        XCTAssertEqual(capture.lines.count, 2, "a second flush has nothing to report")
        logger.warning("no fix")
        XCTAssertEqual(capture.lines.count, 3, "after a flush the call site starts a fresh window")
    }

    func testNewWindowLetsBurstThroughAgain() {
        var limiter = RepeatLimiter(limit: RepeatLimit(burst: 2, window: .seconds(1)))
        let second: Int64 = 1_000_000_000
        let emitted = (0..<4).map { limiter.admit(key: "k", message: "m", priority: 3, now: Int64($0)).emit }
        XCTAssertEqual(emitted, [true, true, false, false])
        let next = limiter.admit(key: "k", message: "m", priority: 3, now: second + 10)
        XCTAssertTrue(next.emit)
        XCTAssertEqual(next.summaries.map(\.suppressed), [2])
    }

    func testKeyCountIsBounded() {
        var limiter = RepeatLimiter(limit: .standard, maximumKeys: 3)
        for key in 0..<10 {
            XCTAssertTrue(limiter.admit(key: "k\(key)", message: "m", priority: 6, now: 5).emit)
        }
        XCTAssertEqual(limiter.trackedKeys, 3)
    }

    func testNoLimitWritesEverything() {
        let capture = LogCapture()
        let output = capture.output(style: .journal, limit: nil)
        let logger = Logger(label: "x") { TiltLogHandler(label: $0, output: output) }
        for _ in 0..<50 { logger.error("e") }
        XCTAssertEqual(capture.lines.count, 50)
    }

    func testStyleDetectionComparesJournalStreamWithTheDescriptor() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-log-\(UUID().uuidString)").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(fd, 0)
        defer { close(fd); unlink(path) }
        var info = stat()
        XCTAssertEqual(fstat(fd, &info), 0)
        let matching = "\(info.st_dev):\(info.st_ino)"
        XCTAssertEqual(LogOutputStyle.detect(environment: ["JOURNAL_STREAM": matching], descriptor: fd), .journal)
        XCTAssertEqual(
            LogOutputStyle.detect(environment: ["JOURNAL_STREAM": "\(info.st_dev):\(info.st_ino + 1)"], descriptor: fd),
            .terminal)
        XCTAssertEqual(LogOutputStyle.detect(environment: ["JOURNAL_STREAM": "garbage"], descriptor: fd), .terminal)
        XCTAssertEqual(LogOutputStyle.detect(environment: [:], descriptor: fd), .terminal)
    }

    /// `[log] style`: a named style wins over detection, and a reload switches a running output.
    func testConfiguredStyleAndItsChangeOnReload() {
        XCTAssertEqual(LogOutputStyle(setting: "journal"), .journal)
        XCTAssertEqual(LogOutputStyle(setting: "terminal"), .terminal)
        let capture = LogCapture()
        let output = capture.output(style: .terminal)
        let logger = Logger(label: "tiltd") { TiltLogHandler(label: $0, output: output) }
        logger.info("a")
        output.style = .journal
        logger.info("b")
        XCTAssertEqual(capture.lines.count, 2, "\(capture.lines)")
        XCTAssertTrue(capture.lines.first?.hasSuffix(" info tiltd: a") ?? false, "\(capture.lines)")
        XCTAssertEqual(capture.lines.last, "<6>tiltd: b")
    }

    /// The real stderr writer: lines land whole in the file behind the descriptor.
    func testWriteAllWritesWholeText() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("tiltd-log-\(UUID().uuidString)").path
        let fd = open(path, O_CREAT | O_RDWR | O_CLOEXEC, 0o600)
        defer { close(fd); unlink(path) }
        let text = String(repeating: "<6>x: line\n", count: 1000)
        LogOutput.writeAll(fd, text)
        XCTAssertEqual(try String(contentsOfFile: path, encoding: .utf8), text)
    }
}
