// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import FoundationEssentials
import Glibc
import TiltCommandLine
import TiltCore
import TiltPlatform
import TiltRecordings
import TiltSensors

/// `tiltd estimate`: runs the attitude estimator over a recording and writes the orientation per sample.
struct Estimate: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "estimate",
        abstract: "Run the attitude estimator over a recording and write one quaternion per sample.",
        discussion: """
            Reads tiltd's recording CSV (t_ns,ax,ay,az,gx,gy,gz) or a BROAD dataset CSV \
            (t,ax,ay,az,gx,gy,gz,…), plain or gzip-compressed. Writes a CSV with header t,w,x,y,z \
            (or t_ns,w,x,y,z for recordings): t as in the input, and the quaternion (scalar first) \
            rotating sensor vectors into the z-up global frame. Heading is arbitrary unless the \
            file has mx,my,mz columns (µT) right after the gyro: the magnetometer then sets it, and \
            the frame is ENU (x east, y magnetic north, z up).
            """)

    @Option(name: .customLong("in"), help: "Input recording (CSV or CSV.gz).")
    var input: String

    @Option(name: .customLong("out"), help: "Output CSV ('-' for standard output).")
    var output: String

    @Option(
        name: .customLong("rate-divisor"),
        help:
            "Keep every N-th sample (rows 0, N, 2N, …), as a sensor read at 1/N of the rate delivers them (5 turns 285.7 Hz into 57.1 Hz)."
    )
    var rateDivisor: Int = 1

    @Option(
        name: .customLong("mag-every"),
        help:
            "With mx,my,mz columns: feed the field of every M-th kept row only (a magnetometer slower than the IMU; 10 at 285.7 Hz gives 28.6 Hz)."
    )
    var magEvery: Int = 1

    @Option(
        name: .customLong("param"), parsing: .singleValue,
        help: "Override an estimator parameter, NAME=VALUE (see docs/fusion.md). Repeatable.")
    var params: [String] = []

    @Flag(
        name: .customLong("with-state"),
        help:
            "Add the estimator's state per row: bx,by,bz (gyro bias, rad/s), rest (0/1), and with a magnetometer mag_disturbed (0/1)."
    )
    var withState = false

    @Flag(
        name: .customLong("report-cost"),
        help: "Also time the estimator alone over the samples (20 passes) and print ns/sample to stderr.")
    var reportCost = false

    func validate() throws {
        guard rateDivisor >= 1 else { throw ValidationError("--rate-divisor must be at least 1, got \(rateDivisor)") }
        guard magEvery >= 1 else { throw ValidationError("--mag-every must be at least 1, got \(magEvery)") }
    }

    func run() throws {
        var parameters = AttitudeEstimator.Parameters()
        // Each kept rate sample still averages only its own raw period: 1/N of the new one.
        parameters.rateWindow = 1 / Double(rateDivisor)
        for p in params {
            let parts = p.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2, let v = Double(parts[1]) else {
                throw ValidationError("--param expects NAME=VALUE, got '\(p)'")
            }
            do { try parameters.set(parts[0], v) } catch { throw ValidationError(error.description) }
        }
        let dataset: DatasetReader.Dataset
        do { dataset = try DatasetReader.read(path: input) } catch {
            throw ValidationFailure(message: "tiltd estimate: \(error)")
        }
        let samples = DatasetReader.decimate(dataset.samples, keepingEvery: rateDivisor)
        let fields = dataset.magnetometer.map { DatasetReader.decimate($0, keepingEvery: rateDivisor) }

        var estimator = AttitudeEstimator(parameters: parameters)
        var text = dataset.format == .broad ? "t,w,x,y,z" : "t_ns,w,x,y,z"
        text += withState ? ",bx,by,bz,rest" + (fields == nil ? "\n" : ",mag_disturbed\n") : "\n"
        text.reserveCapacity(samples.count * 72)
        for (i, s) in samples.enumerated() {
            var a = estimator.update(s)
            // The row's field, at the row's time, after its IMU sample.
            if let fields, i % magEvery == 0 { a = estimator.updateMag(t: s.t, field: fields[i]) }
            let q = a.q
            switch dataset.format {
            case .broad:
                // Seconds, as the input wrote them (9 decimals: exact in ns).
                text += Self.seconds(s.t)
            case .recording:
                text += String(s.t)
            }
            text += ",\(q.w),\(q.x),\(q.y),\(q.z)"
            if withState {
                text += ",\(a.gyroBias.x),\(a.gyroBias.y),\(a.gyroBias.z),\(a.atRest ? 1 : 0)"
                if fields != nil { text += estimator.magDisturbed ? ",1" : ",0" }
            }
            text += "\n"
        }
        if reportCost { Self.reportCost(samples, fields, parameters) }
        let data = Data(text.utf8)
        if output == "-" {
            StandardStream.output.write(data)
        } else {
            do { try data.write(to: URL(fileURLWithPath: output), options: .atomic) } catch {
                throw ValidationError("cannot write \(output): \(error)")
            }
        }
    }

    /// Times `update` alone (no parsing, no output; with `fields`, `update` and `updateMag` per
    /// row) and prints ns per sample. Uses the wall clock, which is fine here: this is the command
    /// line, not the core.
    static func reportCost(
        _ samples: [IMUSample], _ fields: [Vector3]?, _ parameters: AttitudeEstimator.Parameters
    ) {
        guard !samples.isEmpty else { return }
        let passes = 20
        var checksum = 0.0
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for _ in 0..<passes {
                var e = AttitudeEstimator(parameters: parameters)
                if let fields {
                    for (i, s) in samples.enumerated() {
                        _ = e.update(s)
                        checksum += e.updateMag(t: s.t, field: fields[i]).q.w
                    }
                } else {
                    for s in samples { checksum += e.update(s).q.w }
                }
            }
        }
        let ns = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) * 1e-9
        let perSample = ns / Double(passes * samples.count)
        StandardStream.error.write(
            cFormat(
                "estimator\(fields == nil ? "" : " with the magnetometer"): %d samples × %d passes, %.1f ns/sample (checksum %.3f)\n",
                samples.count, passes, perSample, checksum
            ).utf8)
    }

    /// Integer nanoseconds as decimal seconds without floating-point rounding.
    static func seconds(_ ns: Int64) -> String {
        let sign = ns < 0 ? "-" : ""
        let m = ns.magnitude
        let frac = String(m % 1_000_000_000)
        return "\(sign)\(m / 1_000_000_000).\(String(repeating: "0", count: 9 - frac.count))\(frac)"
    }
}
