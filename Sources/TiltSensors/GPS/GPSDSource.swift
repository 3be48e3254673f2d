// SPDX-License-Identifier: Apache-2.0
import CLibGPS
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// Where to find gpsd and how patiently to talk to it.
public struct GPSDConfig: Sendable {
    /// Host name or address of gpsd; a local gpsd is the usual case.
    public var host: String
    /// gpsd's TCP port.
    public var port: Int
    /// How long one wait for data may block, in seconds. Bounds how late a stop is noticed.
    public var pollInterval: Double
    /// Delays between reconnection attempts.
    public var backoff: Backoff
    /// Seconds without a TPV report after which the connection counts as failed. A receiver
    /// sends a report every cycle even without a fix, so silence means it stalled or is gone,
    /// which gpsd does not tell its clients. Reconnecting reports it and starts a fresh watch,
    /// which makes gpsd open its devices again (a tcp:// feed that hung up stays gone until gpsd
    /// restarts; a hotplugged receiver comes back through gpsd's own device handling).
    public var silenceTimeout: Double
    /// Seconds a connection attempt may take before it counts as failed (a host that is down).
    public var connectTimeout: Double

    /// The default is gpsd's own: 127.0.0.1:2947.
    public init(
        host: String = "127.0.0.1", port: Int = 2947, pollInterval: Double = 0.25,
        backoff: Backoff = Backoff(initial: 0.5, maximum: 10), silenceTimeout: Double = 10,
        connectTimeout: Double = 5
    ) {
        self.host = host; self.port = port; self.pollInterval = pollInterval; self.backoff = backoff
        self.silenceTimeout = silenceTimeout; self.connectTimeout = connectTimeout
    }

    /// Reads a `server` setting: "HOST:PORT", "HOST" (port 2947), or "[IPv6]:PORT".
    public init(server: String) throws {
        self.init()
        let address: HostPort
        do { address = try HostPort(parsing: server, defaultPort: port) } catch {
            throw GPSDConfigError.badServer(server)
        }
        host = address.host
        port = address.port
    }
}

/// A gpsd setting that cannot be used.
public enum GPSDConfigError: Error, Equatable, CustomStringConvertible {
    /// The server is not "HOST", "HOST:PORT" or "[IPv6]:PORT" with a port in 1…65535.
    case badServer(String)

    /// A message for the log and `check-config`.
    public var description: String {
        switch self {
        case .badServer(let s):
            "gps server \(HostPort.Invalid(text: s))"
        }
    }
}

/// Fixes from a running gpsd, read through libgps.
///
/// The source watches gpsd in JSON mode and turns every TPV report into a `Fix`. gpsd being
/// absent, killed or restarted is reported as a `retrying` status and repaired by reconnecting
/// with backoff; `streaming` is reported once TPV reports flow again. A TPV without a fix
/// (mode 0 or 1) is passed on as a fix with that mode: it is a state of the sky, not an error.
public struct GPSDSource: FixSource {
    /// Connection settings.
    public let config: GPSDConfig

    /// Creates a source for the gpsd at `config`.
    public init(config: GPSDConfig = GPSDConfig()) {
        self.config = config
    }

    /// "gpsd 127.0.0.1:2947".
    public var summary: String { "gpsd \(endpoint)" }

    private var endpoint: String { "\(config.host):\(config.port)" }

    /// Blocks until `stop` is signalled: connects, streams, and reconnects for as long as it runs.
    public func run(stop: StopSignal, emit: @escaping @Sendable (FixOutput) -> Void) throws {
        // gps_data_t is ~24 KB: too big for a thread's stack frame comfort, so it lives on the heap.
        let data = UnsafeMutablePointer<gps_data_t>.allocate(capacity: 1)
        defer { data.deallocate() }
        var backoff = config.backoff
        emit(.status(status(.starting, "connecting to gpsd at \(endpoint)")))

        while !stop.isStopped {
            let failure: String
            switch session(data, stop: stop, emit: emit, backoff: &backoff) {
            case .stopped:
                return
            case .failed(let message):
                failure = message
            }
            let delay = backoff.next()
            emit(.status(status(.retrying, failure, retryIn: delay)))
            stop.sleep(seconds: delay)
        }
    }

    private enum SessionEnd {
        case stopped
        case failed(String)
    }

    /// One connection's life: open, watch, read until the connection fails or a stop.
    private func session(
        _ data: UnsafeMutablePointer<gps_data_t>, stop: StopSignal,
        emit: @Sendable (FixOutput) -> Void, backoff: inout Backoff
    ) -> SessionEnd {
        memset(data, 0, MemoryLayout<gps_data_t>.size)
        if let unreachable = TCPReachability.timedOut(
            host: config.host, port: config.port, timeout: config.connectTimeout)
        {
            return .failed("cannot connect to gpsd at \(endpoint): \(unreachable)")
        }
        let opened = gps_open(config.host, String(config.port), data)
        if opened != 0 {
            // libgps leaves its own (negative) reason in errno, e.g. -6 when nothing listens.
            return .failed("cannot connect to gpsd at \(endpoint): \(describe(errno))")
        }
        defer { gps_close(data) }
        if gps_stream(data, UInt32(WATCH_ENABLE | WATCH_JSON), nil) != 0 {
            return .failed("gpsd at \(endpoint) refused the watch: \(describe(errno))")
        }
        emit(.status(status(.starting, "connected to gpsd at \(endpoint), waiting for a fix report")))

        let timeoutMicroseconds = Int32(saturating: max(1_000, config.pollInterval * 1e6))
        var message = [CChar](repeating: 0, count: 4096)
        var streaming = false
        // Whether the last status said the fix time is far from the system clock.
        var clockFlagged = false
        // Wall time only guards the connection here; fixes carry the receiver's own time.
        var lastReport = ContinuousClock.now
        let silenceLimit = Duration.milliseconds(Int64(saturating: config.silenceTimeout * 1000))
        while !stop.isStopped {
            if lastReport.duration(to: .now) > silenceLimit {
                return .failed(
                    "gpsd at \(endpoint) sent no fix report for \(Self.seconds(config.silenceTimeout)) s "
                        + "(receiver silent or not attached)")
            }
            errno = 0
            guard gps_waiting(data, timeoutMicroseconds) else {
                // A timeout leaves errno alone; anything else means the socket is broken.
                if errno != 0 && !SystemError.isInterruption(errno) && errno != EAGAIN {
                    return .failed("lost gpsd at \(endpoint): \(describe(errno))")
                }
                continue
            }
            let read = message.withUnsafeMutableBufferPointer { buffer in
                gps_read(data, buffer.baseAddress, Int32(buffer.count))
            }
            if read < 0 {
                return .failed("lost gpsd at \(endpoint): connection closed")
            }
            guard read > 0, Self.isTPV(message) else { continue }
            lastReport = .now
            var fix = Self.fix(from: UnsafePointer(data))
            fix.clockOffset = FixTimeCheck.offset(fixTime: fix.time, systemTime: FixTimeCheck.systemNow())
            let offClock = fix.clockOffset != nil
            if !streaming || offClock != clockFlagged {
                streaming = true
                clockFlagged = offClock
                backoff.reset()
                let note = fix.clockOffset.map { "; " + FixTimeCheck.describe($0) } ?? ""
                emit(.status(status(.streaming, "fixes from gpsd at \(endpoint)\(note)")))
            }
            emit(.fix(fix))
        }
        return .stopped
    }

    /// True when the JSON line libgps just read is a TPV report (time-position-velocity).
    /// libgps says which fields a report set, but not which class it was, and a SKY report
    /// must not be taken for a new fix.
    static func isTPV(_ message: [CChar]) -> Bool {
        let text = message.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return text.contains("\"class\":\"TPV\"")
    }

    /// Reads the fix fields libgps just filled in from a TPV report.
    ///
    /// libgps fills every field a TPV report leaves out with NaN (its "unknown"), so finiteness,
    /// not the `set` mask, decides what is known (seen with gpsd 3.22: a TPV carrying eph but no
    /// epx/epy, as an NMEA receiver gives, leaves HERR_SET clear). NaN never reaches clients:
    /// unknown is nil.
    static func fix(from data: UnsafePointer<gps_data_t>) -> Fix {
        let set = data.pointee.set
        let raw = data.pointee.fix
        func known(_ value: Double) -> Double? { value.isFinite ? value : nil }
        var fix = Fix(mode: Int(raw.mode))
        if (set & TIME_SET) != 0 && raw.time.tv_sec != 0 {
            // A receiver's time outside the years 1678–2262 is no time (it would overflow).
            fix.time = nanoseconds(seconds: Int64(raw.time.tv_sec), nanoseconds: Int64(raw.time.tv_nsec))
        }
        if raw.latitude.isFinite && raw.longitude.isFinite {
            fix.lat = raw.latitude
            fix.lon = raw.longitude
        }
        // gpsd ≥ 3.20 reports altitude above mean sea level as altMSL; `altitude` is deprecated.
        fix.alt = known(raw.altMSL)
        fix.speed = known(raw.speed)
        fix.track = known(raw.track)
        fix.eph = known(raw.eph) ?? horizontalError(epx: known(raw.epx), epy: known(raw.epy))
        fix.epv = known(raw.epv)
        return fix
    }

    /// A 95 % horizontal radius from per-axis errors, for receivers that report epx/epy but no
    /// eph: √(epx² + epy²), the conservative combination; one axis alone stands for both.
    static func horizontalError(epx: Double?, epy: Double?) -> Double? {
        switch (epx, epy) {
        case (let x?, let y?): (x * x + y * y).squareRoot()
        case (let x?, nil): x * 2.0.squareRoot()
        case (nil, let y?): y * 2.0.squareRoot()
        case (nil, nil): nil
        }
    }

    private func status(_ state: SourceStatus.State, _ message: String, retryIn: Double? = nil) -> SourceStatus {
        SourceStatus(source: "gps", state: state, message: message, device: "gpsd \(endpoint)", retryIn: retryIn)
    }

    private static func seconds(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(saturating: value)) : String(value)
    }

    /// libgps returns its own negative codes (e.g. -6: cannot connect) and errno values.
    private func describe(_ code: Int32) -> String {
        if code < 0 { return String(cString: gps_errstr(code)) }
        if code == 0 { return "unknown error" }
        return SystemError.text(code)
    }
}
