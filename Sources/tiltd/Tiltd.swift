// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import Logging
import ServiceLifecycle
import Synchronization
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltLogging
import TiltPlatform
import TiltProtocol
import TiltSensors
import TiltService
import TiltSystemd

@main
struct Tiltd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiltd",
        abstract: "IMU attitude, tilt game and places daemon for Linux.",
        discussion: Tiltd.discussion,
        version: TiltdVersion.string,
        subcommands: [
            Run.self, Reload.self, Record.self, CheckConfig.self, Calibrate.self, Estimate.self, Judge.self,
            Import.self, Monitor.self, MQTTBridgeCommand.self, Web.self, Plot.self, Schema.self,
        ]
    )

    /// `tiltd web …` becomes `tiltd-web …` before anything is parsed (see `Web`); every other
    /// command is parsed as usual.
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        if arguments.first == "web" {
            do {
                try Web.exec(Array(arguments.dropFirst()))
            } catch {
                exit(withError: error)
            }
        }
        await main(arguments)
    }
}

extension Tiltd {
    /// The overview `tiltd --help` and tiltd(8) start with.
    static let discussion = """
        tiltd reads an IMU, and a magnetometer beside it if there is one, through the kernel's IIO \
        interface (libiio) and, optionally, GPS fixes from gpsd; it fuses attitude and a heading, \
        runs the tilt game, watches places, and streams JSON lines \
        on a Unix socket (/run/tiltd/tiltd.sock) to any number of clients, of which trusted ones \
        may send commands. Under systemd it runs as tiltd.service, socket-activated by \
        tiltd.socket, with Type=notify readiness, STATUS= and the watchdog; SIGHUP (systemctl \
        reload) re-reads the configuration, keeping the running one if the new one is invalid. \
        Files: /etc/tiltd/tiltd.toml (configuration, tiltd.toml(5)), /etc/tiltd/calibration.toml \
        (written by tiltd calibrate), /var/lib/tiltd/tiltd.sqlite (rounds, visits, credits, \
        quests). The socket protocol is in tiltd-protocol(7). Times: the t_ns of IMU lines \
        (attitude, sample, game) is CLOCK_MONOTONIC in nanoseconds and never goes backwards (a \
        device clock that steps is re-anchored and reported once as a status line with state \
        clock_step); GPS lines carry GPS time since the Unix epoch; with --replay, the \
        recording's own time.
        """
}

struct Run: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the daemon.")

    @OptionGroup var options: ConfigOptions

    @Option(help: "Replay a recording instead of reading the IMU.")
    var replay: String?

    @Option(help: "Replay speed factor (1 = real time).")
    var speed: Double = 1

    @Flag(help: "Replay as fast as possible.")
    var fast = false

    @Flag(help: "Exit when the replay ends (default: keep serving).")
    var exitWhenDone = false

    @Flag(
        help:
            "Replay: after the first sample, wait until a client starts a round (game.start), then go on; makes --fast replays playable."
    )
    var holdUntilRound = false

    @Option(help: "Replay a GPX track as GPS fixes instead of reading gpsd.")
    var gpx: String?

    @Option(help: "GPX replay speed factor (default: the --speed of the IMU replay, or 1).")
    var gpxSpeed: Double?

    func run() async throws {
        // First, before any thread starts: the sockets systemd passed (this clears LISTEN_*).
        let inherited: [InheritedSocket]
        do { inherited = try SocketActivation.listenFDs() } catch {
            throw ValidationFailure(message: "tiltd: \(error)")
        }
        let config = try options.load()
        let level = Logger.Level(rawValue: config.log.level) ?? .info
        let logOutput = TiltLogHandler.bootstrap(
            output: .standardError(style: LogOutputStyle(setting: config.log.style)), level: level)
        let logger = makeLogger("tiltd", level: config.log.level)
        var fd: CInt?
        if !inherited.isEmpty {
            guard let s = inherited.first(where: { $0.name == "tiltd" }) ?? inherited.first, s.isListeningUnixStream
            else {
                throw ValidationFailure(
                    message:
                        "tiltd: systemd passed \(inherited.count) socket(s) but none is a listening Unix stream socket")
            }
            fd = s.fd
        }
        if holdUntilRound && replay == nil {
            throw ValidationFailure(message: "tiltd run: --hold-until-round needs --replay")
        }
        // A mistyped recording is an error now, not a source that "finished" at once (the daemon
        // then served nothing, and --exit-when-done exited 0).
        for (flag, path) in [("--replay", replay), ("--gpx", gpx)] {
            guard let path else { continue }
            var st = stat()
            guard stat(path, &st) == 0, access(path, R_OK) == 0 else {
                throw ValidationFailure(message: "tiltd run: \(flag) \(path): \(SystemError.text(errno))")
            }
            guard (st.st_mode & S_IFMT) != S_IFDIR else {
                throw ValidationFailure(message: "tiltd run: \(flag) \(path): is a directory")
            }
        }
        let input: Daemon.Input =
            replay.map { .replay(path: $0, speed: fast ? nil : speed, holdUntilRound: holdUntilRound) } ?? .device
        let gpxInput = gpx.map { (path: $0, speed: fast ? nil : (gpxSpeed ?? speed)) }
        let daemon = Daemon(
            config: config, input: input, gpx: gpxInput, exitWhenDone: exitWhenDone, logger: logger,
            inheritedFD: fd, logOutput: logOutput)
        do {
            let group = ServiceGroup(
                configuration: .init(
                    services: try await daemon.services(),
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            try await group.run()
        } catch let e as SocketServer.StartError {
            throw ValidationFailure(message: "tiltd: \(e)")
        } catch let e as ConfigError {
            throw ValidationFailure(message: "tiltd: \(e)")
        }
    }
}

struct Record: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Record IMU samples (SI units, before calibration) to a CSV file.")

    @OptionGroup var options: ConfigOptions

    @Option(help: "How long to record, seconds.")
    var seconds: Double

    @Option(help: "Output file.")
    var out: String

    @Option(help: "Record from a recording instead of the IMU (e.g. to cut one).")
    var replay: String?

    func run() async throws {
        var config = Configuration()
        if replay == nil || FileManager.default.fileExists(atPath: options.config) { config = try options.load() }
        let logger = makeLogger("tiltd", level: config.log.level)
        let source: any SampleSource =
            try replay.map { ReplaySource(path: $0, speed: nil) }
            ?? DeviceSourceFactory.make(config.imu, logger: logger)
        let stop = StopSignal()
        let box = RecordState(recorder: try Recorder(path: out), seconds: seconds, stop: stop)
        try source.run(stop: stop) { output in
            switch output {
            case .sample(let s): box.add(s)
            case .magnetometer(let m): box.add(m)
            case .status(let st):
                StandardStream.error.write("\(st.source) \(st.state.rawValue): \(st.message)\n".utf8)
            }
        }
        let count = try box.close()
        if let e = box.error { throw e }
        let fields = box.fieldCount
        print("recorded \(count) samples\(fields > 0 ? " and \(fields) magnetometer samples" : "") to \(out)")
    }
}

/// The recorder's state. The source delivers on the calling thread, so the lock is never
/// contended; it is what lets the compiler check the state is not shared.
final class RecordState: Sendable {
    let seconds: Double
    let stop: StopSignal
    private struct State {
        let recorder: Recorder
        var first: Nanoseconds?
        var error: Error?
    }
    private let state: Mutex<State>
    init(recorder: sending Recorder, seconds: Double, stop: StopSignal) {
        state = Mutex(State(recorder: recorder)); self.seconds = seconds; self.stop = stop
    }
    var error: Error? { state.withLock { $0.error } }
    /// Magnetometer samples written (after `close`).
    var fieldCount: Int { state.withLock { $0.recorder.fieldCount } }
    /// Closes the file; returns the samples written.
    func close() throws -> Int {
        try state.withLock {
            try $0.recorder.close(); return $0.recorder.count
        }
    }
    /// A magnetometer sample, for the row of the next IMU sample at or after it (recording v2).
    func add(_ m: MagSample) {
        state.withLock { st in st.recorder.append(m) }
    }
    func add(_ s: IMUSample) {
        state.withLock { st in
            if st.first == nil { st.first = s.t }
            if Double(s.t - st.first!) * 1e-9 >= seconds { stop.stop(); return }
            do { try st.recorder.append(s) } catch { st.error = error; stop.stop() }
        }
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check-config", abstract: "Validate the configuration and print the effective values.")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let c = try options.load()
        // What the daemon reads at start beyond the config itself (the places file), so a
        // config that passes here also starts.
        try ReferencedFiles.check(c)
        print(EffectiveConfig.render(c))
    }
}
