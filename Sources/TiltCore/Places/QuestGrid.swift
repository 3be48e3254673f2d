// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// Quests on a global grid: entering a cell that is not cooling down offers a quest
/// (`quest.available`); `complete` from inside the cell grants experience, counts the visit and
/// starts the cell's cooldown.
///
/// Reward: `max(minXP, baseXP >> visits)` where `visits` counts earlier completions of that cell —
/// 100, 50, 25, 12, then 10 for every later visit: new ground pays, the daily café corner less so.
/// Time comes from fixes only.
public struct QuestGrid: Sendable {
    /// Configuration ([quests]).
    public struct Options: Sendable, Equatable {
        /// Cell edge, metres.
        public var cellSize = 200.0
        /// Seconds a cell cools down after a completion.
        public var cooldown = 3600.0
        /// XP for a cell's first completion.
        public var baseXP = 100
        /// The least XP a repeat completion gives.
        public var minXP = 10
        /// Largest eph (95 %, metres) a fix may have to complete a quest; nil = half the cell size.
        public var maxEph: Double? = nil
        /// The defaults.
        public init() {}
    }

    /// What the store keeps per cell.
    public struct CellState: Sendable, Equatable {
        /// Completions so far.
        public var visits: Int
        /// No completion before this fix time, ns.
        public var cooldownUntil: Nanoseconds?
        /// XP earned in the cell.
        public var xp: Int
        /// A cell's state.
        public init(visits: Int = 0, cooldownUntil: Nanoseconds? = nil, xp: Int = 0) {
            self.visits = visits; self.cooldownUntil = cooldownUntil; self.xp = xp
        }
    }

    /// A completed quest, to be written to the store and announced.
    public struct Completion: Sendable, Equatable {
        /// The cell.
        public var cell: GeoGrid.Cell
        /// The grid's cell size, metres.
        public var cellSize: Double
        /// The fix time, ns.
        public var t: Nanoseconds
        /// XP granted.
        public var xp: Int
        /// Completions of this cell including this one.
        public var visits: Int
        /// No completion before this fix time, ns.
        public var cooldownUntil: Nanoseconds

        /// A completion.
        public init(
            cell: GeoGrid.Cell, cellSize: Double, t: Nanoseconds, xp: Int, visits: Int, cooldownUntil: Nanoseconds
        ) {
            self.cell = cell; self.cellSize = cellSize; self.t = t; self.xp = xp; self.visits = visits
            self.cooldownUntil = cooldownUntil
        }

        /// The `quest` `{"event":"completed"}` payload.
        public var event: Event {
            Event(
                .quest, t: t,
                fields: [
                    "event": "completed", "cell": .int(cell.id), "cell_name": .string(cell.description),
                    "xp": .int(Int64(xp)), "visits": .int(Int64(visits)),
                    "cooldown_until_ns": .int(cooldownUntil),
                ])
        }
    }

    /// A quest offered on entering a cell.
    public struct Available: Sendable, Equatable {
        /// The cell entered.
        public var cell: GeoGrid.Cell
        /// The cell's centre.
        public var centre: GeoPoint
        /// The fix time, ns.
        public var t: Nanoseconds
        /// Earlier completions here.
        public var visits: Int
        /// What completing it now would grant.
        public var xp: Int

        /// An announcement.
        public init(cell: GeoGrid.Cell, centre: GeoPoint, t: Nanoseconds, visits: Int, xp: Int) {
            self.cell = cell; self.centre = centre; self.t = t; self.visits = visits; self.xp = xp
        }

        /// The `quest` `{"event":"available"}` payload.
        public var event: Event {
            Event(
                .quest, t: t,
                fields: [
                    "event": "available", "cell": .int(cell.id), "cell_name": .string(cell.description),
                    "lat": .double(centre.lat), "lon": .double(centre.lon),
                    "visits": .int(Int64(visits)), "xp": .int(Int64(xp)),
                ])
        }
    }

    /// Why `complete` refused (the reply's error code and message).
    public enum Refusal: Swift.Error, Sendable, Equatable, CustomStringConvertible {
        case noFix
        case uncertain(eph: Double, limit: Double)
        case notInCell(requested: GeoGrid.Cell, current: GeoGrid.Cell)
        case coolingDown(until: Nanoseconds)

        /// The error reply's code (declared with the others in `ProtocolError.Code`).
        public var code: ProtocolError.Code {
            switch self {
            case .noFix: .noFix
            case .uncertain: .uncertain
            case .notInCell: .notInCell
            case .coolingDown: .coolingDown
            }
        }

        /// A message for the error reply.
        public var description: String {
            switch self {
            case .noFix: "no position fix yet"
            case .uncertain(let e, let l): "position too uncertain (eph \(Int(e)) m > \(Int(l)) m)"
            case .notInCell(let r, let c): "not inside cell \(r) (you are in \(c))"
            case .coolingDown(let u): "cell is cooling down until \(u) ns"
            }
        }
    }

    /// Cell size, cooldown and XP.
    public let options: Options
    /// The cells.
    public let grid: GeoGrid
    private var cells: [Int64: CellState]
    /// The cell of the latest positioned fix.
    public private(set) var currentCell: GeoGrid.Cell?
    private var announced = false
    private var lastFix: Fix?

    /// - Parameter cells: saved state per cell id (from the store) for this cell size.
    /// Every cell's state (completions, cooldowns), to carry into a grid with new options.
    public var cellStates: [Int64: CellState] { cells }

    /// Puts a cell back as it was (`state` nil: never visited), e.g. when a completion could not
    /// be stored.
    public mutating func restore(cell id: Int64, to state: CellState?) { cells[id] = state }

    /// A grid with `cells`' history (from the store).
    public init(options: Options = Options(), cells: [Int64: CellState] = [:]) {
        self.options = options
        grid = GeoGrid(cellSize: options.cellSize)
        self.cells = cells
    }

    /// The XP a completion grants after `visits` earlier completions.
    public func reward(visits: Int) -> Int {
        let shifted = visits >= 62 ? 0 : options.baseXP >> visits
        return max(options.minXP, shifted)
    }

    /// The saved state of a cell.
    public func state(_ c: GeoGrid.Cell) -> CellState { cells[c.id] ?? CellState() }

    private func cooling(_ c: GeoGrid.Cell, at t: Nanoseconds) -> Nanoseconds? {
        guard let u = cells[c.id]?.cooldownUntil, t < u else { return nil }
        return u
    }

    /// Feeds one fix. Offers a quest when the wearer enters a cell that is not cooling down, or
    /// when the cooldown of the cell they are standing in runs out.
    public mutating func update(_ fix: Fix) -> Available? {
        guard let p = fix.point, let t = fix.time else { return nil }
        lastFix = fix
        let c = grid.cell(p)
        if c != currentCell { currentCell = c; announced = false }
        guard !announced, cooling(c, at: t) == nil else { return nil }
        announced = true
        let v = state(c).visits
        return Available(cell: c, centre: grid.centre(c), t: t, visits: v, xp: reward(visits: v))
    }

    /// Completes the quest of `cell` (default: the cell of the latest fix) using the latest fix.
    public mutating func complete(cell requested: GeoGrid.Cell? = nil) -> Result<Completion, Refusal> {
        guard let fix = lastFix, let p = fix.point, let t = fix.time else { return .failure(.noFix) }
        let limit = options.maxEph ?? options.cellSize / 2
        // A fix that gives no uncertainty is judged by the assumed one, not taken as exact.
        if fix.ephOrAssumed > limit { return .failure(.uncertain(eph: fix.ephOrAssumed, limit: limit)) }
        let here = grid.cell(p)
        let c = requested ?? here
        guard c == here else { return .failure(.notInCell(requested: c, current: here)) }
        if let u = cooling(c, at: t) { return .failure(.coolingDown(until: u)) }
        var s = state(c)
        let xp = reward(visits: s.visits)
        s.visits += 1
        s.xp += xp
        s.cooldownUntil = t.addingSaturated(Nanoseconds(saturating: options.cooldown * 1e9))
        cells[c.id] = s
        announced = true
        return .success(
            Completion(
                cell: c, cellSize: options.cellSize, t: t, xp: xp, visits: s.visits,
                cooldownUntil: s.cooldownUntil!))
    }
}
