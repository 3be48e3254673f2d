// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Glibc
import TiltCommandLine
import TiltPlatform

/// `tiltd web`: the players' screen lives in its own executable, `tiltd-web`, installed beside
/// `tiltd`, so that the daemon's binary links neither Hummingbird nor, through swift-metrics, the
/// full Foundation with ICU's data (docs/hardware.md, "Footprint"). `tiltd web ARGS` replaces
/// itself with `tiltd-web ARGS` (same process, so systemd's unit and a shell's job control see
/// one program). `Tiltd.main` hands the arguments over before parsing, so `tiltd web --help`
/// prints tiltd-web's own help; this subcommand is here for `tiltd --help` and tiltd(8).
struct Web: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Serve the game screen, the live view and /metrics over HTTP and WebSocket.",
        discussion: """
            Runs tiltd-web, installed beside tiltd, with the same arguments: --config FILE, \
            --listen HOST:PORT (tiltd web --help lists them). It connects to the daemon's socket as \
            a client and serves [web] listen (default 127.0.0.1:8080). See docs/web.md.
            """)

    @Argument(parsing: .captureForPassthrough, help: "tiltd-web's options.")
    var arguments: [String] = []

    func run() throws { try Self.exec(arguments) }

    /// Where `tiltd-web` is: beside this binary (`/proc/self/exe`, so a symlinked `tiltd` works).
    static func executablePath() -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
        let me =
            n > 0
            ? String(decoding: buffer[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : CommandLine.arguments[0]
        let dir = me.split(separator: "/", omittingEmptySubsequences: false).dropLast().joined(separator: "/")
        return (dir.isEmpty ? "." : dir) + "/tiltd-web"
    }

    /// Replaces this process with `tiltd-web arguments`; returns only by throwing.
    static func exec(_ arguments: [String]) throws -> Never {
        let path = executablePath()
        let argv = ["tiltd-web"] + arguments
        var cArgs: [UnsafeMutablePointer<CChar>?] = argv.map { strdup($0) } + [nil]
        execv(path, &cArgs)
        let reason = SystemError.text(errno)
        throw ValidationFailure(
            message: "tiltd web: cannot run \(path): \(reason) (scripts/install puts tiltd-web beside tiltd)")
    }
}
