// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Glibc
import Logging
import TiltConfig
import TiltCore
import TiltPlatform
import TiltProtocol

/// The head frame the game learned from wear, kept across restarts in `head-frame.json` beside
/// the store's database: a wearer who never calibrated need not walk and look down again after
/// every restart before nods are read about the right axis. Written atomically (a crash leaves
/// the old file or the new one), on the store's queue (off the event loop, and drained at
/// shutdown with the store's writes), whenever the learned frame changes; a file that cannot be
/// read or parsed is reported and ignored (the game learns afresh).
final class KeptHeadFrame: Sendable {
    /// The file: `head-frame.json` in the store's directory.
    let path: String
    private let queue: DispatchQueue
    private let logger: Logger

    /// The file beside `store`'s database; nil when there is no store.
    init?(store: StoreWorker, logger: Logger) {
        guard let storePath = store.path else { return nil }
        path = Self.path(storePath: storePath)
        queue = store.queue
        self.logger = logger
    }

    /// The frame kept at `path`, if there is a readable one, or why the one there is ignored
    /// (blocking: call off the loop, at start). No file: neither.
    static func load(_ path: String) -> (frame: HeadFrame?, problem: String?) {
        guard access(path, F_OK) == 0 else { return (nil, nil) }
        let bytes: [UInt8]
        do { bytes = try BoundedFile.read(path, limit: 4096) } catch {
            return (nil, "\(error); the game learns a head frame afresh")
        }
        guard let v = try? JSONParser.parse(bytes), let f = HeadFrame(stateJSON: v, source: .learned) else {
            return (nil, "\(path): not a kept head frame; the game learns one afresh")
        }
        return (f, nil)
    }

    /// The file for the store at `storePath`.
    static func path(storePath: String) -> String {
        PathName.appending("head-frame.json", to: PathName.directory(of: storePath))
    }

    /// Keeps `frame` (nil: forgets the kept one), in the background.
    func save(_ frame: HeadFrame?) {
        let path = path, logger = logger
        queue.async {
            do {
                if let frame {
                    try CalibrationFile.writeAtomically(
                        Array((JSONValue.object(frame.stateJSON).jsonText + "\n").utf8), to: path)
                } else if unlink(path) != 0, errno != ENOENT {
                    logger.warning("\(SystemError("cannot remove the kept head frame", path: path))")
                }
            } catch {
                logger.warning("keeping the learned head frame: \(error)")
            }
        }
    }
}
