// SPDX-License-Identifier: Apache-2.0
import TiltConfig
import TiltCore
import TiltProtocol

/// Quest cells: `quest.available` on entering a cell, `quest.complete`, the `[quests]`
/// section. Loop-confined (see `Component`).
final class QuestsComponent: Component {
    let context: EngineContext
    private var quests: QuestGrid

    init(context: EngineContext) {
        self.context = context
        quests = QuestGrid(options: context.config.quests.options)
    }

    /// Seeds the cells' history from the store, at start.
    func prepare(cells: [Int64: QuestGrid.CellState]) {
        quests = QuestGrid(options: context.config.quests.options, cells: cells)
    }

    let commands = ["quest.complete"]

    func handle(_ command: Command, from client: ClientSession, reply: Reply) {
        guard context.config.quests.enabled else {
            return reply.fail(.unavailable, "quests are disabled ([quests] enabled = false)")
        }
        var requested: GeoGrid.Cell?
        if let cellName = command.string("cell") {
            guard let c = Self.parseCell(cellName) else {
                return reply.fail(
                    .badArgument, "cell must be a cell id or a name like \"r79237c65431\" (from quest.available)")
            }
            requested = c
        }
        let before = quests.cellStates
        switch quests.complete(cell: requested) {
        case .failure(let refusal):
            reply.fail(refusal.code, refusal.description)
        case .success(let completion):
            // Told only once the store has it (as credits are): a completion replied to or sent
            // to clients before its commit was lost by a power cut in between (scripts/kernel-test's
            // power cuts caught one). A write that fails gives the cell back as it was.
            let previous = before[completion.cell.id]
            context.store.write(
                { try $0.recordQuest(completion) },
                then: { [self] result in
                    switch result {
                    case .success:
                        context.storeSucceeded()
                        reply.ok([
                            "cell": .int(completion.cell.id), "xp": .int(Int64(completion.xp)),
                            "visits": .int(Int64(completion.visits)),
                        ])
                        context.publish(completion.event)
                    case .failure(let e):
                        quests.restore(cell: completion.cell.id, to: previous)
                        reply.fail(.unavailable, "quest: \(e)")
                        context.storeFailed("recording a quest", e)
                    }
                }, on: context.loop)
        }
    }

    /// A positioned fix: announces a cell whose quest is available.
    func ingest(_ fix: Fix) {
        if context.config.quests.enabled, let available = quests.update(fix) { context.publish(available.event) }
    }

    /// A quest cell from its id ("340320323698583") or name ("r79237c65431").
    static func parseCell(_ s: String) -> GeoGrid.Cell? {
        if let id = Int64(s) { return GeoGrid.Cell(id: id) }
        guard s.hasPrefix("r"), let c = s.firstIndex(of: "c"),
            let row = Int32(s[s.index(after: s.startIndex)..<c]), let col = Int32(s[s.index(after: c)...])
        else { return nil }
        return GeoGrid.Cell(row: row, column: col)
    }

    // MARK: reload

    /// New cells' history when the cell size changed (cell ids depend on it), read off the loop.
    struct Staged: Sendable {
        var cells: [Int64: QuestGrid.CellState]?
    }

    /// Off the loop: a new cell size needs the store's history in the new cells.
    static func stage(_ new: Configuration, current: Configuration, store: StoreWorker) -> Staged {
        guard new.quests.options.cellSize != current.quests.options.cellSize else { return Staged() }
        return Staged(cells: store.seeds(cellSize: new.quests.options.cellSize).questCells)
    }

    /// On the loop: the grid with the new options, keeping every cell's completions and cooldowns.
    func apply(_ staged: Staged, config: Configuration) {
        guard config.quests.options != quests.options || staged.cells != nil else { return }
        quests = QuestGrid(options: config.quests.options, cells: staged.cells ?? quests.cellStates)
    }
}
