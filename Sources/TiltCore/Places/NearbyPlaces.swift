// SPDX-License-Identifier: Apache-2.0
/// The "places near me" prompt deck: names of places within `radius` of a position, in the
/// chosen categories, nearest first, each name once. The game shuffles them without repeats in a
/// round; with no fix the caller falls back to its configured deck (`prompts()` returns nil).
///
/// `update` keeps the list for the latest fix and recomputes it only after the wearer has moved
/// `requery` metres (default 25 m) from where it was last computed: near the 2 km edge that can
/// admit or drop a place up to 25 m early or late, which no one can notice, and it makes the
/// per-fix cost small. `prompts(near:)` always computes afresh.
public struct NearbyPlaces: Sendable {
    /// Configuration ([places] nearby_*).
    public struct Options: Sendable, Equatable {
        /// Metres.
        public var radius = 2_000.0
        /// Normalised categories (see `Place.normalizedCategory`); empty = all.
        public var categories: Set<String> = ["restaurant", "cafe", "bakery", "food market"]
        /// At most this many names, nearest first.
        public var limit = 100
        /// Metres moved before `update` recomputes the list.
        public var requery = 25.0
        /// The defaults.
        public init() {}
    }

    /// Radius, categories and size of the deck.
    public let options: Options
    /// The places that pass the category filter.
    public let places: [Place]
    // Coordinates and name numbers in flat arrays: the query loop touches only these.
    private let lats: [Double]
    private let lons: [Double]
    private let nameIds: [Int32]
    private let names: [String]
    private let index: SpatialIndex
    /// The latest positioned fix seen by `update`.
    public private(set) var latest: Fix?
    private var cached: (centre: GeoPoint, names: [String])?

    /// An index of the places in `options.categories` (built once; queries are cheap).
    public init(places all: [Place], options: Options = Options()) {
        self.options = options
        let cats = Set(options.categories.map(Place.normalizedCategory))
        places = cats.isEmpty ? all : all.filter { cats.contains($0.category) }
        lats = places.map(\.point.lat)
        lons = places.map(\.point.lon)
        var ids: [String: Int32] = [:]
        var uniq: [String] = []
        nameIds = places.map { p in
            if let i = ids[p.name] { return i }
            let i = Int32(uniq.count)
            ids[p.name] = i
            uniq.append(p.name)
            return i
        }
        names = uniq
        // Cells of half the radius: a query touches ~5×5 buckets.
        var idx = SpatialIndex(cellSize: max(50, options.radius / 2))
        for (i, p) in places.enumerated() { idx.insert(Int32(i), at: p.point, reach: 0) }
        index = idx
    }

    /// Remembers the latest fix that has a position, refreshing the list when it has moved far enough.
    public mutating func update(_ fix: Fix) {
        guard let p = fix.point else { return }
        latest = fix
        if let c = cached, Geo.distance(c.centre, p) < options.requery { return }
        cached = (p, names(near: p))
    }

    /// Prompts near the latest fix, or nil when there has been no positioned fix.
    public func prompts() -> [String]? {
        guard latest != nil else { return nil }
        return cached?.names
    }

    /// Prompt names near `fix` (empty when it has no position), computed now.
    public func prompts(near fix: Fix) -> [String] {
        guard let p = fix.point else { return [] }
        return names(near: p)
    }

    /// Names within the radius of `p`, nearest first, duplicates removed, at most `limit`.
    public func names(near p: GeoPoint) -> [String] {
        let local = LocalDistance(centre: p)
        let r2 = options.radius * options.radius
        // Each hit packed in one UInt64 — the distance² as a Float's bits (non-negative floats
        // order like their bit patterns) above the index — so sorting is a plain integer sort.
        var hits: [UInt64] = []
        hits.reserveCapacity(1024)
        // Each place sits in exactly one bucket (reach 0), so no item is seen twice.
        let buckets = index.buckets(near: p, radius: options.radius)
        lats.withUnsafeBufferPointer { la in
            lons.withUnsafeBufferPointer { lo in
                for bucket in buckets {
                    for i in bucket {
                        let d2 = local.distanceSquared(lat: la[Int(i)], lon: lo[Int(i)])
                        // bounded: a Float's bit pattern (UInt32), not its value.
                        if d2 <= r2 { hits.append(UInt64(Float(d2).bitPattern) << 32 | UInt64(UInt32(bitPattern: i))) }
                    }
                }
            }
        }
        hits.sort()
        var seen = [Bool](repeating: false, count: 0)
        var seenSet = Set<Int32>()
        let useArray = names.count <= 4096
        if useArray { seen = [Bool](repeating: false, count: names.count) }
        var out: [String] = []
        out.reserveCapacity(min(options.limit, hits.count))
        for h in hits {
            let id = nameIds[Int(UInt32(truncatingIfNeeded: h))]
            if useArray {
                if seen[Int(id)] { continue }
                seen[Int(id)] = true
            } else if !seenSet.insert(id).inserted {
                continue
            }
            out.append(names[Int(id)])
            if out.count >= options.limit { break }
        }
        return out
    }
}
