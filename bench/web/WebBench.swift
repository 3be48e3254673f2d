// SPDX-License-Identifier: Apache-2.0
// WebBench: what a player sees, measured. The real daemon replays the nodding part of the demo
// recording; the real `tiltd web` serves it; a real headless Chromium shows the game screen and
// the live view. Two phases in one run, same processes: (1) the browser alone, (2) the browser
// plus N WebSocket clients taking every attitude line (60 Hz). Each phase plays one round.
//
// Latency = (the page's first animation frame after it applied a line, `tiltdTrace.painted`)
// − (when this process's own socket client read the same line from the daemon). Both clocks are
// CLOCK_REALTIME on this machine. Game lines are matched by seq, attitude lines by t_ns.
// CPU = the web process's utime+stime (/proc/PID/stat) over the phase ÷ wall time.
import BrowserSupport
import Foundation
import TiltCore

struct Options {
    var tiltd = ".build/release/tiltd"
    var seconds = 20.0
    var clients = 50
    init() {
        var args = CommandLine.arguments.dropFirst()
        while let a = args.popFirst() {
            switch a {
            case "--tiltd": tiltd = args.popFirst() ?? tiltd
            case "--seconds": seconds = Double(args.popFirst() ?? "") ?? seconds
            case "--clients": clients = Int(args.popFirst() ?? "") ?? clients
            default: fatalError("WebBench: unknown option \(a) (--tiltd PATH, --seconds S, --clients N)")
            }
        }
    }
}

func percentile(_ xs: [Double], _ p: Double) -> Double {
    guard !xs.isEmpty else { return .nan }
    let s = xs.sorted()
    return s[min(s.count - 1, Int((p / 100 * Double(s.count - 1)).rounded()))]
}

func fmt(_ x: Double) -> String { x.isNaN ? "–" : String(format: "%.1f", x) }

@main
struct WebBench {
    static func main() async throws {
        let o = Options()
        let rig = try BenchRig(tiltd: o.tiltd)
        defer { rig.stop() }
        print(
            "WebBench: daemon replaying \(rig.recording) (60 Hz), tiltd web on :\(rig.port) asking attitude at 60 Hz; \(ProcessInfo.processInfo.activeProcessorCount) cores"
        )

        let chromium = try Chromium()
        defer { chromium.stop() }
        let devTools = try await DevTools.connect(chromium.browserURL)
        let game = try await devTools.openPage("http://127.0.0.1:\(rig.port)/", width: 412, height: 860, mobile: true)
        let live = try await devTools.openPage("http://127.0.0.1:\(rig.port)/live", width: 1280, height: 900)
        for p in [game, live] {
            try await p.waitFor(
                "document.getElementById('banner').textContent === 'connected' && model.state", timeout: 20)
        }

        var rows: [Phase.Result] = []
        for extra in [0, o.clients] {
            let phase = Phase(rig: rig, game: game, live: live, extraClients: extra, seconds: o.seconds)
            rows.append(try await phase.run())
        }
        print("")
        print(
            "phase                      | game lines → screen ms p50 / p99 (n) | attitude → screen ms p50 / p99 (n) | attitude → WS client ms p50 / p99 | web CPU % of a core | attitude lines/s per WS client"
        )
        print(
            "---------------------------|--------------------------------------|------------------------------------|-----------------------------------|---------------------|-------------------------------"
        )
        for r in rows {
            print(
                String(
                    format:
                        "%-27@| %6@ / %6@ (%4d)                  | %6@ / %6@ (%5d)                | %6@ / %6@                     | %6@              | %@",
                    "browser + \(r.extraClients) WS clients" as NSString,
                    fmt(percentile(r.gameLatency, 50)) as NSString, fmt(percentile(r.gameLatency, 99)) as NSString,
                    r.gameLatency.count,
                    fmt(percentile(r.attitudeLatency, 50)) as NSString,
                    fmt(percentile(r.attitudeLatency, 99)) as NSString, r.attitudeLatency.count,
                    fmt(percentile(r.wsLatency, 50)) as NSString, fmt(percentile(r.wsLatency, 99)) as NSString,
                    fmt(r.webCPU * 100) as NSString, (r.extraClients == 0 ? "–" : fmt(r.wsRate)) as NSString))
        }
        print("\n(targets from issue 14: p99 ≤ 50 ms, web CPU ≤ 10 % of a core with 50 clients at 60 Hz)")
    }
}
