// SPDX-License-Identifier: Apache-2.0
import DequeModule

/// A client's queue of lines to write: the first line kept inline, the rest in a `Deque`.
///
/// Why: fan-out touches every client's queue for every line, and a client that keeps up has at
/// most one line queued at a time. With the line inline the queue lives in the session's own
/// memory; a `Deque` keeps its count and elements in a separate allocation, which was the second
/// cache miss per client per line (`perf annotate` of `Hub.publish` at 1000 clients). The deque
/// is only touched while more than one line waits.
struct LineQueue {
    /// The first line; nil when the queue is empty.
    private(set) var first: SharedLine?
    /// The lines after the first.
    private var rest = Deque<SharedLine>()
    /// How many lines are queued (kept here, so that `rest` is not read to learn it).
    private(set) var count = 0
    /// Their bytes, all of each line (`[socket] queue_bytes` bounds it, not only the count).
    private(set) var bytes = 0

    /// True when nothing is queued.
    var isEmpty: Bool { count == 0 }

    /// The line at `i` (0 ≤ i < count).
    subscript(i: Int) -> SharedLine { i == 0 ? first! : rest[i - 1] }

    /// Adds a line at the end.
    mutating func append(_ line: SharedLine) {
        if count == 0 { first = line } else { rest.append(line) }
        count += 1
        bytes += line.bytes.count
    }

    /// Removes and returns the first line, if any.
    mutating func popFirst() -> SharedLine? {
        guard let head = first else { return nil }
        first = count > 1 ? rest.removeFirst() : nil
        count -= 1
        bytes -= head.bytes.count
        return head
    }

    /// Inserts a line at `i` (0 ≤ i ≤ count).
    mutating func insert(_ line: SharedLine, at i: Int) {
        if i == 0 {
            if let head = first { rest.prepend(head) }
            first = line
        } else {
            rest.insert(line, at: i - 1)
        }
        count += 1
        bytes += line.bytes.count
    }

    /// Removes and returns the line at `i` (0 ≤ i < count).
    mutating func remove(at i: Int) -> SharedLine {
        if i == 0 { return popFirst()! }
        count -= 1
        let line = rest.remove(at: i - 1)
        bytes -= line.bytes.count
        return line
    }

    /// Empties the queue.
    mutating func removeAll() {
        first = nil
        if count > 1 { rest.removeAll() }
        count = 0
        bytes = 0
    }
}
