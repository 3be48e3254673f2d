// SPDX-License-Identifier: Apache-2.0
import Foundation
import Synchronization

/// Drawn plots, kept by recording file (name, size, modification time) and panel choice, and a
/// bound on drawing: the plot route gunzipped and replayed a whole recording per request, so a
/// page reloaded in a loop (or many tabs) kept a core busy and held every recording in memory at
/// once. Now a plot is drawn once per file version; at most `maxDrawing` are drawn at a time, and
/// a request past that is answered 503 with Retry-After instead of waiting in line.
public final class PlotCache: Sendable {
    /// What identifies a drawn plot: the file's version and the panels asked for.
    public struct Key: Hashable, Sendable {
        /// The recording's file name.
        public var name: String
        /// Whether the game panel was asked for.
        public var game: Bool
        /// The file's size, bytes.
        public var size: Int64
        /// The file's modification time, seconds.
        public var modified: Int64
        /// A key from its parts.
        public init(name: String, game: Bool, size: Int64, modified: Int64) {
            self.name = name; self.game = game; self.size = size; self.modified = modified
        }
        /// A key for `name` as the file is now (nil: no such file).
        public static func current(name: String, path: String, game: Bool) -> Key? {
            var st = stat()
            guard stat(path, &st) == 0 else { return nil }
            return Key(name: name, game: game, size: Int64(st.st_size), modified: Int64(st.st_mtim.tv_sec))
        }
    }

    /// Plots kept (least recently used forgotten first).
    public static let maxEntries = 16
    /// Plots drawn at once.
    public static let maxDrawing = 1
    /// Recordings larger than this on disk are not drawn (their samples would all be in memory).
    public static let maxFileBytes: Int64 = 64 << 20

    private struct State {
        var entries: [Key: String] = [:]
        var order: [Key] = []
        var drawing = 0
    }
    private let state = Mutex(State())

    /// An empty cache.
    public init() {}

    /// The plot of `key`, if drawn.
    public func plot(_ key: Key) -> String? {
        state.withLock { s in
            guard let svg = s.entries[key] else { return nil }
            s.order.removeAll { $0 == key }
            s.order.append(key)
            return svg
        }
    }

    /// Takes a drawing slot; false when `maxDrawing` plots are being drawn.
    public func beginDrawing() -> Bool {
        state.withLock { s in
            guard s.drawing < Self.maxDrawing else { return false }
            s.drawing += 1
            return true
        }
    }

    /// Gives the slot back and keeps `svg` (nil: the drawing failed).
    public func endDrawing(_ key: Key, svg: String?) {
        state.withLock { s in
            s.drawing -= 1
            guard let svg else { return }
            if s.entries.updateValue(svg, forKey: key) == nil { s.order.append(key) }
            while s.order.count > Self.maxEntries { s.entries[s.order.removeFirst()] = nil }
        }
    }

    /// Plots kept now.
    public var count: Int { state.withLock { $0.entries.count } }
}
