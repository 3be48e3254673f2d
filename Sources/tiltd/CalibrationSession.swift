// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltPlatform
import TiltSensors
import TiltService

/// Options every calibration step takes.
struct CalibrationOptions: ParsableArguments {
    @OptionGroup var options: ConfigOptions

    @Option(help: "Use a recording (tiltd's CSV format, raw samples) instead of the live IMU.")
    var replay: String?

    @Flag(help: "Print the result without writing the calibration file.")
    var dryRun = false
}

/// What every step needs: the loaded config, where to write, and a way to stream samples.
struct CalibrationSession {
    let config: Configuration
    let file: String
    let replay: String?
    let dryRun: Bool
    let interactive: Bool
    let logger: Logger

    init(_ o: CalibrationOptions) throws {
        config = try o.options.load()
        guard let f = config.calibrationFile else {
            throw ValidationFailure(message: "tiltd calibrate: the config names no calibration file")
        }
        // The calibration file is rewritten whole; refuse to aim that at the user's main config.
        let real = { (p: String) in URL(fileURLWithPath: p).resolvingSymlinksInPath().standardizedFileURL.path }
        if real(f) == real(o.options.config) {
            throw ValidationFailure(
                message:
                    "tiltd calibrate: [calibration] file points at the main config \(o.options.config); name a separate file"
            )
        }
        file = f
        replay = o.replay
        dryRun = o.dryRun
        interactive = o.replay == nil && isatty(STDOUT_FILENO) != 0
        LoggingSystem.bootstrap { StreamLogHandler.standardError(label: $0) }
        logger = makeLogger("tiltd", level: config.log.level)
    }

    var isLive: Bool { replay == nil }
    var sourceName: String { replay.map { "recording \(PathName.lastComponent(of: $0))" } ?? "live IMU" }

    /// Streams raw samples to `handle` until it returns true or the source ends.
    /// Returns false when the source ended (a recording ran out).
    func stream(_ handle: @escaping (IMUSample) -> Bool) throws -> Bool {
        let frontEnd = SampleFrontEnd(mount: config.imu.mountMatrix)
        return try run(SampleLoop(handle: { handle(frontEnd.mounted($0)) }))
    }

    /// Streams magnetometer samples (mounted, not calibrated) to `field` and IMU samples to
    /// `sample` until either returns true or the source ends. A magnetometer that cannot be
    /// opened before any field arrived ends the stream with its status.
    func streamFields(sample: @escaping (IMUSample) -> Bool, field: @escaping (MagSample) -> Bool) throws -> Bool {
        let frontEnd = SampleFrontEnd(mount: config.imu.mountMatrix)
        let loop = SampleLoop(handle: { sample(frontEnd.mounted($0)) })
        loop.handleField = { field(frontEnd.mounted($0)) }
        loop.watched = SourceStatus.magnetometerSource
        return try run(loop)
    }

    private func run(_ loop: SampleLoop) throws -> Bool {
        let source: any SampleSource
        if let replay {
            guard FileManager.default.fileExists(atPath: replay) else {
                throw ValidationFailure(message: "tiltd calibrate: \(replay): no such file")
            }
            source = ReplaySource(path: replay, speed: nil)
        } else {
            source = try DeviceSourceFactory.make(config.imu, logger: logger)
        }
        // The config's mount matrix, as the daemon applies it (SampleFrontEnd): calibration is
        // measured in the frame the daemon reports. Callbacks come one at a time (see `SampleLoop`),
        // though the callback's type must be `@Sendable` for the daemon's threaded sources.
        nonisolated(unsafe) let loop = loop
        do {
            try source.run(stop: loop.stop) { loop.receive($0) }
        } catch {
            throw ValidationFailure(message: "tiltd calibrate: \(error)")
        }
        if let failure = loop.failure { throw ValidationFailure(message: "tiltd calibrate: \(failure)") }
        return loop.finishedByHandler
    }

    /// Applies `change` to the calibration file (unless --dry-run) and says so.
    func save(_ keys: String, note: String, _ change: @escaping (inout CalibrationFile.Contents) -> Void) throws {
        if dryRun { print("dry run: \(keys) not written (would go to \(file))"); return }
        let stamp = Date.now.formatted(.iso8601)
        do {
            try CalibrationFile.update(
                path: file, note: "\(keys) by `tiltd calibrate` at \(stamp) from the \(sourceName); \(note)", change)
        } catch {
            throw ValidationFailure(message: "tiltd calibrate: cannot write \(file): \(error)")
        }
        print("wrote \(keys) to \(file)")
    }

    /// A line that replaces itself on a terminal and is printed only on change otherwise.
    func status(_ line: String, last: inout String) {
        guard line != last else { return }
        last = line
        if interactive {
            // Unbuffered write: print() may hold a line without a newline back.
            StandardStream.output.write(("\r\u{1B}[K" + line).utf8)
        }
    }

    func endStatus(_ last: inout String) {
        if interactive && !last.isEmpty { print("") }
        last = ""
    }
}

/// Drives a blocking source with a per-sample handler.
///
/// Not `Sendable`, and no lock: `stream` runs the source inline, so the IMU's callbacks come on
/// the calling thread, and an IIO source's magnetometer loop calls from its own thread only
/// under the lock that serialises the source's outputs (`IIOSource`): callbacks never overlap.
/// The callback type is `@Sendable` only because the daemon's sources call from threads of their
/// own, so `stream` alone vouches for it (`nonisolated(unsafe)` there). The handlers are closures
/// over the calibration's mutable state, which a lock could not hand back to the caller afterwards.
final class SampleLoop {
    let stop = StopSignal()
    let handle: (IMUSample) -> Bool
    /// For `tiltd calibrate mag`: magnetometer samples; nil ignores them.
    var handleField: ((MagSample) -> Bool)?
    /// The source whose trouble before its first output ends the stream ("imu", or "magnetometer"
    /// for a calibration of the magnetometer); other sources' statuses are only shown.
    var watched = "imu"
    var finishedByHandler = false
    var failure: String?
    var sawSample = false
    var sawField = false

    init(handle: @escaping (IMUSample) -> Bool) { self.handle = handle }

    func receive(_ output: SourceOutput) {
        if stop.isStopped { return }
        switch output {
        case .sample(let s):
            sawSample = true
            if handle(s) { finishedByHandler = true; stop.stop() }
        case .magnetometer(let m):
            // The IMU calibrations use the accelerometer and gyroscope only.
            guard let handleField else { return }
            sawField = true
            if handleField(m) { finishedByHandler = true; stop.stop() }
        case .status(let st):
            // The magnetometer's streaming statuses say what it delivers (rate_hz) and why.
            if st.state == .streaming, handleField != nil, st.source == SourceStatus.magnetometerSource {
                let rate = st.rateHz.map { " at \(cFormat("%.4g", $0)) Hz" } ?? ""
                print("\(st.source): \(st.device ?? "?")\(rate): \(st.message)")
            }
            // A device that cannot be opened would retry forever: say why and end. Once samples
            // flowed, a lost device is retried by the source and the calibration carries on.
            if st.state == .retrying {
                let flowed = st.source == SourceStatus.magnetometerSource ? sawField : sawSample
                if st.source != watched {
                    if handleField != nil {
                        StandardStream.error.write("\n\(st.source): \(st.message)\n".utf8)
                    }
                } else if flowed {
                    StandardStream.error.write("\n\(st.source): \(st.message); retrying in \(st.retryIn ?? 0) s\n".utf8)
                } else {
                    failure = "\(st.source): \(st.message)"
                    stop.stop()
                }
            }
        }
    }
}

func vec(_ v: Vector3, _ digits: Int = 6) -> String {
    "[" + v.array.map { cFormat("%.\(digits)f", $0) }.joined(separator: ", ") + "]"
}

// MARK: - gyro
