// SPDX-License-Identifier: Apache-2.0
import ArgumentParser
import Logging
import TiltBridge
import TiltCommandLine
import TiltConfig
import TiltLogging
import TiltProtocol
import TiltService
import TiltSystemd

/// `tiltd mqtt`: the daemon's socket bridged to an MQTT broker (docs/mqtt.md).
struct MQTTBridgeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mqtt",
        abstract: "Bridge the daemon's socket to an MQTT broker (Home Assistant discovery, shared rounds).",
        discussion: """
            Reads [mqtt] from the config, connects to the daemon's socket ([socket] path) and to the \
            broker, and publishes under [mqtt] topic_prefix. Both connections are retried with backoff. \
            Topics, Home Assistant discovery and shared rounds: docs/mqtt.md.
            """)

    @OptionGroup var options: ConfigOptions

    func run() async throws {
        let config = try options.load()
        guard config.mqtt.enabled else {
            throw ValidationFailure(message: "\(options.config): no enabled [mqtt] table; see docs/mqtt.md")
        }
        let level = Logger.Level(rawValue: config.log.level) ?? .info
        _ = TiltLogHandler.bootstrap(
            output: .standardError(style: LogOutputStyle(setting: config.log.style)), level: level)
        let logger = makeLogger("tiltd.mqtt", level: config.log.level)
        do {
            try await Bridge(config: config, version: TiltdVersion.string, logger: logger).run()
        } catch let e as ConfigError {
            throw ValidationFailure(message: e.description)
        } catch {
            throw ValidationFailure(message: "tiltd mqtt: \(error)")
        }
    }
}
