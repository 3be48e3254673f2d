/// The "places near me" prompt deck: names of places within `radius` of a position, in the
/// chosen categories, nearest first, each name once. The game shuffles them without repeats in a
/// round; with no fix the caller falls back to its configured deck (`prompts()` returns nil).
public struct NearbyPlaces: Sendable {
    /// Configuration ([places] nearby_*).
    public struct Options: Sendable, Equatable {
        /// Metres.
        public var radius = 2_000.0
        /// Normalised categories (see `Place.normalizedCategory`); empty = all.
        public var categories: Set<String> = ["restaurant", "cafe", "bakery", "food market"]
        /// At most this many names, nearest first.
        public var limit = 100
        public init() {}
    }

    public let options: Options
    /// The places that pass the category filter.
    public let places: [Place]
    private let index: SpatialIndex
    /// The latest positioned fix seen by `update`.
    public private(set) var latest: Fix?

    public init(places all: [Place], options: Options = Options()) {
        self.options = options
        let cats = Set(options.categories.map(Place.normalizedCategory))
        places = cats.isEmpty ? all : all.filter { cats.contains($0.category) }
        // Cells of half the radius: a query touches ~5×5 buckets.
        var idx = SpatialIndex(cellSize: max(50, options.radius / 2))
        for (i, p) in places.enumerated() { idx.insert(Int32(i), at: p.point, reach: 0) }
        index = idx
    }

    /// Remembers the latest fix that has a position.
    public mutating func update(_ fix: Fix) {
        if fix.point != nil { latest = fix }
    }

    /// Prompts near the latest fix, or nil when there has been no positioned fix.
    public func prompts() -> [String]? {
        guard let f = latest else { return nil }
        return prompts(near: f)
    }

    /// Prompt names near `fix` (empty when it has no position).
    public func prompts(near fix: Fix) -> [String] {
        guard let p = fix.point else { return [] }
        return names(near: p)
    }

    /// Names within the radius of `p`, nearest first, duplicates removed, at most `limit`.
    public func names(near p: GeoPoint) -> [String] {
        let local = LocalDistance(centre: p)
        let r2 = options.radius * options.radius
        var hits: [(d2: Double, i: Int32)] = []
        // Each place sits in exactly one bucket (reach 0), so no item is seen twice.
        index.forEachCandidate(near: p, radius: options.radius) { i in
            let d2 = local.distanceSquared(to: places[Int(i)].point)
            if d2 <= r2 { hits.append((d2, i)) }
        }
        hits.sort { $0.d2 < $1.d2 || ($0.d2 == $1.d2 && $0.i < $1.i) }
        var seen = Set<String>()
        var out: [String] = []
        for h in hits {
            let name = places[Int(h.i)].name
            if seen.insert(name).inserted {
                out.append(name)
                if out.count >= options.limit { break }
            }
        }
        return out
    }
}
