// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltClient
import TiltCommandLine
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol
import TiltService

/// `tiltd calibrate gyro` while the daemon runs: the daemon measures (`calibrate.gyro`), this
/// command writes the calibration file and asks the daemon to `reload` it.
///
/// Why: the running daemon holds the IMU's IIO buffer and a second reader is refused, so the
/// command would otherwise have to stop the service. The daemon cannot write the file itself
/// under its unit (/etc/tiltd is read-only there); the command runs as whoever may edit the
/// config (root, through sudo), as it did when it opened the IMU itself.
extension CalibrateGyro {
    /// The daemon's socket when a daemon listens on it (or socket activation would start one);
    /// nil when nothing listens there, and the command opens the IMU itself.
    static func runningDaemon(_ config: Configuration) throws -> String? {
        let path = config.socket.path
        guard let address = UnixSocketAddress(path: path) else { return nil }
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if address.connect(fd) == 0 { return path }
        let e = errno
        // No socket file, or one nobody listens on: no daemon.
        if e == ENOENT || e == ECONNREFUSED || e == ENOTDIR { return nil }
        throw ValidationFailure(
            message:
                "tiltd calibrate gyro: the daemon's socket \(path) is there but cannot be used (\(SystemError.text(e)))): "
                + "the running daemon holds the IMU, so the daemon measures; run this as root (sudo) or as a member of group tiltd"
        )
    }

    /// Asks the daemon at `socket` to measure, then writes the result and has the daemon reload.
    func runInDaemon(_ session: CalibrationSession, socket: String, settle: Double) throws {
        print("tiltd is running and holds the IMU: the daemon measures (\(socket)); the service keeps running.")
        print("Put the device down (or hold it very still) for \(Int(saturating: seconds.rounded())) s…")
        let reply: ReplyBody
        do {
            reply = try DaemonClient.exchange(
                ["cmd": "calibrate.gyro", "seconds": .number(seconds), "settle": .number(settle)],
                socket: socket, timeout: settle + seconds + 30, idPrefix: "tiltd-calibrate-")
        } catch {
            throw ValidationFailure(
                message: "tiltd calibrate gyro: \(Reload.describe(error, path: socket, timeout: settle + seconds + 30))"
            )
        }
        guard let result = GyroCalibrationReplyBody(reply) else {
            var message = reply.error?.message ?? JSONValue.object(reply.fields).jsonText
            if reply.error?.code == .forbidden {
                message += " (run it as root, through sudo, or add this user to [socket] trusted_groups)"
            }
            throw ValidationFailure(message: "tiltd calibrate gyro: \(message); nothing written")
        }
        guard let bias = Self.vector(result.gyroBias) else {
            throw ValidationFailure(
                message: "tiltd calibrate gyro: the daemon's reply has no gyro_bias; nothing written")
        }
        let samples = result.samples ?? 0, covered = result.seconds ?? 0
        print("gyro bias: \(vec(bias)) rad/s (\(vec(bias * (180 / .pi), 3)) °/s)")
        print(
            cFormat(
                "  from %.0f samples over %.2f s still; noise %.4f rad/s RMS (measured by the daemon)", samples,
                covered,
                result.noise ?? 0))
        print("  previous: \(vec(Self.vector(result.previous) ?? session.config.calibration.gyroBias)) rad/s")
        try session.save("gyro_bias", note: cFormat("%.0f samples, %.1f s, measured by the daemon", samples, covered)) {
            $0.gyroBias = bias
        }
        if session.dryRun { return }
        // The file is the daemon's calibration from now on: a reload applies it (a restarted
        // sampler, no lost clients), as `systemctl reload tiltd` would.
        do {
            let r = try DaemonClient.exchange(
                ["cmd": "reload"], socket: socket, timeout: 30, idPrefix: "tiltd-calibrate-")
            if r.ok {
                print("the daemon reloaded its config and uses the new bias")
            } else {
                let why = r.error?.message ?? "refused"
                StandardStream.error.write(
                    "tiltd calibrate gyro: written, but the daemon did not reload: \(why); run `systemctl reload tiltd`\n"
                        .utf8)
            }
        } catch {
            StandardStream.error.write(
                "tiltd calibrate gyro: written, but the daemon did not reload (\(error)); run `systemctl reload tiltd`\n"
                    .utf8)
        }
    }

    static func vector(_ t: Triple?) -> Vector3? { t.map { Vector3($0.x, $0.y, $0.z) } }
}
