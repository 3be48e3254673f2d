import Glibc
import NIOCore
import NIOPosix

/// A failed connect to the daemon's socket in plain words, for the logs and status lines of its
/// clients (`tiltd web`, `tiltd mqtt`): "no such file or directory (errno: 2)", not NIO's
/// "connect(descriptor:addr:size:): No such file or directory (errno: 2)" inside its wrappers.
public enum ConnectErrorText {
    /// The reason `error` gives, without the system call's Swift name.
    public static func describe(_ error: any Error) -> String {
        switch error {
        case let e as IOError:
            let text = String(cString: strerror(e.errnoCode))
            return text.prefix(1).lowercased() + text.dropFirst() + " (errno: \(e.errnoCode))"
        case let e as NIOConnectionError:
            return e.connectionErrors.first.map { describe($0.error) } ?? "\(error)"
        default:
            return "\(error)"
        }
    }
}
