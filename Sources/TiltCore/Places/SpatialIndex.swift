// SPDX-License-Identifier: Apache-2.0
/// Grid buckets over `GeoGrid`: each item is filed under every cell its reach circle touches,
/// so a point query is one dictionary lookup, and a radius query visits only the cells the
/// radius touches. Built once (places and fences change only on reload), read many times.
public struct SpatialIndex: Sendable {
    /// The grid used for buckets.
    public let grid: GeoGrid
    private var buckets: [Int64: [Int32]] = [:]
    /// Number of items added.
    public private(set) var count = 0

    /// - Parameter cellSize: bucket edge in metres; a few times the typical reach is a good choice.
    public init(cellSize: Double) { grid = GeoGrid(cellSize: cellSize) }

    /// Files item `index` under every cell within `reach` metres of `point`.
    public mutating func insert(_ index: Int32, at point: GeoPoint, reach: Double) {
        grid.forEachCell(near: point, radius: max(0, reach)) { cell in
            buckets[cell.id, default: []].append(index)
        }
        count += 1
    }

    /// Items whose reach circle may contain `p` (a superset; check real distances).
    public func candidates(at p: GeoPoint) -> [Int32] {
        buckets[grid.cell(p).id] ?? []
    }

    /// The non-empty buckets of the cells within `radius` of `p` (see `forEachCandidate`).
    public func buckets(near p: GeoPoint, radius: Double) -> [[Int32]] {
        var out: [[Int32]] = []
        grid.forEachCell(near: p, radius: radius) { cell in
            if let b = buckets[cell.id] { out.append(b) }
        }
        return out
    }

    /// Calls `body` for every item filed in a cell within `radius` of `p`. An item filed under
    /// several cells may be visited more than once; callers that collect should de-duplicate.
    public func forEachCandidate(near p: GeoPoint, radius: Double, _ body: (Int32) -> Void) {
        grid.forEachCell(near: p, radius: radius) { cell in
            if let b = buckets[cell.id] { for i in b { body(i) } }
        }
    }
}
