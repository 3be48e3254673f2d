// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltProtocol

/// What the live view draws around the wearer, offline, without map tiles: the places within
/// `radius` (name, category, distance, and where they lie in metres east/north of the fix) and
/// the quest cells that cover that square. Pure: the relay calls it on a fix at most once a second.
public struct NearbyMap: Sendable {
    /// The configured places (`[places]`) searched for those within `radius`.
    public let places: [Place]
    /// The quest grid drawn, or nil when there are no quests.
    public let grid: GeoGrid?
    /// Half the side of the square drawn, metres.
    public let radius: Double
    /// At most this many places, nearest first.
    public let limit: Int

    /// A map of `places` and, with `questCellSize` (metres), the quest cells; `radius` in metres.
    public init(places: [Place], questCellSize: Double?, radius: Double = 400, limit: Int = 40) {
        self.places = places; self.radius = radius; self.limit = limit
        grid = questCellSize.map { GeoGrid(cellSize: $0) }
    }

    /// The `web` line (`event` = `nearby`) for a fix at `p` with uncertainty `eph` metres.
    public func line(at p: GeoPoint, eph: Double?) -> JSONObject {
        let kx = Geo.earthRadius * .pi / 180 * cos(p.lat * .pi / 180)
        let ky = Geo.earthRadius * .pi / 180
        func east(_ lon: Double) -> Double { Geo.normalizedLongitude(lon - p.lon) * kx }
        func north(_ lat: Double) -> Double { (lat - p.lat) * ky }

        var near: [(d: Double, e: Double, n: Double, place: Place)] = []
        for pl in places {
            let e = east(pl.point.lon), n = north(pl.point.lat)
            guard abs(e) <= radius, abs(n) <= radius else { continue }
            near.append(((e * e + n * n).squareRoot(), e, n, pl))
        }
        near.sort { $0.d < $1.d }
        var out: JSONObject = [
            "class": "web", "event": "nearby", "lat": .number(p.lat), "lon": .number(p.lon),
            "radius_m": .number(radius),
        ]
        if let eph { out["eph_m"] = .number(eph) }
        out["places"] = .array(
            near.prefix(limit).map { h in
                .object([
                    "name": .string(h.place.name), "category": .string(h.place.category),
                    "distance_m": .number(h.d.rounded()), "east_m": .number(h.e.rounded()),
                    "north_m": .number(h.n.rounded()),
                ])
            })
        var cells: [JSONValue] = []
        if let grid {
            let here = grid.cell(p)
            grid.forEachCell(near: p, radius: radius * 1.5) { c in
                let b = grid.bounds(c)
                cells.append(
                    .object([
                        "cell": .int(c.id), "cell_name": .string(c.description), "here": .bool(c == here),
                        "west_m": .number(east(b.west).rounded()), "south_m": .number(north(b.south).rounded()),
                        "width_m": .number((b.width * kx).rounded()),
                        "height_m": .number(((b.north - b.south) * ky).rounded()),
                    ]))
            }
        }
        out["cells"] = .array(cells)
        return out
    }
}
