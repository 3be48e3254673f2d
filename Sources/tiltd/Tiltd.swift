import ArgumentParser
import Foundation
import Logging
import ServiceLifecycle
import TiltCore
import TiltSensors
import TiltService

@main
struct Tiltd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tiltd",
        abstract: "IMU attitude, tilt game and places daemon for Linux.",
        version: TiltdVersion.string,
        subcommands: [Run.self, Reload.self, Record.self, CheckConfig.self, Calibrate.self, Estimate.self, Monitor.self, Web.self, Plot.self]
    )
}

/// Options every subcommand that reads the config takes.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: "Configuration file.")
    var config: String = Configuration.defaultPath

    func load() throws -> Configuration {
        do {
            return try Configuration.load(path: config)
        } catch {
            throw ValidationFailure(message: error.description)
        }
    }
}

/// An error printed as-is, exit status 1.
struct ValidationFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

func makeLogger(_ label: String, level: String) -> Logger {
    var l = Logger(label: label)
    l.logLevel = Logger.Level(rawValue: level) ?? .info
    return l
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

    @Option(help: "Replay a GPX track as GPS fixes instead of reading gpsd.")
    var gpx: String?

    @Option(help: "GPX replay speed factor (default: the --speed of the IMU replay, or 1).")
    var gpxSpeed: Double?

    func run() async throws {
        // First, before any thread starts: the sockets systemd passed (this clears LISTEN_*).
        let inherited: [InheritedSocket]
        do { inherited = try SocketActivation.listenFDs() } catch { throw ValidationFailure(message: "tiltd: \(error)") }
        let config = try options.load()
        let level = Logger.Level(rawValue: config.logLevel) ?? .info
        let logOutput = TiltLogHandler.bootstrap(level: level)
        let logger = makeLogger("tiltd", level: config.logLevel)
        var fd: CInt?
        if !inherited.isEmpty {
            guard let s = inherited.first(where: { $0.name == "tiltd" }) ?? inherited.first, s.isListeningUnixStream else {
                throw ValidationFailure(message: "tiltd: systemd passed \(inherited.count) socket(s) but none is a listening Unix stream socket")
            }
            fd = s.fd
        }
        let input: Daemon.Input = replay.map { .replay(path: $0, speed: fast ? nil : speed) } ?? .device
        let gpxInput = gpx.map { (path: $0, speed: fast ? nil : (gpxSpeed ?? speed)) }
        let daemon = Daemon(config: config, input: input, gpx: gpxInput, exitWhenDone: exitWhenDone, logger: logger,
                            inheritedFD: fd, logOutput: logOutput)
        do {
            let group = ServiceGroup(configuration: .init(
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
    static let configuration = CommandConfiguration(abstract: "Record IMU samples (SI units, before calibration) to a CSV file.")

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
        let logger = makeLogger("tiltd", level: config.logLevel)
        let source: any SampleSource = try replay.map { ReplaySource(path: $0, speed: nil) }
            ?? DeviceSourceFactory.make(config.imu, logger: logger)
        let recorder = try Recorder(path: out)
        let stop = StopSignal()
        let box = RecordState(recorder: recorder, seconds: seconds, stop: stop)
        try source.run(stop: stop) { output in
            switch output {
            case .sample(let s): box.add(s)
            case .status(let st): FileHandle.standardError.write(Data("\(st.source) \(st.state.rawValue): \(st.message)\n".utf8))
            }
        }
        try recorder.close()
        if let e = box.error { throw e }
        print("recorded \(recorder.count) samples to \(out)")
    }
}

/// The recorder's state, touched only by the source's thread.
final class RecordState: @unchecked Sendable {
    let recorder: Recorder
    let seconds: Double
    let stop: StopSignal
    var first: Nanoseconds?
    var error: Error?
    init(recorder: Recorder, seconds: Double, stop: StopSignal) { self.recorder = recorder; self.seconds = seconds; self.stop = stop }
    func add(_ s: IMUSample) {
        if first == nil { first = s.t }
        if Double(s.t - first!) * 1e-9 >= seconds { stop.stop(); return }
        do { try recorder.append(s) } catch { self.error = error; stop.stop() }
    }
}

struct CheckConfig: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check-config", abstract: "Validate the configuration and print the effective values.")

    @OptionGroup var options: ConfigOptions

    func run() throws {
        let c = try options.load()
        print(EffectiveConfig.render(c))
    }
}
