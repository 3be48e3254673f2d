// SPDX-License-Identifier: Apache-2.0
import Glibc
import TiltPlatform

/// A deterministic tiling of the whole globe into cells of roughly `cellSize` metres, with no
/// list to maintain: latitude bands of equal height from pole to pole, each band cut into an
/// integer number of equal longitude sectors chosen from the band's circumference at its centre.
///
/// Why this shape: equal-angle lat/lon squares shrink to slivers near the poles, and a grid keyed
/// on projected metres breaks at the antimeridian. Here a cell is ~`cellSize` tall everywhere and
/// ~`cellSize` wide at its band's centre; the sectors of a band meet exactly at ±180°, and the two
/// polar bands hold a handful of wedge cells around each pole.
///
/// A cell's id is stable for a given `cellSize`: `row << 32 | column`, row 0 at the south pole.
public struct GeoGrid: Sendable, Equatable {
    /// Identifies one cell of one grid (ids of grids with other sizes do not compare).
    public struct Cell: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The cell's row (latitude band).
        public var row: Int32
        /// The cell's column in its row.
        public var column: Int32
        /// The cell at `row`, `column`.
        public init(row: Int32, column: Int32) { self.row = row; self.column = column }
        /// The stable integer id: `row << 32 | column`.
        public var id: Int64 { Int64(row) << 32 | Int64(UInt32(bitPattern: column)) }
        /// The cell back from `id`.
        public init(id: Int64) {
            row = Int32(truncatingIfNeeded: id >> 32); column = Int32(truncatingIfNeeded: id & 0xFFFF_FFFF)
        }
        /// The cell's name, "r<row>c<column>".
        public var description: String { "r\(row)c\(column)" }
        /// Ordered by id.
        public static func < (a: Cell, b: Cell) -> Bool { a.id < b.id }
    }

    /// Requested cell edge, metres.
    public let cellSize: Double
    /// Number of latitude bands from pole to pole.
    public let bandCount: Int
    /// Height of one band, degrees of latitude.
    public let bandHeight: Double

    /// - Parameter cellSize: metres, at least 1 and at most ~10,000 km.
    public init(cellSize: Double) {
        precondition(cellSize.isFinite && cellSize >= 1, "cell size must be ≥ 1 m")
        self.cellSize = cellSize
        let halfCircumference = Double.pi * Geo.earthRadius
        bandCount = max(1, Int(saturating: (halfCircumference / cellSize).rounded()))
        bandHeight = 180.0 / Double(bandCount)
    }

    /// Band index (0 = southernmost) for a latitude; ±90° belong to the polar bands.
    @inlinable
    public func row(lat: Double) -> Int {
        min(bandCount - 1, max(0, Int(saturating: ((lat + 90) / bandHeight).rounded(.down))))
    }

    /// Number of cells in band `row`: the band's centre circumference over the cell size,
    /// rounded, at least 1. Symmetric north/south.
    public func columns(row: Int) -> Int {
        let centreLat = -90 + (Double(row) + 0.5) * bandHeight
        let circumference = 2 * Double.pi * Geo.earthRadius * cos(centreLat * Geo.rad)
        return max(1, Int(saturating: (circumference / cellSize).rounded()))
    }

    /// The column in a band with `n` columns for a longitude (any value; wrapped).
    @inlinable
    public func column(lon: Double, columns n: Int) -> Int {
        let l = Geo.normalizedLongitude(lon) + 180  // 0 ..< 360
        return min(n - 1, Int(saturating: (l / 360 * Double(n)).rounded(.down)))
    }

    /// The cell holding a point.
    public func cell(_ p: GeoPoint) -> Cell {
        let r = row(lat: p.lat)
        return Cell(row: Int32(r), column: Int32(column(lon: p.lon, columns: columns(row: r))))
    }

    /// The cell's bounds: south/north latitude, west longitude and its width in degrees
    /// (the east edge is west + width, possibly past 180°, i.e. wrapping).
    public func bounds(_ c: Cell) -> (south: Double, north: Double, west: Double, width: Double) {
        let s = -90 + Double(c.row) * bandHeight
        let n = columns(row: Int(c.row))
        let w = 360.0 / Double(n)
        return (s, s + bandHeight, -180 + Double(c.column) * w, w)
    }

    /// The centre of a cell (for a polar band's wedge, its centre on the band's mid-latitude).
    public func centre(_ c: Cell) -> GeoPoint {
        let b = bounds(c)
        return GeoPoint(lat: (b.south + b.north) / 2, lon: Geo.normalizedLongitude(b.west + b.width / 2))
    }

    /// Calls `body` once for every cell that may hold a point within `radius` metres of `p`
    /// (a superset: the caller checks real distances). Works across the antimeridian (columns
    /// wrap) and near the poles (a band the circle's latitude range reaches at a pole, or whose
    /// longitude span would exceed the band, contributes all its cells).
    public func forEachCell(near p: GeoPoint, radius: Double, _ body: (Cell) -> Void) {
        let dLat = radius / Geo.earthRadius / Geo.rad
        let south = p.lat - dLat, north = p.lat + dLat
        let r0 = row(lat: south), r1 = row(lat: north)
        let touchesPole = south <= -90 || north >= 90
        for r in r0...r1 {
            let n = columns(row: r)
            // The widest longitude span the circle needs in this band is at the band's
            // latitude (within the circle's range) farthest from the equator.
            let bandS = -90 + Double(r) * bandHeight, bandN = bandS + bandHeight
            let farLat = max(abs(max(bandS, south)), abs(min(bandN, north)))
            let cosFar = cos(min(90, farLat) * Geo.rad)
            var all = touchesPole || cosFar < 1e-9
            var dLon = 0.0
            if !all {
                let sinArg = sin(radius / Geo.earthRadius) / cosFar
                if sinArg >= 1 { all = true } else { dLon = asin(sinArg) / Geo.rad }
            }
            if all || dLon * 2 >= 360 {
                for c in 0..<n { body(Cell(row: Int32(r), column: Int32(c))) }
                continue
            }
            let c0 = column(lon: p.lon - dLon, columns: n)
            let c1 = column(lon: p.lon + dLon, columns: n)
            var span = c1 - c0
            if span < 0 { span += n }  // wrapped across ±180°
            if span + 1 >= n {
                for c in 0..<n { body(Cell(row: Int32(r), column: Int32(c))) }
                continue
            }
            for k in 0...span { body(Cell(row: Int32(r), column: Int32((c0 + k) % n))) }
        }
    }
}
