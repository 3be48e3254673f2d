// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging
import Synchronization
import TiltPlatform

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The destination shared by every logger of the process: style, writer, repeat limiter and clocks.
///
/// One instance serialises all log lines under its lock, so lines from different threads never interleave
/// and the repeat counts are process-wide.
public final class LogOutput: Sendable {
    /// The line format; `[log] style` on reload changes it (an atomic: read under the limiter's
    /// lock, written from the engine's loop).
    public var style: LogOutputStyle {
        get { styleIsJournal.load(ordering: .relaxed) ? .journal : .terminal }
        set { styleIsJournal.store(newValue == .journal, ordering: .relaxed) }
    }
    private let styleIsJournal: Synchronization.Atomic<Bool>
    private let sink: @Sendable (String) -> Void
    private let monotonicNanoseconds: @Sendable () -> Nanoseconds
    private let wallClock: @Sendable () -> timespec
    /// The repeat limiter (nil: none); its lock also serialises the lines.
    private let limiter: Mutex<RepeatLimiter?>
    /// Index in `Logger.Level.allCases` of the level set after start, or -1 (an atomic: read
    /// on every log call of every thread).
    private let overrideIndex = Atomic<Int>(-1)

    /// A level for every logger of the process, set after start (`[log] level` on reload); nil
    /// leaves each logger its own.
    public var levelOverride: Logger.Level? {
        get {
            let i = overrideIndex.load(ordering: .relaxed)
            return i >= 0 ? Logger.Level.allCases[i] : nil
        }
        set {
            overrideIndex.store(newValue.flatMap { Logger.Level.allCases.firstIndex(of: $0) } ?? -1, ordering: .relaxed)
        }
    }

    /// Creates an output.
    ///
    /// - Parameters:
    ///   - style: line format.
    ///   - repeatLimit: per-call-site limit, or `nil` to write every line.
    ///   - monotonicNanoseconds: clock for the repeat windows (default `CLOCK_MONOTONIC`).
    ///   - wallClock: clock for terminal timestamps (default `CLOCK_REALTIME`).
    ///   - write: receives finished lines, each ending in a newline.
    public init(
        style: LogOutputStyle,
        repeatLimit: RepeatLimit? = .standard,
        monotonicNanoseconds: @escaping @Sendable () -> Nanoseconds = LogOutput.monotonicNow,
        wallClock: @escaping @Sendable () -> timespec = LogOutput.realtimeNow,
        write: @escaping @Sendable (String) -> Void
    ) {
        self.styleIsJournal = Synchronization.Atomic(style == .journal)
        self.limiter = Mutex(repeatLimit.map { RepeatLimiter(limit: $0) })
        self.monotonicNanoseconds = monotonicNanoseconds
        self.wallClock = wallClock
        self.sink = write
    }

    /// stderr in the style `$JOURNAL_STREAM` calls for, with the standard repeat limit.
    public static func standardError(style: LogOutputStyle = .detect()) -> LogOutput {
        LogOutput(style: style) { line in writeAll(STDERR_FILENO, line) }
    }

    /// `CLOCK_MONOTONIC` in nanoseconds.
    public static let monotonicNow: @Sendable () -> Nanoseconds = { MonotonicClock.nanoseconds() }

    /// `CLOCK_REALTIME`.
    public static let realtimeNow: @Sendable () -> timespec = { SystemClock.timespecNow() }

    /// Writes one record: repeat limiting, formatting, output.
    func emit(
        label: String, level: Logger.Level, message: String, metadata: Logger.Metadata, callSite: String
    ) {
        let priority = level.syslogPriority
        limiter.withLock { limiter in
            let body = Self.body(label: label, message: message, metadata: metadata)
            var text = ""
            var emitLine = true
            if limiter != nil {
                let decision = limiter!.admit(
                    key: "\(label)|\(level)|\(callSite)", message: body, priority: priority,
                    now: monotonicNanoseconds())
                for summary in decision.summaries {
                    text += format(priority: summary.priority, levelName: Self.levelName(priority), body: summary.text)
                }
                emitLine = decision.emit
            }
            if emitLine { text += format(priority: priority, levelName: level.rawValue, body: body) }
            if !text.isEmpty { sink(text) }
        }
    }

    /// Writes the summaries of all held-back repeats now. Call it periodically (e.g. with the status
    /// update) and at shutdown so a burst that stopped is still accounted for.
    public func flushRepeats() {
        limiter.withLock { limiter in
            guard let summaries = limiter?.flush(), !summaries.isEmpty else { return }
            sink(
                summaries.map { format(priority: $0.priority, levelName: Self.levelName($0.priority), body: $0.text) }
                    .joined())
        }
    }

    /// `label: message key=value …`, metadata sorted by key so lines are stable.
    static func body(label: String, message: String, metadata: Logger.Metadata) -> String {
        var line = label.isEmpty ? message : "\(label): \(message)"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(value)"
        }
        return line
    }

    private func format(priority: Int, levelName: String, body: String) -> String {
        switch style {
        case .journal:
            // journald splits the stream at newlines; each line needs its own prefix or it would be
            // logged at the default priority.
            return body.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "<\(priority)>\($0)\n" }.joined()
        case .terminal:
            return "\(Self.timestamp(wallClock())) \(levelName) \(body)\n"
        }
    }

    private static func levelName(_ priority: Int) -> String {
        switch priority {
        case 7: return "debug"
        case 6: return "info"
        case 5: return "notice"
        case 4: return "warning"
        case 3: return "error"
        default: return "critical"
        }
    }

    /// Local time with milliseconds and UTC offset, e.g. `2024-05-01T14:03:07.042+0200`.
    static func timestamp(_ time: timespec) -> String {
        var seconds = time_t(time.tv_sec)
        var parts = tm()
        localtime_r(&seconds, &parts)
        return timestamp(parts: parts, milliseconds: Int(time.tv_nsec / 1_000_000))
    }

    /// Formats broken-down time; separate from the clock so tests can check exact output.
    static func timestamp(parts: tm, milliseconds: Int) -> String {
        func pad(_ value: Int, _ width: Int) -> String {
            let digits = String(abs(value))
            return String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        let offsetMinutes = Int(parts.tm_gmtoff) / 60
        let sign = offsetMinutes < 0 ? "-" : "+"
        return "\(pad(Int(parts.tm_year) + 1900, 4))-\(pad(Int(parts.tm_mon) + 1, 2))-\(pad(Int(parts.tm_mday), 2))"
            + "T\(pad(Int(parts.tm_hour), 2)):\(pad(Int(parts.tm_min), 2)):\(pad(Int(parts.tm_sec), 2))"
            + ".\(pad(milliseconds, 3))\(sign)\(pad(abs(offsetMinutes) / 60, 2))\(pad(abs(offsetMinutes) % 60, 2))"
    }

    /// Writes the whole string (short and interrupted writes made again); drops it on other errors
    /// (there is nowhere left to report a failing stderr).
    static func writeAll(_ fd: Int32, _ text: String) {
        try? Syscall.writeAll(fd, text.utf8)
    }
}

/// The daemon's swift-log handler: journald-friendly under systemd, timestamped on a terminal, with
/// repeated lines from one call site limited (see ``RepeatLimit``).
public struct TiltLogHandler: LogHandler {
    /// The logger's label, written before each message (e.g. `tiltd.iio`).
    public let label: String
    /// Where lines go; shared by every handler made by ``bootstrap(output:level:)``.
    public let output: LogOutput
    /// Minimum level written: the output's `levelOverride` once set, else this handler's own.
    public var logLevel: Logger.Level {
        get { output.levelOverride ?? ownLevel }
        set { ownLevel = newValue }
    }
    private var ownLevel: Logger.Level
    /// Metadata attached to every line of this logger.
    public var metadata: Logger.Metadata = [:]
    /// Contextual metadata source, merged under the logger's and the call's metadata.
    public var metadataProvider: Logger.MetadataProvider?

    /// A handler writing to `output` at `logLevel` and above.
    public init(
        label: String, output: LogOutput, logLevel: Logger.Level = .info,
        metadataProvider: Logger.MetadataProvider? = nil
    ) {
        self.label = label
        self.output = output
        self.ownLevel = logLevel
        self.metadataProvider = metadataProvider
    }

    /// Gets or sets one metadata value of this logger.
    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// Writes one log event (called by `Logger` after its level check).
    public func log(event: LogEvent) {
        var merged = metadataProvider?.get() ?? [:]
        merged.merge(metadata) { _, logger in logger }
        if let extra = event.metadata { merged.merge(extra) { _, call in call } }
        if let error = event.error { merged["error"] = "\(error)" }
        output.emit(
            label: label, level: event.level, message: event.message.description, metadata: merged,
            callSite: "\(event.file):\(event.line)")
    }

    /// Installs this handler for every `Logger` of the process (once per process, as
    /// `LoggingSystem.bootstrap` allows) and returns the shared output, whose
    /// ``LogOutput/flushRepeats()`` the daemon should call periodically and at shutdown.
    @discardableResult
    public static func bootstrap(output: LogOutput = .standardError(), level: Logger.Level = .info) -> LogOutput {
        LoggingSystem.bootstrap { label in TiltLogHandler(label: label, output: output, logLevel: level) }
        return output
    }
}
