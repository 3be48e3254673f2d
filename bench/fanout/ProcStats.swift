// SPDX-License-Identifier: Apache-2.0
import Foundation

/// A process's CPU time and memory, read from /proc.
enum ProcStats {
    /// User + system CPU time of `pid` in seconds (fields 14 and 15 of /proc/PID/stat).
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = text.lastIndex(of: ")")
        else { return nil }
        // Fields after "(comm)" start at field 3 (state); the command name may hold spaces.
        let rest = text[text.index(after: close)...].split(separator: " ")
        guard rest.count > 13, let utime = Double(rest[11]), let stime = Double(rest[12]) else { return nil }
        return (utime + stime) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// Resident set size of `pid` in KiB (VmRSS in /proc/PID/status).
    static func rssKiB(_ pid: Int32) -> Int? { statusKiB(pid, "VmRSS:") }

    /// A KiB figure of /proc/PID/status, by its key ("VmRSS:", "VmHWM:").
    static func statusKiB(_ pid: Int32, _ key: String) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            return line.split(separator: " ").dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    /// The 1-minute load average (other work on the machine competes for the same cores).
    static func loadAverage() -> Double {
        let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
        return text.split(separator: " ").first.flatMap { Double($0) } ?? .nan
    }

    /// CPU seconds (user + system) used by this process so far.
    static func selfCPUSeconds() -> Double {
        var u = rusage()
        getrusage(RUSAGE_SELF.rawValue, &u)
        func s(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) * 1e-6 }
        return s(u.ru_utime) + s(u.ru_stime)
    }
}
