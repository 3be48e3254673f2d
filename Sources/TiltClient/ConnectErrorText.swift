// SPDX-License-Identifier: Apache-2.0
import Glibc
import NIOCore
import NIOPosix
import TiltPlatform

/// A failed connect to the daemon's socket in plain words, for the logs and status lines of its
/// clients (`tiltd web`, `tiltd mqtt`, `tiltd monitor`, `tiltd reload`): "no such file or directory (errno: 2)", not NIO's
/// "connect(descriptor:addr:size:): No such file or directory (errno: 2)" inside its wrappers.
public enum ConnectErrorText {
    /// Why connecting to the socket at `path` failed: "no socket at PATH" when it is not there,
    /// else "cannot connect to PATH: " and the reason.
    public static func connectFailure(_ error: any Error, path: String) -> String {
        errnoCode(error) == ENOENT ? "no socket at \(path)" : "cannot connect to \(path): \(describe(error))"
    }

    static func errnoCode(_ error: any Error) -> Int32? {
        switch error {
        case let e as IOError: e.errnoCode
        case let e as NIOConnectionError: e.connectionErrors.first.flatMap { errnoCode($0.error) }
        default: nil
        }
    }

    /// The reason `error` gives, without the system call's Swift name.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let e as IOError:
            let text = SystemError.text(e.errnoCode)
            return text.prefix(1).lowercased() + text.dropFirst() + " (errno: \(e.errnoCode))"
        case let e as NIOConnectionError:
            return e.connectionErrors.first.map { describe($0.error) } ?? "\(error)"
        default:
            return "\(error)"
        }
    }
}
