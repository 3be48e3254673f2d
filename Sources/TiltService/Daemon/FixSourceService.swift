// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import ServiceLifecycle
import Synchronization
import TiltConfig
import TiltCore
import TiltPlatform
import TiltRecordings
import TiltSensors

/// The GPS fix source as a service: gpsd (or a GPX replay) on its own thread, fixes handed to
/// the engine. A reload that enables, disables or moves gpsd replaces the source.
public final class FixSourceService: Service, FixSourceControl {
    let engine: EngineHandle
    /// True when fixes come from `--gpx` (a reload does not change that source).
    public let isReplay: Bool
    /// The running source's thread; replaced only on `control` (serial).
    private let running = Mutex<(source: any FixSource, thread: SourceThread)?>(nil)
    private let control = DispatchQueue(label: "tiltd.gps")
    /// The source to start with.
    private let first: (any FixSource)?

    /// A service starting `first` (nil: none until a reload enables `[gps]`).
    public init(first: (any FixSource)?, isReplay: Bool, engine: EngineHandle) {
        self.first = first; self.isReplay = isReplay; self.engine = engine
    }

    /// The source for the configuration: a GPX replay (`--gpx`) or gpsd when `[gps]` enables it.
    public static func makeFirst(
        gps: Configuration.GPS, gpx: (path: String, speed: Double?)?
    ) throws(ConfigError) -> (any FixSource)? {
        guard let gpx else {
            return gps.enabled ? GPSDSource(config: GPSDConfig(host: gps.host, port: Int(gps.port))) : nil
        }
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(gpx.path, limit: BoundedFile.placesLimit) } catch {
            throw ConfigError(file: gpx.path, line: nil, key: "", message: "cannot read the GPX file: \(error)")
        }
        let fixes: [Fix]
        do { fixes = try GPX.parseFixes(bytes) } catch {
            throw ConfigError(file: gpx.path, line: nil, key: "", message: "\(error)")
        }
        return FixReplaySource(
            fixes: fixes, name: PathName.lastComponent(of: gpx.path),
            pace: gpx.speed.map { .realTime(factor: $0) } ?? .asFastAsPossible)
    }

    /// A gpsd client for `gps`, not started; nil when `[gps]` is disabled.
    public func prepare(_ gps: Configuration.GPS) -> (any FixSource)? {
        gps.enabled ? GPSDSource(config: GPSDConfig(host: gps.host, port: Int(gps.port))) : nil
    }

    /// Stops the running source and starts `source` (nil: none), on the service's own queue.
    public func replace(with source: (any FixSource)?) {
        control.async { [self] in
            let wasRunning = stopRunning()
            if let source {
                start(source)
            } else if wasRunning {
                engine.execute {
                    $0.ingest(
                        status: SourceStatus(source: "gps", state: .finished, message: "stopped: [gps] is disabled"))
                }
            }
        }
    }

    /// Runs the first source until graceful shutdown, then stops whatever runs.
    public func run() async throws {
        if let first { control.sync { start(first) } }
        try? await gracefulShutdown()
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            control.async { [self] in
                stopRunning()
                done.resume()
            }
        }
    }

    /// Stops the running source, if any; says whether there was one.
    @discardableResult
    private func stopRunning() -> Bool {
        guard
            let thread = running.withLock({ r -> SourceThread? in
                defer { r = nil }; return r?.thread
            })
        else { return false }
        thread.shutdown()
        return true
    }

    private func start(_ source: any FixSource) {
        let thread = SourceThread(name: "tiltd-gps")
        running.withLock { $0 = (source, thread) }
        let engine = self.engine
        thread.start { stop in
            do {
                try source.run(stop: stop) { output in
                    switch output {
                    case .fix(let f): engine.execute { $0.ingest(fix: f) }
                    case .status(let st): engine.execute { $0.ingest(status: st) }
                    }
                }
            } catch {
                let st = SourceStatus(source: "gps", state: .finished, message: "\(error)")
                engine.execute { $0.ingest(status: st) }
            }
        }
    }
}
