// SPDX-License-Identifier: Apache-2.0
import TiltPlatform

/// How many lines one log statement may write in a time window before its repeats are only counted.
public struct RepeatLimit: Sendable, Equatable {
    /// Lines let through per key and window.
    public var burst: Int
    /// Window length in nanoseconds.
    public var windowNanoseconds: Nanoseconds

    /// A limit of `burst` lines per `window`.
    public init(burst: Int, window: Duration) {
        let (seconds, attoseconds) = window.components
        self.burst = max(1, burst)
        // A window past Int64's nanoseconds (292 years) is that long: never a trap on a config's value.
        self.windowNanoseconds = max(1, nanoseconds(seconds: seconds, nanoseconds: attoseconds / 1_000_000_000) ?? .max)
    }

    /// 5 lines per 10 s: enough to see what is going on, while a device failing at 60 Hz writes
    /// 5 lines and one summary per 10 s instead of 600.
    public static let standard = RepeatLimit(burst: 5, window: .seconds(10))
}

/// What the limiter decided for one log line.
public struct RepeatDecision: Sendable, Equatable {
    /// Whether the line itself is written.
    public var emit: Bool
    /// Summaries of repeats that were held back and whose window has ended; write them before the line.
    public var summaries: [RepeatSummary]
}

/// "This line was held back K times": written once the window of a noisy key ends.
public struct RepeatSummary: Sendable, Equatable {
    /// The key (normally the call site) whose lines were held back.
    public var key: String
    /// How many lines were not written.
    public var suppressed: Int
    /// The last line that was not written, so the summary says what kept happening.
    public var lastMessage: String
    /// Its level's syslog priority (the summary is written at the same priority).
    public var priority: Int
    /// The window length, for the summary text.
    public var windowNanoseconds: Nanoseconds
    /// Whether every line held back was `lastMessage` word for word. One statement can log
    /// different things (a refusal's reason); then the summary must not call them repeats.
    public var allSame = true

    /// The summary text, e.g. `last message repeated 57 more times in 10 s: read failed (EIO)`, or
    /// `5 more lines from the same statement held back in 10 s, the last: …` when they differed.
    public var text: String {
        let seconds = Double(windowNanoseconds) / 1e9
        let window =
            seconds == seconds.rounded() && abs(seconds) < 1e15 ? String(Int64(saturating: seconds)) : String(seconds)
        guard allSame else {
            let lines = suppressed == 1 ? "line" : "lines"
            return
                "\(suppressed) more \(lines) from the same statement held back in \(window) s, the last: \(lastMessage)"
        }
        let times = suppressed == 1 ? "time" : "times"
        return "last message repeated \(suppressed) more \(times) in \(window) s: \(lastMessage)"
    }
}

/// Counts log lines per key and holds back repeats beyond the limit (not thread-safe: the log output
/// serialises calls under its lock).
///
/// The clock is passed in so the tests control time exactly. A held-back key's summary is produced by the
/// first log call after its window ends (from any key), or by ``flush()``: the daemon flushes on its
/// periodic status tick and at shutdown, so a burst that stops still gets its summary.
public struct RepeatLimiter: Sendable {
    private struct Entry: Sendable {
        var windowStart: Nanoseconds
        var count: Int
        var suppressed: Int
        var lastMessage: String
        var priority: Int
        var allSame = true
    }

    /// The limit applied to every key.
    public let limit: RepeatLimit
    /// Most keys tracked at once; beyond it new keys pass unlimited rather than grow memory without bound.
    public let maximumKeys: Int
    private var entries: [String: Entry] = [:]
    private var lastSweep: Nanoseconds = 0

    /// A limiter applying `limit` to each key.
    public init(limit: RepeatLimit, maximumKeys: Int = 4096) {
        self.limit = limit
        self.maximumKeys = maximumKeys
    }

    /// Number of keys currently tracked.
    public var trackedKeys: Int { entries.count }

    /// Counts one line for `key` at monotonic time `now` and says whether to write it.
    public mutating func admit(key: String, message: String, priority: Int, now: Nanoseconds) -> RepeatDecision {
        var summaries: [RepeatSummary] = []
        // Sweeping costs a pass over all keys: once per window is enough to keep summaries timely.
        if now &- lastSweep >= limit.windowNanoseconds || now < lastSweep {
            summaries = sweep(now: now, keeping: key)
            lastSweep = now
        }

        guard var entry = entries[key] else {
            if entries.count < maximumKeys {
                entries[key] = Entry(windowStart: now, count: 1, suppressed: 0, lastMessage: "", priority: priority)
            }
            return RepeatDecision(emit: true, summaries: summaries)
        }
        if now < entry.windowStart || now - entry.windowStart >= limit.windowNanoseconds {
            if let summary = summary(for: key, entry) { summaries.append(summary) }
            entry = Entry(windowStart: now, count: 0, suppressed: 0, lastMessage: "", priority: priority)
        }
        entry.count += 1
        let emit = entry.count <= limit.burst
        if !emit {
            if entry.suppressed > 0 && message != entry.lastMessage { entry.allSame = false }
            entry.suppressed += 1
            entry.lastMessage = message
            entry.priority = priority
        }
        entries[key] = entry
        return RepeatDecision(emit: emit, summaries: summaries)
    }

    /// Summaries of everything held back so far, ending all windows (for shutdown and periodic ticks).
    public mutating func flush() -> [RepeatSummary] {
        var summaries: [RepeatSummary] = []
        for (key, entry) in entries.sorted(by: { $0.key < $1.key }) {
            if let summary = summary(for: key, entry) { summaries.append(summary) }
        }
        entries.removeAll()
        return summaries
    }

    /// Ends the windows that are over: reports their held-back lines and forgets them.
    private mutating func sweep(now: Nanoseconds, keeping current: String) -> [RepeatSummary] {
        var summaries: [RepeatSummary] = []
        for (key, entry) in entries.sorted(by: { $0.key < $1.key }) where key != current {
            guard now < entry.windowStart || now - entry.windowStart >= limit.windowNanoseconds else { continue }
            if let summary = summary(for: key, entry) { summaries.append(summary) }
            entries[key] = nil
        }
        return summaries
    }

    private func summary(for key: String, _ entry: Entry) -> RepeatSummary? {
        guard entry.suppressed > 0 else { return nil }
        return RepeatSummary(
            key: key, suppressed: entry.suppressed, lastMessage: entry.lastMessage,
            priority: entry.priority, windowNanoseconds: limit.windowNanoseconds, allSame: entry.allSame)
    }
}
