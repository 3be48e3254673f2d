// SPDX-License-Identifier: Apache-2.0
import TiltCore

extension Geofence: ConfigDefaults {
    /// A fence with no name (`[[geofence]]` requires one) and the default sizes.
    public init() { self.init(name: "", lat: 0, lon: 0, radius: 50) }
}

extension Configuration {
    /// `[places]`: the places file and how places act as fences and prompts (see `PlacesComponent`).
    public struct Places: Sendable, Equatable, ConfigDefaults {
        /// A GeoJSON file of places (absolute once loaded).
        public var file: String?
        /// Whether every place is also a geofence.
        public var asFences = true
        /// Radius, dwell, cooldown and credit categories of places' fences.
        public var fenceDefaults = Fence.PlaceDefaults()
        /// The "nearby" deck's radius, categories and size.
        public var nearby = NearbyPlaces.Options()
        /// The defaults.
        public init() {}

        /// The keys of `[places]`.
        static var keys: [ConfigKey<Places>] {
            [
                .path("file", \.file, default: "none", "a GeoJSON file of places (below)"),
                .flag("as_fences", \.asFences, "every place is also a geofence"),
                .number(
                    "fence_radius_m", \.fenceDefaults.radius, in: 1...100_000,
                    "radius of a place's fence (a place may set its own `radius_m`)"),
                .number("fence_dwell_s", \.fenceDefaults.dwell, in: 0...86_400, "inside this long → `dwell`"),
                .number(
                    "fence_cooldown_s", \.fenceDefaults.cooldown, in: 0...31_536_000,
                    "at most one credit per place in this time"),
                .categories(
                    "credit_categories", \.fenceDefaults.creditCategories,
                    "categories whose dwell earns a credit (a place may set `credit`)"),
                .number("nearby_radius_m", \.nearby.radius, in: 10...100_000, "the \"nearby\" deck's radius"),
                .categories(
                    "nearby_categories", \.nearby.categories, default: "restaurant, cafe, bakery, food market",
                    "the \"nearby\" deck's categories"),
                .integer(
                    "nearby_limit", \.nearby.limit, in: 1...10_000, "at most this many nearby names, nearest first"),
            ]
        }
    }

    /// `[quests]`: the quest grid (see `QuestsComponent`).
    public struct Quests: Sendable, Equatable, ConfigDefaults {
        /// Whether quests are announced and can be completed.
        public var enabled = true
        /// Cell size, cooldown and XP.
        public var options = QuestGrid.Options()
        /// The defaults.
        public init() {}
    }

    /// `[credits]` (see `CreditsComponent`).
    public struct Credits: Sendable, Equatable, ConfigDefaults {
        /// Credits spent by one `credits.redeem` unless it names an amount.
        public var redeemAmount = 10
        /// The defaults.
        public init() {}
    }

    /// `[snooze]` (see `PlacesComponent`).
    public struct Snooze: Sendable, Equatable, ConfigDefaults {
        /// Metres to move before a snooze ends by itself.
        public var distance = 50.0
        /// The defaults.
        public init() {}
    }

    /// `[course]`: when the fix's course is reported (see `PlacesComponent`).
    public struct Course: Sendable, Equatable, ConfigDefaults {
        /// Course is reported above this speed, m/s.
        public var onSpeed = 1.0
        /// Speed (m/s) below which course is hidden again.
        public var offSpeed = 0.5
        /// The defaults.
        public init() {}
    }

    static var placesTable: ConfigTable {
        .table(
            "places",
            onReload:
                "the places file is re-read and the fences rebuilt; visits to fences that did not change go on (no second `enter`), new fences fire on the next fix",
            keys: Places.keys.map { $0.lifted(\.places) })
    }

    static var geofenceTable: ConfigTable {
        let keys: [ConfigKey<Geofence>] = [
            .custom(
                "name", \.name, type: "string", default: "required, unique",
                "shown in events; the fence key is `geofence:NAME`",
                read: { (t, _, _) throws(ConfigError) in
                    guard let n = try t.optionalString("name") else {
                        throw t.error("name", "every [[geofence]] needs a name")
                    }
                    return n
                }, render: { ["name = \(TOMLText.quote($0))"] }),
            required("lat", \.lat, in: -90...90, "centre latitude"),
            required("lon", \.lon, in: -180...180, "centre longitude"),
            .number("radius_m", \.radius, in: 1...100_000, "radius"),
            .number("dwell_s", \.dwell, in: 0...86_400, "inside this long → `dwell`"),
            .number("cooldown_s", \.cooldown, in: 0...31_536_000, "at most one credit in this time"),
            .flag("credit", \.credit, "a dwell earns a credit"),
        ]
        return .arrayOfTables(
            "geofence", \.geofences,
            onReload: "like `[places]`: the fences are rebuilt, unchanged ones keep their visits",
            keys: keys,
            check: { (t, fence, before) throws(ConfigError) in
                if before.contains(where: { $0.name == fence.name }) {
                    throw t.error("name", "\"\(fence.name)\" is used by another [[geofence]]")
                }
            })
    }

    /// A coordinate every `[[geofence]]` must have.
    static func required(
        _ name: String, _ path: WritableKeyPath<Geofence, Double>, in range: ClosedRange<Double>, _ meaning: String
    ) -> ConfigKey<Geofence> {
        .custom(
            name, path, type: "degrees \(TOMLText.short(range.lowerBound))–\(TOMLText.short(range.upperBound))",
            default: "required", meaning,
            read: { (t, _, _) throws(ConfigError) in
                guard let v = try t.optionalDouble(name, in: range) else {
                    throw t.error(
                        name,
                        "missing (degrees, \(TOMLText.short(range.lowerBound))…\(TOMLText.short(range.upperBound)))")
                }
                return v
            }, render: { ["\(name) = \($0)"] })
    }

    static var questsTable: ConfigTable {
        let keys: [ConfigKey<Quests>] = [
            .flag("enabled", \.enabled, whenPresent: true, "announce and complete quest cells"),
            .number(
                "cell_m", \.options.cellSize, in: 10...100_000,
                "cell size: latitude bands of this height, each cut into a whole number of cells (valid at the poles and across ±180°)"
            ),
            .number(
                "cooldown_s", \.options.cooldown, in: 0...31_536_000, "after a completion the cell is quiet this long"),
            .integer("base_xp", \.options.baseXP, in: 1...1_000_000, "reward: `max(min_xp, base_xp >> visits)`"),
            .integer("min_xp", \.options.minXP, in: 0...1_000_000, "the least a completion earns"),
        ]
        return .table(
            "quests", onReload: "the grid takes the new options; completions and cooldowns are kept",
            keys: keys.map { $0.lifted(\.quests) })
    }

    static var creditsTable: ConfigTable {
        let amount = ConfigKey<Credits>.integer(
            "redeem_amount", \.redeemAmount, in: 1...1_000_000, "what `credits.redeem` spends by default")
        return .table("credits", onReload: "the new value applies at once", keys: [amount.lifted(\.credits)])
    }

    static var snoozeTable: ConfigTable {
        let distance = ConfigKey<Snooze>.number(
            "distance_m", \.distance, in: 1...100_000, "after `snooze`, events resume once this far away")
        return .table(
            "snooze", onReload: "the new distance applies at once (a running snooze keeps its origin)",
            keys: [distance.lifted(\.snooze)])
    }

    static var courseTable: ConfigTable {
        let keys: [ConfigKey<Course>] = [
            .number(
                "on_speed", \.onSpeed, in: 0...100,
                "course is reported above this speed, m/s (and is the heading without a magnetometer)"),
            .number("off_speed", \.offSpeed, in: 0...100, "… and hidden again below this one (at most `on_speed`)"),
        ]
        return .table(
            "course", onReload: "the new speeds apply at once", keys: keys.map { $0.lifted(\.course) },
            check: { (t, c) throws(ConfigError) in
                if c.course.offSpeed > c.course.onSpeed {
                    throw t.error("off_speed", "must not exceed on_speed (\(c.course.onSpeed))")
                }
            })
    }
}
