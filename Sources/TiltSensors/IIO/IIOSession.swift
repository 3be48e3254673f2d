// SPDX-License-Identifier: Apache-2.0
import CLibIIO
import FoundationEssentials
import Glibc
import Logging
import TiltCore
import TiltPlatform

/// One attempt at streaming: a libiio context and the configured device(s) with their readers,
/// buffered or polled as `IIOReadMode` decides (and, in auto mode, polled after all when the
/// buffer stays silent).
final class IIOSession {
    private let context: IIOContext
    let devices: [IIOConfiguredDevice]
    let configuration: IIOSource.Settings
    private var buffered: [IIOBufferedReader] = []
    /// The readers of a polled session (empty when buffered).
    private(set) var polled: [IIOPolledReader] = []
    /// The rate samples come at, Hz: buffered, the rate the device(s) run at (the slower one for
    /// split devices); polled, the rate asked, where the chip runs at least that fast
    /// (`pacePolledReads`).
    var rateHz: Double
    /// What is really delivered (`rate_hz` in statuses is `deliveredRate.reportedHz`).
    var deliveredRate: DeliveredRate
    /// Why the delivered rate is short, or what was done to reach it (for the status message).
    private var rateNote: String?
    /// What `tunePolledReads` changed, for the status message.
    var tuneNote: String?
    /// How long the last polled read of every axis took, ns.
    var lastReadNs: Int64 = 0
    /// A moving average of polled reads' time, ns (for the cause of a short rate).
    private var meanReadNs: Double = 0
    /// The rate the gyroscope's chip runs at while polled, Hz, as set or read back
    /// (`pacePolledReads`, `tunePolledReads`): with the polling rate, the gyro readings'
    /// `polledRateWindow`.
    var gyroChipHz: Double?
    /// Set when split devices' slow reads are made side by side (`IIOPolledPace`).
    var sideBySide: IIOSideBySideReads?
    /// "mpu6050 (iio:device0)" or "lsm6ds3_accel (iio:device0) + lsm6ds3_gyro (iio:device1)".
    let deviceSummary: String
    /// False for an accelerometer alone: samples carry no gyro and attitude is tilt only.
    let hasGyro: Bool
    /// Why the gyroscope cannot be read now (polled reads whose gyro attributes fail while the
    /// accelerometer's work): attitude is the accelerometer's tilt until it reads again.
    var gyroFault: String?
    /// How samples are read, for the status message.
    private(set) var mode: String
    /// Which clock timestamps come from, for the status message.
    private(set) var clockNote: String
    /// True when every sample time is on CLOCK_MONOTONIC: polled reads and scans without a
    /// timestamp element are stamped at the read, buffered ones by the kernel on the clock
    /// `IIOTimestampClock` set.
    private var timestampsMonotonic = true
    /// Samples emitted so far.
    var delivered = 0
    /// Judges the accelerometer's unit at its first rest (`IIOUnits`); nil once judged.
    var accelUnitWatch: IIOAccelUnitWatch?
    /// Set when the accelerometer's unit was refused: the stream ends with it as the error.
    var unitRefusal: String?

    init(configuration: IIOSource.Settings, logger: Logger?) throws {
        self.configuration = configuration
        context = try IIOContext(timeoutMs: 1000)
        let choices = try IIODeviceSetup.choose(configuration.device, in: context)
        devices = try choices.map {
            try IIODeviceSetup.configure(
                $0, rateHz: configuration.rateHz,
                mountOverride: configuration.mountMatrix, logger: logger)
        }
        rateHz = devices.map(\.rateHz).min() ?? configuration.rateHz
        deliveredRate = DeliveredRate(nominalHz: rateHz)
        deviceSummary = devices.map(\.summary).joined(separator: " + ")
        hasGyro = devices.contains { $0.gyro != nil }
        accelUnitWatch = IIOAccelUnitWatch(rateHz: rateHz)
        mode = ""
        clockNote = ""
        let bufferable = devices.allSatisfy(\.isBufferCapable)
        let pollable = devices.allSatisfy(\.isPollable)
        switch configuration.mode {
        case .polled:
            guard pollable else {
                throw IIOError("\(deviceSummary): [imu] mode = \"polled\" but it has no *_raw attributes to poll")
            }
            try startPolled("polled ([imu] mode = \"polled\")", logger: logger)
        case .buffered:
            guard bufferable else {
                throw IIOError(
                    "\(deviceSummary): [imu] mode = \"buffered\" but it has no buffer (use \"auto\" or \"polled\")")
            }
            try startBuffered(logger: logger)
        case .auto:
            guard bufferable else {
                guard pollable else {
                    throw IIOError("\(deviceSummary): neither a buffer nor *_raw attributes to read")
                }
                try startPolled("polled (no buffer)", logger: logger)
                return
            }
            do {
                try startBuffered(logger: logger)
            } catch let missing as IIOMissingTrigger where pollable {
                closeBuffers()
                logger?.notice("polling instead of buffering", metadata: ["reason": "\(missing)"])
                try startPolled("polled: \(missing)", logger: logger)
            } catch let refused as IIOError where pollable {
                // The kernel refused the buffer (a triggered buffer whose trigger cannot be set
                // answers EINVAL on enable): polling needs neither.
                closeBuffers()
                logger?.notice("polling instead of buffering", metadata: ["reason": "\(refused)"])
                try startPolled("polled: the buffer cannot be used (\(refused))", logger: logger)
            }
        }
    }

    /// The status for `state`, with the device, its rate and what is really happening.
    func status(_ state: SourceStatus.State, _ detail: String? = nil) -> SourceStatus {
        var s = SourceStatus(
            source: "imu", state: state, message: detail.map { "\($0); \(message)" } ?? message,
            device: deviceSummary, rateHz: deliveredRate.reportedHz, hasGyroscope: hasGyro && gyroFault == nil)
        s.timestampsMonotonic = timestampsMonotonic
        s.rateWindow = polledRateWindow
        return s
    }

    /// "buffered, 1 scan per buffer, trigger mpu6050-dev0; timestamps CLOCK_MONOTONIC".
    var message: String {
        ([mode, rateNote, clockNote] + devices.flatMap(\.unitNotes)
            + [hasGyro ? nil : SourceStatus.noGyroscopeNote, gyroFault.map(Self.gyroFaultNote)]).compactMap { $0 }
            .joined(separator: "; ")
    }

    /// Polls from now on: readers made, slow reads sped up where the driver allows
    /// (`tunePolledReads`), and the rate to report what those reads can deliver, so that the
    /// first status already says it.
    private func startPolled(_ why: String, logger: Logger?) throws {
        polled = devices.map { IIOPolledReader(device: $0) }
        sideBySide = nil
        timestampsMonotonic = true
        mode = why
        clockNote = "timestamps CLOCK_MONOTONIC at each read"
        pacePolledReads(logger: logger)
        let period = Int64(saturating: 1e9 / max(rateHz, 0.1))
        _ = try tunePolledReads(period: period, logger: logger)
        rateNote = tuneNote
        if lastReadNs > period, deliveredRate.expect(1e9 / Double(lastReadNs)) {
            rateNote = [tuneNote, shortRateNote(deliveredRate.reportedHz)].compactMap { $0 }.joined(separator: "; ")
        }
    }

    private func startBuffered(logger: Logger?) throws {
        // The clock first: the kernel refuses to change it while the buffer is enabled.
        let clocks = devices.filter { $0.timestamp != nil }.map { IIOTimestampClock.useMonotonic($0.ref) }
        timestampsMonotonic = clocks.allSatisfy(\.monotonic)
        clockNote =
            clocks.first { !$0.monotonic }?.note ?? clocks.first?.note ?? "timestamps CLOCK_MONOTONIC at each read"
        var triggers: [String] = []
        for d in devices {
            if let t = try IIODeviceSetup.attachTrigger(d.ref, in: context, logger: logger) { triggers.append(t) }
        }
        let n = configuration.samplesPerBuffer
        buffered = try devices.map { try IIOBufferedReader(device: $0, samplesPerBuffer: n) }
        mode =
            "buffered, \(n) scan\(n == 1 ? "" : "s") per buffer"
            + (triggers.isEmpty ? "" : ", trigger \(triggers.joined(separator: ", "))")
            + (devices.count > 1 ? ", accel and gyro joined by timestamp" : "")
    }

    private func closeBuffers() {
        for b in buffered { b.close() }
        buffered = []
    }

    /// Releases the buffers (libiio disables them in sysfs) before the context goes.
    func close() {
        closeBuffers()
        polled = []
    }

    /// Streams until `stop`; throws when the device fails or vanishes.
    func stream(stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void, logger: Logger?) throws {
        if !buffered.isEmpty {
            let silent = try streamBuffered(stop: stop, wake: wake, emit: emit, logger: logger)
            guard silent, !stop.isStopped else { return }
            // Auto mode, and the buffer never delivered: its trigger does not fire (an interrupt
            // line not wired, a wrong GPIO in the overlay). Polling works without one.
            closeBuffers()
            let why = "polled: the buffer delivered nothing in \(Self.silenceText(silenceLimit)) (no interrupt?)"
            logger?.warning("IMU buffer silent, polling instead", metadata: ["device": "\(deviceSummary)"])
            try startPolled(why, logger: logger)
            emit(.status(status(.streaming)))
        }
        try streamPolled(stop: stop, wake: wake, emit: emit, logger: logger)
    }

    /// How long a buffer may stay silent before it counts as `no_data` (and, in auto mode
    /// before any sample, as not working): a second, or ten periods at slow rates.
    var silenceLimit: Int64 { max(1_000_000_000, Int64(saturating: 10e9 / max(rateHz, 0.1))) }

    static func silenceText(_ ns: Int64) -> String {
        let s = Double(ns) / 1e9
        return s == s.rounded() && abs(s) < 1e15 ? "\(Int64(saturating: s)) s" : "\(s) s"
    }

    /// Streams buffered scans. Returns true when it stopped because the buffer never delivered
    /// and auto mode may poll instead; false on `stop`.
    private func streamBuffered(
        stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void,
        logger: Logger?
    ) throws -> Bool {
        var joiner = AccelGyroJoiner(rateHz: rateHz)
        var fds = buffered.map { pollfd(fd: $0.pollFD, events: Int16(POLLIN), revents: 0) }
        fds.append(pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0))
        var lastData = MonotonicClock.nanoseconds()
        var lastCheck = lastData
        var silent = false
        let canFallBack = configuration.mode == .auto && devices.allSatisfy(\.isPollable)
        while !stop.isStopped {
            for i in fds.indices { fds[i].revents = 0 }
            // 200 ms: how soon a vanished device is noticed while no data flows.
            // An interruption counts as nothing ready: the loop checks its stop signal first.
            do { _ = try Syscall.pollOnce(&fds, timeoutMilliseconds: 200) } catch { throw IIOError(error.description) }
            var got = 0
            let deliveredBefore = delivered
            for (i, reader) in buffered.enumerated() where fds[i].revents != 0 {
                if fds[i].revents & Int16(POLLERR | POLLNVAL) != 0 {
                    throw IIOError("\(reader.device.summary): data node failed")
                }
                got += try reader.drain { reading in
                    if let a = reading.accel, let g = reading.gyro {
                        deliver(IMUSample(t: reading.t, accel: a, gyro: g), emit: emit, logger: logger)
                    } else if !hasGyro || gyroFault != nil, let a = reading.accel {
                        deliver(IMUSample(t: reading.t, accelOnly: a), emit: emit, logger: logger)
                    } else {
                        let done =
                            reading.accel.map { joiner.addAccel(t: reading.t, $0) }
                            ?? reading.gyro.map { joiner.addGyro(t: reading.t, $0) } ?? []
                        for s in done { deliver(s, emit: emit, logger: logger) }
                    }
                }
            }
            if let unitRefusal { throw IIOError(unitRefusal) }
            let now = MonotonicClock.nanoseconds()
            if got > 0 {
                lastData = now
                if silent {
                    silent = false
                    deliveredRate.restart()
                    emit(.status(status(.streaming)))
                }
            }
            noteDeliveries(delivered - deliveredBefore, at: now, emit: emit)
            // Data flowing proves the node is alive; when silent, check often that it still exists
            // (a FIFO or a removed device never reports EOF: libiio holds it open read-write).
            if now - lastCheck >= (got > 0 ? 1_000_000_000 : 200_000_000) {
                lastCheck = now
                for reader in buffered where !reader.isPresent() {
                    // A split gyro device that went: carry on with the accelerometer's tilt.
                    guard reader.device.accel == nil, buffered.count > 1 else {
                        throw IIOError("\(reader.device.summary) vanished")
                    }
                    reader.close()
                    buffered.removeAll { $0 === reader }
                    fds = buffered.map { pollfd(fd: $0.pollFD, events: Int16(POLLIN), revents: 0) }
                    fds.append(pollfd(fd: wake.fd, events: Int16(POLLIN), revents: 0))
                    noteGyro("\(reader.device.summary) vanished", emit: emit, logger: logger)
                }
                try watchForGyro()
            }
            if !silent && now - lastData > silenceLimit {
                if delivered == 0 && canFallBack { return true }
                silent = true
                // "Never started" (a trigger that does not fire, a wrong device) and "stopped"
                // (the sensor stalled, its feed ended) have different causes: say which.
                let span = Self.silenceText(silenceLimit)
                let what =
                    delivered == 0
                    ? "no data in the \(span) since the buffer was enabled (trigger or interrupt not firing?)"
                    : "no data for \(span) after \(delivered) sample\(delivered == 1 ? "" : "s")"
                logger?.warning(
                    "\(what); the device is present, waiting",
                    metadata: ["device": "\(deviceSummary)", "samples": "\(delivered)"])
                emit(.status(status(.noData, what)))
            }
        }
        return false
    }

    private func streamPolled(
        stop: StopSignal, wake: IIOWakeup, emit: @Sendable (SourceOutput) -> Void, logger: Logger?
    ) throws {
        let period = Int64(saturating: 1e9 / max(rateHz, 0.1))
        var next = MonotonicClock.nanoseconds()
        var lastCheck = next
        while !stop.isStopped {
            let start = MonotonicClock.nanoseconds()
            var accel: Vector3?, gyro: Vector3?, gyroError: String?
            // The per-sample path: no array unless the reads go side by side.
            if let sideBySide {
                for r in try sideBySide.read(at: start) {
                    accel = accel ?? r.accel
                    gyro = gyro ?? r.gyro
                    gyroError = gyroError ?? r.gyroError
                }
            } else {
                for reader in polled {
                    let r = try reader.read(at: start)
                    accel = accel ?? r.accel
                    gyro = gyro ?? r.gyro
                    gyroError = gyroError ?? r.gyroError
                }
            }
            if hasGyro { noteGyro(gyro != nil ? nil : gyroError, emit: emit, logger: logger) }
            let end = MonotonicClock.nanoseconds()
            lastReadNs = end - start
            meanReadNs = meanReadNs == 0 ? Double(lastReadNs) : 0.95 * meanReadNs + 0.05 * Double(lastReadNs)
            // The values were read one file after another over [start, end] (six one-shot reads
            // of 5-10 ms each on st_lsm6dsx): the middle of that span is when they were taken.
            let t = start + (end - start) / 2
            if let accel, let gyro {
                deliver(IMUSample(t: t, accel: accel, gyro: gyro), emit: emit, logger: logger)
            } else if !hasGyro || gyroFault != nil, let accel {
                deliver(IMUSample(t: t, accelOnly: accel), emit: emit, logger: logger)
            }
            if let unitRefusal { throw IIOError(unitRefusal) }
            noteDeliveries(1, at: MonotonicClock.nanoseconds(), emit: emit)
            if t - lastCheck >= 1_000_000_000 {
                lastCheck = t
                // A gyroscope device that went is a gyro fault (its reads fail), not the end.
                for reader in polled where reader.device.accel != nil && !reader.isPresent() {
                    throw IIOError("\(reader.device.summary) vanished")
                }
                try watchForGyro()
            }
            next += period
            let now = MonotonicClock.nanoseconds()
            // Late by less than a period (a busy machine's wake-up): the schedule holds, so the
            // lateness does not add up into a lower rate. Past the next read's time (reads slower
            // than the period, st_lsm6dsx's one-shots): the next read starts at once and the
            // schedule restarts from it, so slow reads follow one another with no idle wait for a
            // period boundary (which halved what they delivered, in uneven gaps), and missed
            // periods are never made up in a burst.
            if next <= now { next = now }
            wake.wait(nanoseconds: next - now)
        }
    }

    /// Counts deliveries; when the rate to report changes, says so in a `streaming` status (with
    /// why, for polled reads that cannot keep the pace).
    private func noteDeliveries(_ n: Int, at now: Nanoseconds, emit: @Sendable (SourceOutput) -> Void) {
        guard let reported = deliveredRate.add(n, at: now) else { return }
        rateNote =
            deliveredRate.isShort
            ? [tuneNote, shortRateNote(reported)].compactMap { $0 }.joined(separator: "; ") : tuneNote
        emit(.status(status(.streaming)))
    }

    /// Why the rate reported is below the one asked, for the status message: the driver's own
    /// rate (buffered: the chip or its interrupt runs slower than it was set to), the time a read
    /// takes (polled: over half the period, a driver that waits for fresh data), or else
    /// scheduling (reads are quick, so the reading thread woke late: a busy or throttled CPU).
    private func shortRateNote(_ reported: Double) -> String {
        let asked = IIOText.rateText(rateHz)
        guard !polled.isEmpty else {
            return "the device delivers \(IIOText.rateText(reported)) Hz of the \(asked) Hz it was set to "
                + "(the driver's own rate: its chip or interrupt runs slower)"
        }
        let period = 1e9 / max(rateHz, 0.1)
        let read = meanReadNs > 0 ? Int64(meanReadNs) : lastReadNs
        let head =
            "polled reads deliver \(IIOText.rateText(reported)) Hz of the \(asked) Hz asked: one read of every "
            + "axis takes \(Self.millisecondsText(read)) of the \((period / 1e5).rounded() / 10) ms period"
        return Double(read) > Self.slowReadShare * period
            ? head + " (the driver waits for fresh data; wire the interrupt for buffered reads, docs/hardware.md)"
            : head + ", so the rest is scheduling: the reading thread woke late (a busy or throttled CPU)"
    }
}
