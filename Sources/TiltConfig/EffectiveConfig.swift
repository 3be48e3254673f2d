// SPDX-License-Identifier: Apache-2.0
import TiltCore

/// Renders the effective configuration as TOML (for `tiltd check-config`): every table of
/// `Configuration.tables`, each key with its value in force, rendered by its declaration.
public enum EffectiveConfig {
    /// The whole configuration, every key with its value in force.
    public static func render(_ c: Configuration) -> String {
        "# effective configuration" + (c.sourceFile.map { " of \($0)" } ?? "") + "\n"
            + Configuration.tables.compactMap { $0.render(c) }.joined(separator: "\n")
    }
}
