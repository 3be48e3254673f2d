// SPDX-License-Identifier: Apache-2.0
import Dispatch
import Synchronization
import TiltCore
import TiltPlatform

/// Polled reads of split devices (st_lsm6dsx's `<chip>_accel` and `<chip>_gyro`) side by side.
/// A driver whose one-shot raw read sleeps for fresh data serialises the reads of one device (the
/// IIO core's direct-mode lock), not of two: reading the accelerometer device and the gyroscope
/// device at once halves the time a sample takes, and takes both halves closer together.
/// `IIOPolledPace` turns it on only when reads are slow; fast reads stay on one thread.
final class IIOSideBySideReads {
    /// The readers in order; the first is read on the caller's thread, each other on a queue.
    private let readers: [SendableReader]
    private let queues: [DispatchQueue]

    /// `@unchecked`: an `IIOPolledReader` holds libiio channel handles of its own device. Each
    /// reader is used by one thread at a time (its queue, while `read` waits for it), and libiio
    /// reads a channel attribute with plain file I/O on that device's sysfs files.
    private struct SendableReader: @unchecked Sendable {
        let reader: IIOPolledReader
    }

    init(_ readers: [IIOPolledReader]) {
        self.readers = readers.map(SendableReader.init)
        queues = readers.indices.dropFirst().map { DispatchQueue(label: "tiltd.iio.read.\($0)") }
    }

    /// One reading of every device, stamped `t`; throws the first device's error.
    func read(at t: Nanoseconds) throws -> [IIOReading] {
        let results = Mutex<[Int: Result<IIOReading, any Error>]>([:])
        let group = DispatchGroup()
        for (i, queue) in zip(readers.indices.dropFirst(), queues) {
            let r = readers[i]
            queue.async(group: group) {
                let result = Result { try r.reader.read(at: t) }
                results.withLock { $0[i] = result }
            }
        }
        let first = Result { try readers[0].reader.read(at: t) }
        group.wait()
        var out = [try first.get()]
        for i in readers.indices.dropFirst() {
            out.append(try results.withLock { $0[i]! }.get())
        }
        return out
    }
}
