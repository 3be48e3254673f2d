// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Logging
import TiltConfig
import TiltPlatform

/// Options every subcommand that reads the config takes.
public struct ConfigOptions: ParsableArguments {
    /// The configuration file to read.
    @Option(name: .long, help: "Configuration file.")
    public var config: String = Configuration.defaultPath

    /// Creates the options with the default path (ArgumentParser fills them in).
    public init() {}

    /// Reads and checks the file; an invalid one becomes a `ValidationFailure` naming file, line and key.
    public func load() throws -> Configuration {
        do {
            return try Configuration.load(path: config)
        } catch {
            throw ValidationFailure(message: error.description)
        }
    }
}

/// An error printed as-is, exit status 1.
public struct ValidationFailure: Error, CustomStringConvertible {
    /// The text printed.
    public var message: String
    /// An error that prints `message`.
    public init(message: String) { self.message = message }
    /// The text printed.
    public var description: String { message }
}

/// A logger labelled `label` at the config's `log_level` (info when it is not a level's name).
public func makeLogger(_ label: String, level: String) -> Logger {
    var l = Logger(label: label)
    l.logLevel = Logger.Level(rawValue: level) ?? .info
    return l
}

/// Standard output or error written unbuffered, as bytes (what `FileHandle.standardOutput`
/// did, without the full Foundation).
public struct StandardStream: Sendable {
    let fd: Int32
    /// File descriptor 1.
    public static let output = StandardStream(fd: 1)
    /// File descriptor 2.
    public static let error = StandardStream(fd: 2)

    /// Writes all of `bytes` (short and interrupted writes made again); a closed stream is ignored.
    public func write(_ bytes: some Sequence<UInt8>) { try? Syscall.writeAll(fd, Array(bytes)) }
}
