// SPDX-License-Identifier: Apache-2.0
import TiltConfig

/// The files a configuration names and the daemon reads at start and on reload (the places
/// file), checked the same way, so `tiltd check-config` refuses what `tiltd run` would.
public enum ReferencedFiles {
    /// Reads and parses every file the daemon would; the first problem as a `ConfigError`
    /// naming the key (`places.file`).
    public static func check(_ config: Configuration) throws(ConfigError) {
        _ = try PlacesComponent.loadPlaces(config)
    }
}
