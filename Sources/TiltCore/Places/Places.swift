// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltProtocol

/// A named point of interest from the places file.
public struct Place: Sendable, Equatable {
    /// Stable identifier: the feature's `id` (or `properties.id`), else its name.
    public var id: String
    /// The place's name, shown as a prompt and in place events.
    public var name: String
    /// Normalised category (lower case, `_`/`-` read as spaces): "cafe", "food market", ….
    public var category: String
    /// Where it is.
    public var point: GeoPoint
    /// Per-place override: earns a credit on dwell (`properties.credit`).
    public var credit: Bool?
    /// Per-place override of the fence radius, metres (`properties.radius_m`).
    public var radius: Double?
    /// Per-place override of the dwell time, seconds (`properties.dwell_s`).
    public var dwell: Double?

    /// A place; nil overrides take the `[places]` defaults.
    public init(
        id: String, name: String, category: String, point: GeoPoint,
        credit: Bool? = nil, radius: Double? = nil, dwell: Double? = nil
    ) {
        self.id = id; self.name = name; self.category = Place.normalizedCategory(category); self.point = point
        self.credit = credit; self.radius = radius; self.dwell = dwell
    }

    /// "Food_Market" → "food market": categories compare case- and separator-insensitively.
    public static func normalizedCategory(_ s: String) -> String {
        s.lowercased()
            .split(whereSeparator: { $0 == " " || $0 == "_" || $0 == "-" })
            .joined(separator: " ")
    }
}

/// The contents of a places file: a GeoJSON (RFC 7946) FeatureCollection of Point features.
///
/// Each feature: `geometry` `{"type":"Point","coordinates":[lon, lat]}` (GeoJSON order: longitude
/// first; a third altitude number is ignored); `properties.name` (string, required),
/// `properties.category` (string, default "other"), optional `properties.credit` (bool),
/// `properties.radius_m`, `properties.dwell_s` (positive numbers), and an optional `id`
/// (string or number, at the feature level or in properties).
///
/// Features that are not usable points (other geometry types, missing name, coordinates out of
/// range, bad property types) are skipped and listed in `skipped`, so one bad entry in a large
/// export does not lose the rest; a file that is not a FeatureCollection is an error.
public struct PlacesFile: Sendable {
    /// Why a places file could not be read at all.
    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        /// What is wrong with the file.
        public var message: String
        /// Same as `message`.
        public var description: String { message }
    }

    /// The places read, in file order.
    public var places: [Place]
    /// One line per skipped feature: "feature 12: missing properties.name".
    public var skipped: [String]

    /// A parsed file.
    public init(places: [Place], skipped: [String] = []) { self.places = places; self.skipped = skipped }

    /// Parses the bytes of a GeoJSON file.
    public static func parse(_ bytes: [UInt8]) throws(Error) -> PlacesFile {
        let root: JSONValue
        do { root = try JSONParser.parse(bytes) } catch {
            throw Error(message: "places file is not valid JSON: \(error)")
        }
        guard root["type"]?.stringValue == "FeatureCollection" else {
            throw Error(message: "places file must be a GeoJSON FeatureCollection (\"type\":\"FeatureCollection\")")
        }
        guard let features = root["features"]?.arrayValue else {
            throw Error(message: "places file has no \"features\" array")
        }
        var out = PlacesFile(places: [])
        out.places.reserveCapacity(features.count)
        var seen = Set<String>()
        for (i, f) in features.enumerated() {
            switch feature(f) {
            case .success(var p):
                if seen.contains(p.id) {
                    // Ids key the store's visits and credits: a duplicate would merge two places.
                    var n = 2
                    while seen.contains("\(p.id)#\(n)") { n += 1 }
                    out.skipped.append("feature \(i): duplicate id \"\(p.id)\", renamed \"\(p.id)#\(n)\"")
                    p.id = "\(p.id)#\(n)"
                }
                seen.insert(p.id)
                out.places.append(p)
            case .failure(let reason):
                out.skipped.append("feature \(i): \(reason.message)")
            }
        }
        return out
    }

    /// Parses a GeoJSON text.
    public static func parse(_ text: String) throws(Error) -> PlacesFile { try parse(Array(text.utf8)) }

    private static func feature(_ f: JSONValue) -> Result<Place, Error> {
        func fail(_ m: String) -> Result<Place, Error> { .failure(Error(message: m)) }
        guard f["type"]?.stringValue == "Feature" else { return fail("not a Feature") }
        guard let g = f["geometry"]?.objectValue else { return fail("no geometry") }
        guard g["type"]?.stringValue == "Point" else {
            return fail("geometry \(g["type"]?.stringValue ?? "?") is not a Point")
        }
        guard let c = g["coordinates"]?.arrayValue, c.count >= 2,
            let lon = c[0].doubleValue, let lat = c[1].doubleValue
        else {
            return fail("coordinates must be [lon, lat]")
        }
        guard lat.isFinite, lon.isFinite, abs(lat) <= 90, abs(lon) <= 180 else {
            return fail("coordinates [\(lon), \(lat)] out of range")
        }
        let props = f["properties"]?.objectValue ?? JSONObject()
        guard let name = props["name"]?.stringValue, !name.allSatisfy(\.isWhitespace) else {
            return fail("missing properties.name")
        }
        var category = "other"
        if let v = props["category"] {
            guard let s = v.stringValue else { return fail("properties.category must be a string") }
            category = s
        }
        func idString(_ v: JSONValue?) -> String? {
            switch v {
            case .string(let s)?: return s
            case .int(let i)?: return String(i)
            default: return nil
            }
        }
        let id = idString(f["id"]) ?? idString(props["id"]) ?? name
        var credit: Bool?
        if let v = props["credit"] {
            guard let b = v.boolValue else { return fail("properties.credit must be true or false") }
            credit = b
        }
        func positive(_ key: String) -> Result<Double?, Error> {
            guard let v = props[key] else { return .success(nil) }
            guard let d = v.doubleValue, d.isFinite, d > 0 else {
                return .failure(Error(message: "properties.\(key) must be a positive number"))
            }
            return .success(d)
        }
        let radius: Double?, dwell: Double?
        switch positive("radius_m") {
        case .success(let d): radius = d;
        case .failure(let e): return .failure(e)
        }
        switch positive("dwell_s") {
        case .success(let d): dwell = d;
        case .failure(let e): return .failure(e)
        }
        return .success(
            Place(
                id: id, name: name, category: category, point: GeoPoint(lat: lat, lon: lon),
                credit: credit, radius: radius, dwell: dwell))
    }
}

/// A `[[geofence]]` entry from the config. The lead's config code maps TOML onto it and calls
/// `validate()`.
public struct Geofence: Sendable, Equatable {
    /// The geofence's name (unique in the config).
    public var name: String
    /// Centre latitude, degrees.
    public var lat: Double
    /// Centre longitude, degrees.
    public var lon: Double
    /// Metres.
    public var radius: Double
    /// Seconds inside before `dwell` fires.
    public var dwell: Double
    /// Seconds after a credit at this fence before it can earn another.
    public var cooldown: Double
    /// Whether a dwell here earns a credit.
    public var credit: Bool

    /// Default dwell time: 10 minutes.
    public static let defaultDwell = 600.0
    /// Default credit cooldown: 1 hour.
    public static let defaultCooldown = 3600.0

    /// A geofence (radius metres, dwell and cooldown seconds).
    public init(
        name: String, lat: Double, lon: Double, radius: Double,
        dwell: Double = Geofence.defaultDwell, cooldown: Double = Geofence.defaultCooldown,
        credit: Bool = false
    ) {
        self.name = name; self.lat = lat; self.lon = lon; self.radius = radius
        self.dwell = dwell; self.cooldown = cooldown; self.credit = credit
    }

    /// Throws a message naming the bad field, for `check-config`.
    public func validate() throws(PlacesFile.Error) {
        if name.allSatisfy(\.isWhitespace) {
            throw .init(message: "geofence: name must not be empty")
        }
        if !(lat.isFinite && abs(lat) <= 90) { throw .init(message: "geofence \(name): lat must be within -90…90") }
        if !(lon.isFinite && abs(lon) <= 180) { throw .init(message: "geofence \(name): lon must be within -180…180") }
        if !(radius.isFinite && radius > 0 && radius <= 100_000) {
            throw .init(message: "geofence \(name): radius must be > 0 and ≤ 100000 m")
        }
        if !(dwell.isFinite && dwell >= 0) { throw .init(message: "geofence \(name): dwell must be ≥ 0 s") }
        if !(cooldown.isFinite && cooldown >= 0) { throw .init(message: "geofence \(name): cooldown must be ≥ 0 s") }
    }
}

/// One area the monitor watches: a config geofence or a place acting as one.
public struct Fence: Sendable, Equatable {
    /// Stable key for events and the store: "geofence:<name>" or "place:<id>".
    public var key: String
    /// The name shown in place events.
    public var name: String
    /// The place's category, or nil for a config geofence.
    public var category: String?
    /// The fence's centre.
    public var centre: GeoPoint
    /// Radius, metres.
    public var radius: Double
    /// Seconds inside before `dwell`.
    public var dwell: Double
    /// At most one credit per this many seconds.
    public var cooldown: Double
    /// Whether a dwell earns a credit.
    public var credit: Bool

    /// A fence.
    public init(
        key: String, name: String, category: String?, centre: GeoPoint, radius: Double,
        dwell: Double, cooldown: Double, credit: Bool
    ) {
        self.key = key; self.name = name; self.category = category; self.centre = centre
        self.radius = radius; self.dwell = dwell; self.cooldown = cooldown; self.credit = credit
    }

    /// A config geofence as a fence.
    public init(_ g: Geofence) {
        self.init(
            key: "geofence:\(g.name)", name: g.name, category: nil, centre: GeoPoint(lat: g.lat, lon: g.lon),
            radius: g.radius, dwell: g.dwell, cooldown: g.cooldown, credit: g.credit)
    }

    /// How places become fences when the config asks for it ([places] fence defaults).
    public struct PlaceDefaults: Sendable, Equatable {
        /// Metres; a café's door to its back wall plus GPS slack.
        public var radius: Double = 30
        /// Seconds inside before `dwell`.
        public var dwell: Double = Geofence.defaultDwell
        /// At most one credit per this many seconds.
        public var cooldown: Double = Geofence.defaultCooldown
        /// Categories that earn credits when a place has no `credit` property.
        public var creditCategories: Set<String> = []
        /// The defaults.
        public init() {}
    }

    /// A place as a fence, with its own overrides taking precedence over `defaults`.
    public init(_ p: Place, defaults: PlaceDefaults) {
        self.init(
            key: "place:\(p.id)", name: p.name, category: p.category, centre: p.point,
            radius: p.radius ?? defaults.radius, dwell: p.dwell ?? defaults.dwell,
            cooldown: defaults.cooldown,
            credit: p.credit ?? defaults.creditCategories.contains(p.category))
    }
}
