// SPDX-License-Identifier: Apache-2.0
/// One encoded line (JSON and its newline), shared by every client it goes to: the hub encodes
/// an event once and each client's queue holds a reference, so 1000 clients cost one copy of
/// the bytes. The storage is stable, so writev(2) can point at it directly. Not `Sendable`: it
/// lives and dies on the hub's loop with the queues that hold it.
final class SharedLine {
    /// The line's bytes; immutable after init.
    let bytes: UnsafeMutableRawBufferPointer
    /// A `gap` notice: a full queue never drops one (it carries the count of what was dropped).
    let isGapNotice: Bool

    init(copying source: UnsafeRawBufferPointer, isGapNotice: Bool = false) {
        precondition(!source.isEmpty, "a line has at least its newline")
        bytes = .allocate(byteCount: source.count, alignment: 1)
        self.isGapNotice = isGapNotice
        bytes.copyMemory(from: source)
    }

    deinit { bytes.deallocate() }
}
