// SPDX-License-Identifier: Apache-2.0
import BrowserSupport
import Foundation
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import TestSupport
import TiltCore
import TiltProtocol

/// The daemon and `tiltd web` for the bench (release binaries), on a free port.
final class BenchRig: @unchecked Sendable {
    let dir = makeTempDir("webbench")
    let recording: String
    let daemon: DaemonProcess
    let web: DaemonProcess
    let port: Int

    init(tiltd: String) throws {
        setenv("TILTD_BIN", tiltd, 1)
        recording = "\(dir)/nods.csv"
        try Self.loopedNods(loops: 12).write(toFile: recording, atomically: true, encoding: .utf8)
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        [web]
        listen = "127.0.0.1:0"
        attitude_hz = 60
        max_clients = 200
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
        daemon = try DaemonProcess(
            ["run", "--config", "\(dir)/tiltd.toml", "--replay", recording], logPath: "\(dir)/daemon.log")
        _ = try LineClient(path: "\(dir)/tiltd.sock", timeout: 20)
        web = try DaemonProcess(["web", "--config", "\(dir)/tiltd.toml"], logPath: "\(dir)/web.log")
        var found = 0
        let w = web
        try waitUntil("tiltd web to listen", timeout: 30) {
            if let r = w.log.range(of: "listening on http://127.0.0.1:") {
                found = Int(w.log[r.upperBound...].prefix { $0.isNumber }) ?? 0
            }
            return found > 0
        }
        port = found
    }

    var socketPath: String { "\(dir)/tiltd.sock" }

    /// The first 27 s of config/demo/head.csv (nods and tilts, no walk) played `loops` times.
    static func loopedNods(loops: Int) throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/config/demo/head.csv", encoding: .utf8)
        var header: [String] = [], rows: [(Int64, Substring)] = []
        for line in text.split(separator: "\n") {
            guard let comma = line.firstIndex(of: ","), let t = Int64(line[..<comma]) else {
                header.append(String(line)); continue
            }
            rows.append((t, line[comma...]))
        }
        let t0 = rows[0].0, period: Int64 = 27_000_000_000
        var out = header.joined(separator: "\n") + "\n"
        for k in 0..<Int64(loops) {
            for (t, rest) in rows where t - t0 < period { out += "\(t + k * period)\(rest)\n" }
        }
        return out
    }

    /// CPU seconds (user + system) the web process has used.
    var webCPUSeconds: Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(web.pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return .nan }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // After "(comm)": state is field 3, utime 14 and stime 15 (1-based in proc(5)).
        let ticks = (Double(fields[11]) ?? .nan) + (Double(fields[12]) ?? .nan)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    func stop() {
        web.stop(); daemon.stop()
        try? FileManager.default.removeItem(atPath: dir)
    }
}

/// When lines arrived, by key (seq or t_ns): the first arrival per key, and every arrival.
/// Filled from several threads.
final class Seen: @unchecked Sendable {
    private let lock = NIOLock()
    private var byKey: [Int64: Double] = [:]
    private var arrivals: [(Int64, Double)] = []
    func note(_ key: Int64, _ t: Double) {
        lock.withLock {
            if byKey[key] == nil { byKey[key] = t }; arrivals.append((key, t))
        }
    }
    subscript(key: Int64) -> Double? { lock.withLock { byKey[key] } }
    var total: Int { lock.withLock { arrivals.count } }
    var all: [(Int64, Double)] { lock.withLock { arrivals } }
}

func wallMillis() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}

/// One round with `extraClients` WebSocket clients besides the browser.
struct Phase {
    struct Result {
        var extraClients: Int
        var gameLatency: [Double] = []
        var attitudeLatency: [Double] = []
        var wsLatency: [Double] = []
        var webCPU = 0.0
        var wsRate = 0.0
    }

    let rig: BenchRig
    let game: Page
    let live: Page
    let extraClients: Int
    let seconds: Double

    func run() async throws -> Result {
        var result = Result(extraClients: extraClients)
        // This process's own view of the daemon: when each game and attitude line left it.
        let watcher = try LineClient(path: rig.socketPath)
        _ = try watcher.request(#"{"cmd":"watch","id":1,"classes":["game"],"attitude_hz":60}"#, id: 1)
        let gameSeen = Seen(), attitudeSeen = Seen(), wsSeen = Seen()
        let done = NIOLockedValueBox(false)
        let reader = Thread {
            while !done.withLockedValue({ $0 }) {
                guard let text = try? watcher.readLine(timeout: 0.5), let line = DaemonLine(text: text) else {
                    continue
                }
                let now = wallMillis()
                switch line.body {
                case .game(let g):
                    guard let s = line.seq else { break }
                    gameSeen.note(s, now)
                    if g.kind == "round_ended" { done.withLockedValue { $0 = true } }
                case .attitude:
                    if let t = line.tNs { attitudeSeen.note(t, now) }
                default:
                    break
                }
            }
        }
        reader.start()

        // The extra clients: each takes every attitude line until the round is over.
        var clients: [Task<Int, any Error>] = []
        for _ in 0..<extraClients {
            clients.append(
                Task {
                    let n = NIOLockedValueBox(0)
                    try await WebSocketClient.connect(
                        url: "ws://127.0.0.1:\(rig.port)/ws?attitude=1", logger: Logger(label: "bench")
                    ) { inbound, outbound, _ in
                        for try await m in inbound.messages(maxSize: 1 << 20) {
                            guard case .text(let t) = m else { continue }
                            if t.hasPrefix(#"{"class":"attitude""#), let tn = DaemonLine(text: t)?.tNs {
                                wsSeen.note(tn, wallMillis()); n.withLockedValue { $0 += 1 }
                            }
                            if done.withLockedValue({ $0 }) {
                                try await outbound.close(.normalClosure, reason: nil); break
                            }
                        }
                    }
                    return n.withLockedValue { $0 }
                })
        }
        try await Task.sleep(for: .seconds(2))
        for p in [game, live] { try await p.evaluate("tiltdTrace.length = 0") }

        let cpu0 = rig.webCPUSeconds, wall0 = Date()
        let commander = try LineClient(path: rig.socketPath)
        let reply = try commander.request(#"{"cmd":"game.start","id":1,"round_s":\#(seconds)}"#, id: 1)
        guard reply["ok"] == .bool(true) else { throw LineClient.Failure(description: "game.start: \(reply)") }
        let deadline = Date().addingTimeInterval(seconds + 20)
        while !done.withLockedValue({ $0 }) && Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        let wall = Date().timeIntervalSince(wall0)
        result.webCPU = (rig.webCPUSeconds - cpu0) / wall
        done.withLockedValue { $0 = true }
        try await Task.sleep(for: .milliseconds(500))

        var perClient: [Int] = []
        for c in clients { perClient.append((try? await c.value) ?? 0) }
        if extraClients > 0 { result.wsRate = Double(perClient.reduce(0, +)) / Double(extraClients) / wall }

        let gameTrace = try await game.evaluate(
            "tiltdTrace.filter((e) => e.cls === 'game').map((e) => [e.seq, e.painted])")
        for e in gameTrace.arrayValue ?? [] {
            if let seq = e.arrayValue?[0].intValue, let painted = e.arrayValue?[1].doubleValue, let seen = gameSeen[seq]
            {
                result.gameLatency.append(painted - seen)
            }
        }
        let attTrace = try await live.evaluate(
            "tiltdTrace.filter((e) => e.cls === 'attitude').map((e) => [e.t_ns, e.painted])")
        for e in attTrace.arrayValue ?? [] {
            if let t = e.arrayValue?[0].intValue, let painted = e.arrayValue?[1].doubleValue, let seen = attitudeSeen[t]
            {
                result.attitudeLatency.append(painted - seen)
            }
        }
        // WS clients: every arrival at every client.
        result.wsLatency = wsSeen.all.compactMap { k, t in attitudeSeen[k].map { t - $0 } }
        print(
            "phase with \(extraClients) extra clients: \(gameSeen.total) game lines, \(attitudeSeen.total) attitude lines from the daemon in \(String(format: "%.1f", wall)) s; per-client attitude lines: \(perClient.min() ?? 0)…\(perClient.max() ?? 0)"
        )
        return result
    }
}
