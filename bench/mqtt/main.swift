// SPDX-License-Identifier: Apache-2.0
// MQTTBench: decision → scoreboard latency of a shared round across a real Mosquitto.
//
// Starts Debian's mosquitto on a free loopback port and a real `tiltd mqtt` hosting room
// "bench"; simulates N players as MQTT clients (libmosquitto, like the bridge). Each player, in
// a closed loop, publishes its next decision (QoS 1) and waits for the host's retained state in
// which the host counted it; the time between the two is one sample. All players run at once,
// so with more players the host and the broker are busier. The reference in the same run: the
// bare broker round trip (a client publishes QoS 1 to a topic it subscribes to and waits for its
// own message), the floor a decision's two hops through the broker add to.
//
//   MQTTBench --tiltd PATH [--players 3,20] [--decisions 150]
import Dispatch
import Foundation
import TiltBridge
import TiltCore
import TiltProtocol

struct Options {
    var tiltd = ""
    var players = [3, 20]
    var decisions = 150
    init() {
        var args = CommandLine.arguments.dropFirst()
        while let a = args.popFirst() {
            switch a {
            case "--tiltd": tiltd = args.popFirst() ?? ""
            case "--players": players = (args.popFirst() ?? "").split(separator: ",").compactMap { Int($0) }
            case "--decisions": decisions = Int(args.popFirst() ?? "") ?? decisions
            default: fatalError("unknown argument \(a)")
            }
        }
        if tiltd.isEmpty { fatalError("--tiltd PATH is required") }
    }
}

func now() -> UInt64 { DispatchTime.now().uptimeNanoseconds }

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s[min(s.count - 1, Int((Double(s.count - 1) * p).rounded()))]
}

func freePort() -> Int {
    let s = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(s) }
    var addr = sockaddr_in()
    addr.sin_family = sa_family_t(AF_INET)
    addr.sin_addr.s_addr = inet_addr("127.0.0.1")
    var len = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &addr) { p in
        p.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(s, $0, len) == 0 && getsockname(s, $0, &len) == 0 }
    }
    return Int(UInt16(bigEndian: addr.sin_port))
}

func start(_ exe: String, _ args: [String], log: String) throws -> Process {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: exe)
    p.arguments = args
    FileManager.default.createFile(atPath: log, contents: nil)
    let h = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
    p.standardOutput = h
    p.standardError = h
    try p.run()
    return p
}

/// Waits for `condition`, polling, or dies after `timeout` seconds saying `what`.
func wait(_ what: String, timeout: Double = 20, _ condition: () -> Bool) {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        if Date() > deadline { fatalError("timed out waiting for \(what)") }
        usleep(2_000)
    }
}

/// A simulated player (or the reference echo client): one MQTT connection whose messages
/// update shared, lock-protected state.
final class Peer: @unchecked Sendable {
    let id: String
    let lock = NSCondition()
    var connected = false
    var counted = 0  // this player's index in the host's newest state
    var round = 0
    var echoes = 0
    var client: MosquittoClient!

    init(id: String, port: Int) throws {
        self.id = id
        client = try MosquittoClient(clientID: "bench-\(id)") { [unowned self] e in self.event(e) }
        try client.start(host: "127.0.0.1", port: port, keepalive: 30)
        wait("\(id) to connect") { lock.withLock { connected } }
    }

    func event(_ e: MQTTEvent) {
        lock.withLock {
            switch e {
            case .connected(let c): connected = c == 0
            case .message(let topic, let payload, _):
                if topic.hasSuffix("/echo") {
                    echoes += 1
                } else if let s = try? RoomCodec.decodeState(payload) {
                    round = s.round
                    counted = s.player(id)?.index ?? counted
                }
            default: break
            }
            lock.broadcast()
        }
    }

    /// Blocks until `condition` holds (checked under the lock).
    func await(_ condition: () -> Bool) {
        lock.withLock { while !condition() { lock.wait(until: Date().addingTimeInterval(30)) } }
    }
}

/// Latencies from every player's thread.
final class Collected: @unchecked Sendable {
    // @unchecked: `all` is only touched under `lock`.
    private let lock = NSLock()
    private var values: [Double] = []
    func add(_ xs: [Double]) { lock.withLock { values += xs } }
    var all: [Double] { lock.withLock { values } }
}

let opt = Options()
let dir = "/tmp/tiltd-mqttbench-\(UUID().uuidString.prefix(6))"
try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: dir) }
// 500 prompts: enough for every player's decisions in one round.
try (0..<RoomState.maxPrompts).map { "prompt \($0)" }.joined(separator: "\n").write(
    toFile: "\(dir)/deck.txt", atomically: true, encoding: .utf8)

func pad(_ s: String, _ n: Int) -> String { s.count >= n ? s : s + String(repeating: " ", count: n - s.count) }
func row(_ name: String, _ xs: [Double]) {
    print(
        pad(name, 58)
            + String(
                format: "%8d %8.2f %8.2f %8.2f", xs.count, percentile(xs, 0.5), percentile(xs, 0.99), xs.max() ?? 0))
}

print(
    "decision → scoreboard latency of a shared round through Mosquitto on loopback: \(opt.decisions) decisions per player,"
)
print(
    "each player in a closed loop (publish a decision, wait for the host's state that counts it), all players at once;")
print("reference: one client's QoS 1 publish to a topic it subscribes to. Times in ms.")
print(
    pad("run", 58) + ["samples", "p50", "p99", "max"].map { String(repeating: " ", count: 9 - $0.count) + $0 }.joined())

/// One broker (Debian's defaults, or with `set_tcp_nodelay true`) and one host bridge; the
/// reference and every player count against it.
func session(nodelay: Bool) throws {
    let label = nodelay ? "set_tcp_nodelay true" : "broker defaults"
    let port = freePort()
    try
        "listener \(port) 127.0.0.1\nallow_anonymous true\nuser root\nmax_queued_messages 100000\n\(nodelay ? "set_tcp_nodelay true\n" : "")"
        .write(toFile: "\(dir)/mosquitto.conf", atomically: true, encoding: .utf8)
    let broker = try start("/usr/sbin/mosquitto", ["-c", "\(dir)/mosquitto.conf"], log: "\(dir)/mosquitto.log")
    defer { broker.terminate(); broker.waitUntilExit() }
    usleep(300_000)
    try """
    [socket]
    path = "\(dir)/absent.sock"
    [mqtt]
    name = "host"
    broker = "127.0.0.1:\(port)"
    discovery = false
    room = "bench"
    room_host = true
    room_deck = "\(dir)/deck.txt"
    allowed_commands = ["room.start", "room.stop"]
    [log]
    level = "error"
    """.write(toFile: "\(dir)/host.toml", atomically: true, encoding: .utf8)
    let host = try start(opt.tiltd, ["mqtt", "--config", "\(dir)/host.toml"], log: "\(dir)/host.log")
    defer { host.terminate(); host.waitUntilExit() }

    let echo = try Peer(id: "echo", port: port)
    try echo.client.subscribe("bench/echo", qos: 1)
    usleep(200_000)
    var reference: [Double] = []
    for i in 0..<(opt.decisions * 3) {
        let t0 = now()
        try echo.client.publish("bench/echo", Array("\(i)".utf8), qos: 1, retain: false)
        echo.await { echo.echoes > i }
        reference.append(Double(now() - t0) / 1e6)
    }
    row("\(label): broker round trip", reference)

    var round = 0
    for n in opt.players {
        // The players join (retained presence), then the host starts a round.
        let peers = try (0..<n).map { try Peer(id: "p\(round)-\($0)", port: port) }
        for p in peers {
            try p.client.subscribe("tiltd/room/bench/state", qos: 1)
            let presence = RoomPresence(room: "bench", player: p.id, presence: .here, statusTopic: nil)
            try p.client.publish(
                "tiltd/room/bench/player/\(p.id)/presence",
                Array(JSONValue.object(RoomCodec.encode(presence)).jsonText.utf8), qos: 1, retain: true)
        }
        round += 1
        let thisRound = round
        wait("players to join and the round to start", timeout: 30) {
            try? echo.client.publish(
                "tiltd/host/cmd", Array(#"{"cmd":"room.start","round_s":3600}"#.utf8), qos: 1, retain: false)
            usleep(200_000)
            return peers.allSatisfy { p in p.lock.withLock { p.round == thisRound } }
        }
        let samples = Collected()
        let group = DispatchGroup()
        for p in peers {
            group.enter()
            Thread {
                var mine: [Double] = []
                for i in 0..<opt.decisions {
                    let d = RoomDecision(
                        room: "bench", player: p.id, round: thisRound, index: i, decision: i % 3 == 0 ? .skip : .correct
                    )
                    let t0 = now()
                    try! p.client.publish(
                        "tiltd/room/bench/player/\(p.id)/decision",
                        Array(JSONValue.object(RoomCodec.encode(d)).jsonText.utf8), qos: 1, retain: false)
                    p.await { p.counted > i }
                    mine.append(Double(now() - t0) / 1e6)
                }
                samples.add(mine)
                group.leave()
            }.start()
        }
        group.wait()
        row("\(label): decision → scoreboard, \(n) players", samples.all)
        try echo.client.publish("tiltd/host/cmd", Array(#"{"cmd":"room.stop"}"#.utf8), qos: 1, retain: false)
        for p in peers { p.client.stop() }
        usleep(300_000)
    }
    echo.client.stop()
}

try session(nodelay: false)
try session(nodelay: true)
