// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import Synchronization
import TiltCore
import TiltPlatform
import TiltRecordings

/// Replays a tiltd recording through the same pipeline as a live device.
///
/// Paced by the recording's own timestamps (× `speed`), or as fast as the consumer takes them
/// (`speed == nil`). Sample times are shifted so the first sample is at the recording's first
/// `t_ns`, unchanged: events carry the recording's times, so a replay is repeatable.
public struct ReplaySource: SampleSource {
    /// The recording.
    public let path: String
    /// Playback speed factor; nil = as fast as possible.
    public let speed: Double?

    /// When set, the replay sends its first sample and then waits for the gate to open before
    /// going on (so a client can start a round on a `--fast` replay before it is over).
    public let gate: ReplayGate?

    /// A replay of `path` at `speed` × real time (nil: as fast as possible), held by `gate` if given.
    public init(path: String, speed: Double?, gate: ReplayGate? = nil) {
        self.path = path; self.speed = speed; self.gate = gate
    }

    /// "replay FILE" and the speed, for status lines.
    public var summary: String {
        "replay \(PathName.lastComponent(of: path))" + (speed.map { $0 == 1 ? "" : " ×\($0)" } ?? " (fast)")
    }

    /// A recording that cannot be read or has a bad row.
    public struct Error: Swift.Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Reads every sample of a recording file (a v2 file's fields dropped; see `loadRows`).
    public static func load(path: String) throws -> [IMUSample] { try loadRows(path: path).map(\.sample) }

    /// Reads every row of a recording file of either version: each IMU sample with the
    /// magnetometer field that fell on it, if any.
    public static func loadRows(path: String) throws -> [RecordingFormat.Row] {
        // Read through a file handle so a pipe or FIFO works too (`--replay /dev/stdin`).
        let data: [UInt8]
        do { data = try FileIO.readAll(path) } catch { throw Error(description: error.description) }
        let text = String(decoding: data, as: UTF8.self)
        var out: [RecordingFormat.Row] = []
        out.reserveCapacity(text.utf8.count / 60)
        var lineNo = 0
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNo += 1
            do {
                if let r = try RecordingFormat.parseRow(line: line) { out.append(r) }
            } catch {
                throw Error(description: "\(path):\(lineNo): \(error)")
            }
        }
        return out
    }

    /// Emits every sample, paced by their times, then a `finished` status; returns at the end or on `stop`.
    public func run(stop: StopSignal, emit: @escaping @Sendable (SourceOutput) -> Void) throws {
        emit(.status(SourceStatus(source: "imu", state: .starting, message: "loading \(path)", device: summary)))
        let rows = try Self.loadRows(path: path)
        let samples = rows.map(\.sample)
        let fields = rows.count { $0.field != nil }
        guard let first = samples.first else {
            emit(.status(SourceStatus(source: "imu", state: .finished, message: "recording is empty", device: summary)))
            return
        }
        let rate = samples.count > 1 ? Double(samples.count - 1) / (Double(samples.last!.t - first.t) * 1e-9) : 0
        // A recording of an accelerometer alone (empty gyro fields) says so, as the device did.
        let accelOnly = !first.hasGyro
        emit(
            .status(
                SourceStatus(
                    source: "imu", state: .streaming,
                    message: "replaying \(samples.count) samples"
                        + (fields > 0 ? " and \(fields) magnetometer samples" : "")
                        + (accelOnly ? "; \(SourceStatus.noGyroscopeNote)" : ""),
                    device: summary, rateHz: rate.isFinite ? (rate * 10).rounded() / 10 : nil,
                    hasGyroscope: accelOnly ? false : nil)))
        let clock = ContinuousClock()
        var start = clock.now
        for (i, row) in rows.enumerated() {
            let s = row.sample
            if stop.isStopped { return }
            if i == 1, let gate {
                emit(
                    .status(
                        SourceStatus(
                            source: "imu", state: .streaming,
                            message: "holding the replay after its first sample until a round starts (game.start)",
                            device: summary, rateHz: rate.isFinite ? (rate * 10).rounded() / 10 : nil)))
                while !gate.isOpen { if stop.sleep(seconds: 0.02) { return } }
                emit(
                    .status(
                        SourceStatus(
                            source: "imu", state: .streaming, message: "replaying \(samples.count) samples",
                            device: summary, rateHz: rate.isFinite ? (rate * 10).rounded() / 10 : nil)))
                start = clock.now - .nanoseconds(Int64(saturating: Double(s.t - first.t) / (speed ?? 1)))
            }
            if let speed {
                let due = start.advanced(by: .nanoseconds(Int64(saturating: Double(s.t - first.t) / speed)))
                let wait = clock.now.duration(to: due)
                if wait > .zero {
                    if stop.sleep(
                        seconds: Double(wait.components.attoseconds) * 1e-18 + Double(wait.components.seconds))
                    {
                        return
                    }
                }
            }
            emit(.sample(s))
            // The field after the sample it fell on: the estimator takes it against that
            // sample's orientation, as it took it live against the latest one.
            if let f = row.field { emit(.magnetometer(MagSample(t: s.t, field: f))) }
        }
        emit(
            .status(
                SourceStatus(
                    source: "imu", state: .finished, message: "end of recording (\(samples.count) samples)",
                    device: summary)))
    }
}

/// Opened once, from any thread: lets a held replay go on (`ReplaySource.gate`).
public final class ReplayGate: Sendable {
    private let open = Synchronization.Atomic<Bool>(false)
    /// A closed gate.
    public init() {}
    /// Lets the replay go on.
    public func openGate() { open.store(true, ordering: .releasing) }
    /// Whether the gate has been opened.
    public var isOpen: Bool { open.load(ordering: .acquiring) }
}

/// Writes samples to a recording file (`RecordingFormat`).
///
/// Magnetometer samples go on the row of the first IMU sample at or after them: each IMU sample is
/// held until the next one arrives (or the file closes), so a field that arrives just after the
/// sample it belongs with (a replay emits the sample, then its field) still lands on its row.
/// The header is written with the first block of rows: v2 (`mx,my,mz`) when a field has come by
/// then, else v1; a field that comes only later is still written on its row (both versions' readers
/// take ten-field rows).
public final class Recorder {
    private let file: FileIO.Writer
    private var buffer = ""
    private var headerWritten = false
    private var held: IMUSample?
    private var pending: [MagSample] = []
    /// Samples written.
    public private(set) var count = 0
    /// Magnetometer samples written (on rows); fields arriving faster than IMU rows keep the latest.
    public private(set) var fieldCount = 0

    /// Creates (or truncates) `path`; the banner and header follow with the first rows.
    public init(path: String) throws {
        file = try FileIO.Writer(path: path)
    }

    /// Adds one IMU sample (buffered).
    public func append(_ s: IMUSample) throws {
        if let h = held { try write(h) }
        held = s
    }

    /// Adds one magnetometer sample; it is written on the row of the first IMU sample at or after it.
    public func append(_ m: MagSample) {
        pending.append(m)
    }

    private func write(_ s: IMUSample) throws {
        let due = pending.lastIndex { $0.t <= s.t }
        let field = due.map { pending[$0].field }
        if let due { pending.removeFirst(due + 1) }
        buffer += RecordingFormat.format(s, field: field)
        buffer += "\n"
        count += 1
        if field != nil { fieldCount += 1 }
        if buffer.utf8.count > 64 * 1024 { try flush() }
    }

    /// Writes out the buffer (the header first, the first time).
    public func flush() throws {
        if !headerWritten {
            let v2 = fieldCount > 0 || !pending.isEmpty
            buffer =
                (v2 ? RecordingFormat.bannerV2 : RecordingFormat.banner) + "\n"
                + (v2 ? RecordingFormat.headerV2 : RecordingFormat.header) + "\n" + buffer
            headerWritten = true
        }
        try file.write(Array(buffer.utf8))
        buffer = ""
    }

    /// Writes the held sample, flushes and closes the file.
    public func close() throws {
        if let h = held { try write(h) }
        held = nil
        try flush()
        try file.close()
    }
}
