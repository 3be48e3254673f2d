// SPDX-License-Identifier: Apache-2.0
import Glibc
import Synchronization
import TiltCore
import TiltProtocol

/// How many socket clients may be connected at once, and how many are: the acceptor takes a
/// slot for each connection before NIO sees it and refuses one past the cap with one line.
///
/// Why: each client costs two descriptors (NIO's and the session's duplicate) and a queue.
/// Without a cap, ~2,000 idle connections from any member of the socket's group reached
/// `LimitNOFILE` (4096), and then the store, the IMU and gpsd could not open theirs. The cap is
/// `[socket] max_clients`, and never more than the descriptors the process may open less a
/// quarter of them (at least 256) kept for everything else: those take a few dozen (the store's
/// four files, a few per IIO device, gpsd's socket, the ring, the log). Half was kept before,
/// which let a hard limit of 20,000 hold only 4,966 idle clients of the 5,000 issue 37 asks for.
/// Checked on the acceptor's thread (lock-free);
/// released on the hub's loop when the session ends.
public final class ClientSlots: Sendable {
    private let connected = Atomic<Int>(0)
    private let configured = Atomic<Int>(1000)
    /// Descriptors kept free of clients, at least: for the store, the IMU, gpsd, the ring and logs.
    static let reservedDescriptors = 256

    /// The cap from `[socket] max_clients` (a reload may change it; connected clients stay).
    public var maxClients: Int {
        get { configured.load(ordering: .relaxed) }
        set { configured.store(max(1, newValue), ordering: .relaxed) }
    }

    /// The cap in force: `maxClients`, or fewer when the descriptor limit would not hold them.
    public var effectiveLimit: Int { min(maxClients, Self.descriptorLimit) }

    /// Clients the process's descriptor limit (soft RLIMIT_NOFILE) holds: two descriptors each,
    /// a quarter of the limit (at least `reservedDescriptors`) kept for everything else.
    static let descriptorLimit: Int = {
        var r = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &r) == 0, r.rlim_cur != rlim_t.max else { return .max }
        return clients(descriptors: Int(clamping: r.rlim_cur))
    }()

    /// The clients `descriptors` hold (see `descriptorLimit`).
    static func clients(descriptors: Int) -> Int {
        max(1, (descriptors - max(reservedDescriptors, descriptors / 4)) / 2)
    }

    /// Clients connected now.
    public var count: Int { connected.load(ordering: .relaxed) }

    /// A connection came: true (a slot taken) when under the cap.
    func take() -> Bool {
        let limit = effectiveLimit
        while true {
            let n = connected.load(ordering: .relaxed)
            guard n < limit else { return false }
            if connected.compareExchange(expected: n, desired: n + 1, ordering: .relaxed).exchanged { return true }
        }
    }

    /// A connection that took a slot ended.
    func release() { connected.subtract(1, ordering: .relaxed) }

    /// The one line a refused client gets before the close: a reply without an id, code
    /// `unavailable` (docs/protocol.md, "Bounds").
    func refusal() -> [UInt8] {
        Event.reply(
            id: nil, cmd: nil,
            error: ProtocolError(
                .unavailable,
                "too many clients: \(effectiveLimit) are connected ([socket] max_clients); try again later")
        ).encode(seq: 0)
    }

    /// Refuses `fd`: the line (the socket is fresh, its buffer takes it), then the close.
    func refuse(_ fd: CInt) {
        let line = refusal()
        _ = line.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }
}

/// One connection's slot, released once however its end is learned (its channel closing, or
/// NIO failing to take the socket).
final class ClientSlot: Sendable {
    private let slots: ClientSlots
    private let held = Atomic<Bool>(true)
    init(_ slots: ClientSlots) { self.slots = slots }
    /// Gives the slot back (once).
    func release() {
        if held.exchange(false, ordering: .relaxed) { slots.release() }
    }
}
