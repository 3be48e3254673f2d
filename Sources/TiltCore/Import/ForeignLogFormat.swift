// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// Sensor logs from other tools, converted to IMU samples (SI units, sensor frame) so they can
/// be replayed, judged and benchmarked like tiltd's own recordings (`tiltd import`).
///
/// Each format is one case with its own parser; add a case (BROAD, CSV with named columns, …)
/// and a parser, and `tiltd import --format` offers it.
public enum ForeignLogFormat: String, Sendable, CaseIterable {
    /// STMicroelectronics' MLC / Unico data logs: one header line, then tab-separated rows
    /// `A_X [mg]  A_Y [mg]  A_Z [mg]  G_X [dps]  G_Y [dps]  G_Z [dps]` with no timestamps
    /// (row k is at k / rate).
    case stMLC = "st-mlc"

    /// A malformed input, with its 1-based line number.
    public struct ParseError: Error, Equatable, CustomStringConvertible {
        /// 1-based line of the problem (0 = the input as a whole).
        public var line: Int
        /// What is wrong there.
        public var message: String
        /// `line N: message`.
        public var description: String { line > 0 ? "line \(line): \(message)" : message }
    }

    /// Parses `text`; `rateHz` gives the time of rows without timestamps, `startNs` the first
    /// row's time. Throws at the first malformed line.
    public func parse(
        _ text: String, rateHz: Double, startNs: Nanoseconds = 1_000_000_000
    ) throws(ParseError) -> [IMUSample] {
        guard rateHz.isFinite, rateHz > 0, rateHz <= 100_000 else {
            throw ParseError(line: 0, message: "the rate must be within 0…100000 Hz, got \(rateHz)")
        }
        switch self {
        case .stMLC: return try Self.parseSTMLC(text, rateHz: rateHz, startNs: startNs)
        }
    }

    /// Standard gravity, m/s² per g (1 mg = 9.80665e-3 m/s²).
    static let g = 9.80665
    static let radiansPerDegree = Double.pi / 180

    static func parseSTMLC(_ text: String, rateHz: Double, startNs: Nanoseconds) throws(ParseError) -> [IMUSample] {
        var out: [IMUSample] = []
        var sawHeader = false
        var row = 0
        for (i, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = raw.trimmingWhitespace
            if line.isEmpty { continue }
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            if !sawHeader {
                // The header names the columns and their units; check them, so a log of another
                // layout (or with other units) is refused rather than misread.
                sawHeader = true
                let header = String(line.filter { $0 != " " })
                let expected = ["A_X[mg]", "A_Y[mg]", "A_Z[mg]", "G_X[dps]", "G_Y[dps]", "G_Z[dps]"]
                let names = header.split(separator: "\t").map(String.init)
                guard Array(names.prefix(6)) == expected else {
                    throw ParseError(
                        line: i + 1,
                        message:
                            "expected the header \"A_X [mg]  A_Y [mg]  A_Z [mg]  G_X [dps]  G_Y [dps]  G_Z [dps]\" (tab-separated), got \"\(line.prefix(80))\""
                    )
                }
                continue
            }
            guard fields.count == 6 else {
                throw ParseError(
                    line: i + 1,
                    message: "expected 6 tab-separated numbers (mg, mg, mg, dps, dps, dps), got \(fields.count) fields")
            }
            var v = [Double](repeating: 0, count: 6)
            for k in 0..<6 {
                guard let d = Double(fields[k]), d.isFinite else {
                    throw ParseError(
                        line: i + 1, message: "field \(k + 1) is not a number: \"\(fields[k].prefix(32))\"")
                }
                v[k] = d
            }
            let t = startNs.addingSaturated(Nanoseconds(saturating: (Double(row) * 1e9 / rateHz).rounded()))
            row += 1
            out.append(
                IMUSample(
                    t: t, accel: Vector3(v[0], v[1], v[2]) * (g / 1000),
                    gyro: Vector3(v[3], v[4], v[5]) * radiansPerDegree))
        }
        guard sawHeader else { throw ParseError(line: 0, message: "the input is empty") }
        guard !out.isEmpty else { throw ParseError(line: 0, message: "the input has a header but no samples") }
        return out
    }
}
