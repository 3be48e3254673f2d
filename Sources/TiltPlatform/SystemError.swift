// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#endif

/// A failed system call: which call, the errno it set, the path it was about (if any), and the C
/// library's text for the errno. The one error of the platform layer, so every message about a
/// failing call reads alike ("PATH: CALL: reason") and the errno stays there for the caller to test.
public struct SystemError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The call or step that failed, in words for a message: "open", "cannot read", "poll".
    public var call: String
    /// The errno it failed with (0 when the failure was not an errno, e.g. a short file).
    public var code: Int32
    /// The file or address the call was about; nil when there is none.
    public var path: String?

    /// A failure of `call` with `code` (default: the current errno), about `path`.
    public init(_ call: String, code: Int32 = errno, path: String? = nil) {
        self.call = call
        self.code = code
        self.path = path
    }

    /// "call: reason", without the path (for messages that name the file themselves).
    public var reason: String { code == 0 ? call : "\(call): \(Self.text(code))" }

    /// "PATH: call: reason", or "call: reason" without a path.
    public var description: String { path.map { "\($0): \(reason)" } ?? reason }

    /// Whether a non-blocking call found nothing to do (EAGAIN / EWOULDBLOCK).
    public var isWouldBlock: Bool { code == EAGAIN || code == EWOULDBLOCK }

    /// The C library's text for errno `code`, e.g. "No such file or directory"; with `resolver`, the
    /// resolver's text for a getaddrinfo result ("Name or service not known"). The one place Sources
    /// ask the C library for either, so the wording is the same in every message.
    public static func text(_ code: Int32, resolver: Bool = false) -> String {
        String(cString: resolver ? gai_strerror(code) : UnsafePointer(strerror(code)))
    }
}
