// SPDX-License-Identifier: Apache-2.0
import Dispatch
import FoundationEssentials
import Glibc
import TiltConfig
import TiltPlatform

/// What the bridge needs before it runs: the broker password and the signals that stop it.
extension Bridge {
    /// The password from `[mqtt] password_file` (its first line), refused — naming the file,
    /// line and key of the setting — when others may read the file: it is the device's
    /// broker identity.
    func readPassword() throws -> String? {
        guard let path = m.passwordFile else { return nil }
        let loc =
            m.passwordFileLocation
            ?? ConfigError(file: config.sourceFile ?? "", line: nil, key: "mqtt.password_file", message: "")
        func fail(_ msg: String) -> ConfigError {
            ConfigError(file: loc.file, line: loc.line, key: loc.key, message: msg)
        }
        var st = stat()
        guard stat(path, &st) == 0 else { throw fail("cannot read \(path): \(SystemError.text(errno))") }
        if st.st_mode & 0o077 != 0 {
            throw fail(
                "\(path) is readable by group or others (mode \(String(st.st_mode & 0o777, radix: 8))); chmod 600 it")
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { throw fail("cannot read \(path)") }
        return String(text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
    }

    /// A warning when the broker password would cross the network in clear: a password, no TLS,
    /// and a broker that is not this machine (loopback: 127.0.0.0/8, ::1, localhost).
    static func clearPasswordWarning(_ m: Configuration.MQTT) -> String? {
        guard m.passwordFile != nil, !m.usesTLS else { return nil }
        let h = m.host.lowercased()
        if h == "localhost" || h == "::1" || h.hasPrefix("127.") { return nil }
        return
            "the broker password goes to \(m.host):\(m.port) unencrypted: set [mqtt] tls = true (the system's CA store) or tls_ca_file"
    }

    static func installSignals(_ handler: @escaping @Sendable () -> Void) -> [any DispatchSourceSignal] {
        [SIGTERM, SIGINT].map { sig in
            signal(sig, SIG_IGN)
            let s = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            s.setEventHandler(handler: handler)
            s.resume()
            return s
        }
    }
}
