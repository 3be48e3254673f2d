// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// The calibration file (`[calibration] file` in the main config): a single `[calibration]`
/// table that `tiltd calibrate` and the daemon's bias persistence rewrite, so the user's main
/// config — its comments and layout — is never touched.
///
/// Writes are atomic: the new text goes to a temporary file in the same directory, is fsynced,
/// renamed over the old file, and the directory is fsynced, so a power cut leaves either the old
/// or the new file, never a torn one. An update keeps every key the current change does not set,
/// and writers serialise on an flock of the directory so two updates cannot lose each other's keys.
public enum CalibrationFile {
    /// The values a calibration file holds; nil = the key is absent (the main config's value, or
    /// the default, applies).
    public struct Contents: Sendable, Equatable {
        /// Accelerometer offset, m/s², subtracted first; nil keeps the file's.
        public var accelOffset: Vector3?
        /// Per-axis accelerometer scale; nil keeps the file's.
        public var accelScale: Vector3?
        /// A full 3×3 accelerometer model replacing the scale; nil keeps the file's.
        public var accelMatrix: Matrix3?
        /// Gyro bias, rad/s; nil keeps the file's.
        public var gyroBias: Vector3?
        /// The neutral head pose [w, x, y, z]; nil keeps the file's.
        public var neutral: Quaternion?
        /// The head frame (`tiltd calibrate neutral`): up and forward in the sensor frame; both or neither.
        public var headUp: Vector3?
        /// See `headUp`.
        public var headForward: Vector3?
        /// Magnetometer hard-iron offset, µT (`tiltd calibrate mag`); nil keeps the file's.
        public var magOffset: Vector3?
        /// Magnetometer soft-iron matrix (`tiltd calibrate mag`); nil keeps the file's.
        public var magMatrix: Matrix3?

        /// An update that sets only the values given.
        public init(
            accelOffset: Vector3? = nil, accelScale: Vector3? = nil, accelMatrix: Matrix3? = nil,
            gyroBias: Vector3? = nil, neutral: Quaternion? = nil, headUp: Vector3? = nil, headForward: Vector3? = nil,
            magOffset: Vector3? = nil, magMatrix: Matrix3? = nil
        ) {
            self.accelOffset = accelOffset; self.accelScale = accelScale; self.accelMatrix = accelMatrix
            self.gyroBias = gyroBias; self.neutral = neutral; self.headUp = headUp; self.headForward = headForward
            self.magOffset = magOffset; self.magMatrix = magMatrix
        }

        /// `base` with the keys present here replaced.
        public func applied(over base: IMUCalibration) -> IMUCalibration {
            var c = base
            if let v = accelOffset { c.accelOffset = v }
            if let v = accelScale { c.accelScale = v }
            if let v = accelMatrix { c.accelMatrix = v }
            if let v = gyroBias { c.gyroBias = v }
            if let v = neutral { c.neutral = v }
            if let v = headUp { c.headUp = v }
            if let v = headForward { c.headForward = v }
            if let v = magOffset { c.magOffset = v }
            if let v = magMatrix { c.magMatrix = v }
            return c
        }
    }

    /// A write that failed; the old file is unchanged.
    public struct WriteError: Error, CustomStringConvertible {
        /// What went wrong, with the file.
        public var description: String
    }

    /// Reads and validates the file (file:line errors, as the config loader gives them).
    /// A file that does not exist reads as empty.
    public static func read(path: String) throws(ConfigError) -> Contents {
        guard FileManager.default.fileExists(atPath: path) else { return Contents() }
        let text: String
        do { text = try FileIO.readText(path) } catch {
            throw ConfigError(
                file: path, line: nil, key: "", message: error.reason)
        }
        return try parse(text: text, file: path)
    }

    /// Parses calibration-file text with the loader's validation, noting which keys are present.
    static func parse(text: String, file: String) throws(ConfigError) -> Contents {
        let doc = try TOMLDocument(text: text, file: file)
        var root = TableReader(doc: doc, path: "", table: doc.root)
        var out = Contents()
        if var t = try root.table("calibration") {
            let cal = try Configuration.readCalibration(&t, into: .none)
            try t.finish()
            let present = Set(doc.root["calibration"]?.objectValue?.keys.map { $0 } ?? [])
            if present.contains("accel_offset") { out.accelOffset = cal.accelOffset }
            if present.contains("accel_scale") { out.accelScale = cal.accelScale }
            if present.contains("accel_matrix") { out.accelMatrix = cal.accelMatrix }
            if present.contains("gyro_bias") { out.gyroBias = cal.gyroBias }
            if present.contains("neutral") { out.neutral = cal.neutral }
            if present.contains("head_up") { out.headUp = cal.headUp }
            if present.contains("head_forward") { out.headForward = cal.headForward }
            if present.contains("mag_offset") { out.magOffset = cal.magOffset }
            if present.contains("mag_matrix") { out.magMatrix = cal.magMatrix }
        }
        try root.finish()
        return out
    }

    /// The file's text. `note` (one line, e.g. what changed and when) goes into the header.
    public static func render(_ c: Contents, note: String? = nil) -> String {
        func n(_ x: Double) -> String {
            var s = cFormat("%.9g", x)
            if !s.contains(".") && !s.contains("e") && !s.contains("n") { s += ".0" }
            return s
        }
        func list(_ xs: [Double]) -> String { "[" + xs.map(n).joined(separator: ", ") + "]" }
        var out = """
            # tiltd calibration, written by `tiltd calibrate` (and by the daemon when the main config
            # sets [calibration] persist_gyro_bias = true). This file is rewritten whole, so keep your
            # own notes in the main config. Its values override the main config's [calibration] table.

            """
        if let note { out += "# Last change: \(note.replacing("\n", with: " "))\n" }
        out += "\n[calibration]\n"
        if c.accelOffset != nil || c.accelScale != nil || c.accelMatrix != nil {
            out +=
                "# Accelerometer, m/s²: a_cal = M · (a − accel_offset); M = diag(accel_scale), or accel_matrix (row-major) when set.\n"
        }
        if let v = c.accelOffset { out += "accel_offset = \(list(v.array))\n" }
        if let v = c.accelScale { out += "accel_scale = \(list(v.array))\n" }
        if let m = c.accelMatrix { out += "accel_matrix = \(list(m.rowMajor))\n" }
        if let v = c.gyroBias {
            out += "# Gyroscope bias, rad/s, subtracted from every sample.\ngyro_bias = \(list(v.array))\n"
        }
        if let q = c.neutral {
            out +=
                "# Neutral head pose for the game's relative mode: unit quaternion [w, x, y, z], sensor → z-up world.\n"
            out += "neutral = \(list([q.w, q.x, q.y, q.z]))\n"
        }
        if let u = c.headUp, let f = c.headForward {
            // Why directions and not a quaternion: the heading of a 6-axis attitude drifts, so only
            // directions fixed to the board are meaningful; these two define the head frame.
            out += "# Head frame for the game (look ahead, then nod down once): unit vectors in the sensor frame.\n"
            out += "head_up = \(list(u.array))\nhead_forward = \(list(f.array))\n"
        }
        if c.magOffset != nil || c.magMatrix != nil {
            out +=
                "# Magnetometer (`tiltd calibrate mag`), µT: m_cal = mag_matrix · (m − mag_offset), mag_matrix row-major.\n"
        }
        if let v = c.magOffset { out += "mag_offset = \(list(v.array))\n" }
        if let m = c.magMatrix { out += "mag_matrix = \(list(m.rowMajor))\n" }
        return out
    }

    /// Reads the file, applies `change`, and writes the result atomically (under the directory
    /// lock). Returns what was written. A file that fails to load is left alone and its error
    /// thrown: a broken calibration file is for the user to fix, not for tiltd to overwrite.
    @discardableResult
    public static func update(path: String, note: String? = nil, _ change: (inout Contents) -> Void) throws -> Contents
    {
        let dir = directory(of: path)
        let lock = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard lock >= 0 else { throw WriteError(description: "\(dir): cannot open directory: \(errorText())") }
        defer { close(lock) }
        do { _ = try retryingInterrupts("cannot lock", path: dir) { flock(lock, LOCK_EX) } } catch {
            throw WriteError(description: error.description)
        }
        var contents = try read(path: path)
        change(&contents)
        try write(contents, to: path, note: note)
        return contents
    }

    /// Writes `contents` to `path` atomically (temp file + fsync + rename + directory fsync).
    /// The text is parsed back first, so a value the loader would refuse is never written.
    public static func write(_ contents: Contents, to path: String, note: String? = nil) throws {
        let text = render(contents, note: note)
        _ = try parse(text: text, file: path)
        try writeAtomically(Array(text.utf8), to: path)
    }

    /// Replaces `path` with `bytes` so readers see the old or the new file, never a mix.
    /// Keeps the old file's mode and (when permitted) owner; new files get 0644.
    /// A path that names a device, FIFO or socket (`--out /dev/null`, `/dev/stdout`) is written
    /// into: renaming over it would put a regular file in the device node's place (as root, a
    /// broken /dev/null for the whole machine). A symlink to a file replaces the file it points
    /// at, not the link.
    public static func writeAtomically(_ bytes: [UInt8], to given: String) throws {
        var info = stat()
        if stat(given, &info) == 0, info.st_mode & S_IFMT != S_IFREG {
            return try writeInto(bytes, path: given)
        }
        let path = resolvedLink(given)
        let dir = directory(of: path)
        let name = PathName.lastComponent(of: path)
        var template = Array("\(dir)/.\(name).XXXXXX".utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard fd >= 0 else { throw WriteError(description: "\(dir): cannot create a temporary file: \(errorText())") }
        let tmp = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        var committed = false
        defer {
            if !committed { unlink(tmp) }
        }
        do {
            defer { close(fd) }
            var old = stat()
            if stat(path, &old) == 0 {
                fchmod(fd, old.st_mode & 0o7777)
                _ = fchown(fd, old.st_uid, old.st_gid)  // only root may; otherwise the writer owns it
            } else {
                fchmod(fd, 0o644)
            }
            try writeAll(bytes, to: fd, name: tmp)
            guard fsync(fd) == 0 else { throw WriteError(description: "\(tmp): fsync failed: \(errorText())") }
        }
        guard rename(tmp, path) == 0 else { throw WriteError(description: "\(path): cannot replace: \(errorText())") }
        committed = true
        // The rename lives in the directory: sync it too, or a crash may bring back the old name.
        let dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dfd >= 0 { fsync(dfd); close(dfd) }
    }

    /// Writes `bytes` into an existing non-regular file (no temporary file, no rename).
    private static func writeInto(_ bytes: [UInt8], path: String) throws {
        let fd = open(path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw WriteError(description: "\(path): cannot open: \(errorText())") }
        defer { close(fd) }
        try writeAll(bytes, to: fd, name: path)
    }

    private static func writeAll(_ bytes: [UInt8], to fd: Int32, name: String) throws {
        do { try Syscall.writeAll(fd, bytes, call: "cannot write", path: name) } catch {
            throw WriteError(description: error.description)
        }
    }

    /// The file a symlink (chain) points at; `path` itself when it is no link or dangles.
    private static func resolvedLink(_ path: String) -> String {
        guard let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    static func directory(of path: String) -> String {
        let d = PathName.directory(of: path)
        return d.isEmpty ? "." : d
    }

    static func errorText() -> String { SystemError.text(errno) }
}
