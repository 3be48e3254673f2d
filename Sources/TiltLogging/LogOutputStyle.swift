// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How log lines are written.
public enum LogOutputStyle: Sendable, Equatable {
    /// For journald reading stderr: `<N>` syslog-priority prefix (the sd-daemon(3) convention), no timestamp
    /// (the journal stamps each entry itself).
    case journal
    /// For a person at a terminal or a log file: local timestamp with milliseconds, level, label.
    case terminal

    /// Picks the style for the given stderr: `.journal` when `$JOURNAL_STREAM` names the very file stderr
    /// is (systemd sets it to "device:inode" of the stream it connected), `.terminal` otherwise.
    ///
    /// Comparing device and inode, rather than only checking that the variable exists, keeps a shell
    /// started from a service (which inherits the variable) from writing `<N>` prefixes to its terminal.
    public static func detect(
        environment: [String: String] = ProcessInfo.processInfo.environment,
        descriptor: Int32 = STDERR_FILENO
    ) -> LogOutputStyle {
        guard let value = environment["JOURNAL_STREAM"] else { return .terminal }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else {
            return .terminal
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return .terminal }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode ? .journal : .terminal
    }
}

extension LogOutputStyle {
    /// The style `[log] style` names: "journal", "terminal", or "auto" (`detect()`).
    public init(setting: String) {
        switch setting {
        case "journal": self = .journal
        case "terminal": self = .terminal
        default: self = .detect()
        }
    }
}

extension Logger.Level {
    /// The syslog priority (0 emerg … 7 debug) journald records for this level.
    ///
    /// swift-log has no alert/emergency; `trace` has no syslog counterpart and shares `debug`.
    public var syslogPriority: Int {
        switch self {
        case .trace, .debug: return 7
        case .info: return 6
        case .notice: return 5
        case .warning: return 4
        case .error: return 3
        case .critical: return 2
        }
    }
}
