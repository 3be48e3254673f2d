// SPDX-License-Identifier: Apache-2.0
import CZlib
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// Reads IMU samples from a file: the project's recording CSV or a BROAD dataset CSV, either of
/// them plain or gzip-compressed (detected by content, not by name).
///
/// - Recording: optional `#` comment lines, header `t_ns,ax,ay,az,gx,gy,gz`, rows with t in integer
///   nanoseconds, acceleration in m/s², angular rate in rad/s (sensor frame).
/// - BROAD: header `t,ax,ay,az,gx,gy,gz,qw,qx,qy,qz,movement`, t in seconds from the first sample;
///   only the first seven columns are used (the rest is ground truth for scoring).
/// - Either layout with `mx,my,mz` right after the gyro (a BROAD file joined row by row with its
///   `broad-mag` file, or a recording v2 with a magnetometer): the field in µT, sensor frame, one per
///   row (`nan` — or, in a recording, empty fields or none — where there is none), in `Dataset.magnetometer`.
public enum DatasetReader {
    /// Which layout a file had; decides how time is written back out.
    public enum Format: String, Sendable, Equatable {
        /// tiltd's recording CSV (t in integer ns).
        case recording
        /// BROAD's CSV (t in seconds).
        case broad
    }

    /// The samples of one file, in file order.
    public struct Dataset: Sendable {
        /// The format recognised.
        public var format: Format
        /// The samples, SI units.
        public var samples: [IMUSample]
        /// The magnetometer field (µT, sensor frame) of each sample's row, when the file has
        /// `mx,my,mz` columns after the gyro; non-finite where a row has no reading.
        public var magnetometer: [Vector3]?
    }

    /// Why a file could not be read. Always names the file, and the line when there is one.
    public struct ReadError: Error, CustomStringConvertible, Equatable {
        /// The file.
        public var path: String
        /// The 1-based line, when the problem is in one.
        public var line: Int?
        /// What is wrong.
        public var message: String
        /// "path:line: message".
        public var description: String {
            if let line { return "\(path):\(line): \(message)" }
            return "\(path): \(message)"
        }
    }

    /// Reads and parses `path`.
    public static func read(path: String) throws(ReadError) -> Dataset {
        let data: Data
        do {
            data = Data(try FileIO.readAll(path))
        } catch {
            throw ReadError(path: path, line: nil, message: error.reason)
        }
        let text: Data
        if data.count >= 2 && data[data.startIndex] == 0x1f && data[data.startIndex + 1] == 0x8b {
            text = try gunzip(path: path)
        } else {
            text = data
        }
        return try parse(text, path: path)
    }

    /// Parses CSV bytes of either layout; `path` is only used in error messages.
    public static func parse(_ data: Data, path: String) throws(ReadError) -> Dataset {
        var format: Format?
        var samples: [IMUSample] = []
        samples.reserveCapacity(data.count / 60)
        var hasMag = false
        var mag: [Vector3] = []
        var lineNumber = 0
        var failure: ReadError?
        data.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
            let bytes = raw.bindMemory(to: UInt8.self)
            var start = 0
            let n = bytes.count
            while start < n, failure == nil {
                var end = start
                while end < n && bytes[end] != 0x0a { end += 1 }
                lineNumber += 1
                var lineEnd = end
                if lineEnd > start && bytes[lineEnd - 1] == 0x0d { lineEnd -= 1 }  // CRLF files
                let line = UnsafeBufferPointer(rebasing: bytes[start..<lineEnd])
                start = end + 1
                if line.isEmpty || line[0] == UInt8(ascii: "#") { continue }
                let fields = split(line)
                guard let f = format else {
                    let header = fields.map { String(decoding: $0, as: UTF8.self).trimmingWhitespace(newlines: false) }
                    hasMag = header.count >= 10 && Array(header[7..<10]) == ["mx", "my", "mz"]
                    if Array(header.prefix(7)) == ["t_ns", "ax", "ay", "az", "gx", "gy", "gz"] {
                        format = .recording
                    } else if Array(header.prefix(7)) == ["t", "ax", "ay", "az", "gx", "gy", "gz"] {
                        format = .broad
                    } else {
                        failure = ReadError(
                            path: path, line: lineNumber,
                            message:
                                "expected header 't_ns,ax,ay,az,gx,gy,gz' (recording) or 't,ax,ay,az,gx,gy,gz,…' (BROAD), got '\(header.joined(separator: ","))'"
                        )
                    }
                    continue
                }
                // A recording v2 row without a field has seven fields, or ten with the last three empty.
                let least = hasMag && format == .broad ? 10 : 7
                guard fields.count >= least else {
                    failure = ReadError(
                        path: path, line: lineNumber, message: "expected at least \(least) fields, got \(fields.count)")
                    continue
                }
                var v = [Double](repeating: 0, count: 6)
                for i in 0..<6 {
                    guard let x = number(fields[i + 1]), x.isFinite else {
                        failure = ReadError(
                            path: path, line: lineNumber,
                            message:
                                "field \(i + 2) is not a finite number: '\(String(decoding: fields[i + 1], as: UTF8.self))'"
                        )
                        return
                    }
                    v[i] = x
                }
                let t: Int64
                switch f {
                case .recording:
                    guard
                        let ns = Int64(String(decoding: fields[0], as: UTF8.self).trimmingWhitespace(newlines: false))
                    else {
                        failure = ReadError(
                            path: path, line: lineNumber,
                            message:
                                "t_ns is not an integer: '\(String(decoding: fields[0], as: UTF8.self))'")
                        return
                    }
                    t = ns
                case .broad:
                    guard let seconds = number(fields[0]), seconds.isFinite, abs(seconds) < 9e9 else {
                        failure = ReadError(
                            path: path, line: lineNumber,
                            message:
                                "t is not a number of seconds: '\(String(decoding: fields[0], as: UTF8.self))'")
                        return
                    }
                    t = Int64(saturating: (seconds * 1e9).rounded())
                }
                samples.append(IMUSample(t: t, accel: Vector3(v[0], v[1], v[2]), gyro: Vector3(v[3], v[4], v[5])))
                if hasMag {
                    // nan or empty (no reading on this row) is allowed; text that is no number is not.
                    var m = Vector3(.nan, .nan, .nan)
                    for i in 0..<3 where fields.count >= 10 && !fields[i + 7].allSatisfy({ $0 == 0x20 }) {
                        guard let x = number(fields[i + 7]) else {
                            failure = ReadError(
                                path: path, line: lineNumber,
                                message:
                                    "field \(i + 8) is not a number: '\(String(decoding: fields[i + 7], as: UTF8.self))'"
                            )
                            return
                        }
                        m[i] = x
                    }
                    mag.append(m)
                }
            }
        }
        if let failure { throw failure }
        guard let format else { throw ReadError(path: path, line: nil, message: "no header line (empty file?)") }
        return Dataset(format: format, samples: samples, magnetometer: hasMag ? mag : nil)
    }

    /// Every `n`-th sample (samples 0, n, 2n, …), each with its own time and readings: the stream
    /// a sensor read at 1/n of the rate delivers. `n` 1 returns the input.
    public static func decimate<Row>(_ samples: [Row], keepingEvery n: Int) -> [Row] {
        precondition(n >= 1, "n must be at least 1")
        if n == 1 { return samples }
        return stride(from: 0, to: samples.count, by: n).map { samples[$0] }
    }

    private static func split(_ line: UnsafeBufferPointer<UInt8>) -> [UnsafeBufferPointer<UInt8>] {
        var fields: [UnsafeBufferPointer<UInt8>] = []
        fields.reserveCapacity(12)
        var s = 0
        for i in 0...line.count where i == line.count || line[i] == UInt8(ascii: ",") {
            fields.append(UnsafeBufferPointer(rebasing: line[s..<i]))
            s = i + 1
        }
        return fields
    }

    private static func number(_ field: UnsafeBufferPointer<UInt8>) -> Double? {
        // strtod on a bounded, NUL-terminated copy: fast and accepts 'nan'/exponents like Python wrote them.
        var buf = [CChar](repeating: 0, count: field.count + 1)
        for i in 0..<field.count { buf[i] = CChar(bitPattern: field[i]) }
        return buf.withUnsafeBufferPointer { p -> Double? in
            var endp: UnsafeMutablePointer<CChar>?
            let v = strtod(p.baseAddress!, &endp)
            guard let endp, endp != UnsafeMutablePointer(mutating: p.baseAddress!) else { return nil }
            // Only trailing spaces may follow the number.
            var e = endp
            while e.pointee == 0x20 { e += 1 }
            return e.pointee == 0 ? v : nil
        }
    }

    /// Decompresses with zlib (Debian's zlib1g, through the CZlib module).
    private static func gunzip(path: String) throws(ReadError) -> Data {
        guard let gz = gzopen(path, "rb") else {
            throw ReadError(path: path, line: nil, message: SystemError("cannot open").reason)
        }
        defer { gzclose(gz) }
        var out = Data()
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { gzread(gz, $0.baseAddress, UInt32($0.count)) }
            // A truncated or corrupt stream ends with an error, not with end of file.
            var code: Int32 = 0
            let message = String(cString: gzerror(gz, &code))
            if n < 0 || (code != Z_OK && code != Z_STREAM_END) {
                throw ReadError(path: path, line: nil, message: "cannot decompress: \(message)")
            }
            if n == 0 { return out }
            out.append(contentsOf: chunk[0..<Int(n)])
        }
    }
}
