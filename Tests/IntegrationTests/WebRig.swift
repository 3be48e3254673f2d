// SPDX-License-Identifier: Apache-2.0
import BrowserSupport
import Foundation
import TestSupport
import TiltCore
import XCTest

/// A daemon replaying a recording and a `tiltd web` in front of it, for the web tests: both real
/// binaries, the web process on a free loopback port it reports on stdout.
final class WebRig: @unchecked Sendable {
    let dir: String
    let recording: String
    var daemon: DaemonProcess?
    var web: DaemonProcess?
    private(set) var port = 0
    static let pairingCode = "246-810"

    var socketPath: String { "\(dir)/tiltd.sock" }
    var url: String { "http://127.0.0.1:\(port)" }

    /// Skips (or fails under CI=true) when Chromium is missing.
    static func requireChromium() throws {
        guard Chromium.binary != nil else {
            let reason = "chromium is not installed: apt-get install chromium (scripts/install-deps --test)"
            if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(reason) }
            throw XCTSkip(reason)
        }
    }

    /// `webConfig` is added to the `[web]` table.
    init(webConfig: String = "", loops: Int = 6) throws {
        dir = makeTempDir("web")
        recording = "\(dir)/nods.csv"
        try Self.loopedNods(loops: loops).write(toFile: recording, atomically: true, encoding: .utf8)
        try """
        [socket]
        path = "\(dir)/tiltd.sock"
        [store]
        path = "\(dir)/tiltd.sqlite"
        [game]
        seed = 3
        [places]
        file = "\(repositoryRoot)/config/demo/places.geojson"
        [web]
        listen = "127.0.0.1:0"
        pairing_code = "\(Self.pairingCode)"
        \(webConfig)
        """.write(toFile: "\(dir)/tiltd.toml", atomically: true, encoding: .utf8)
    }

    /// The nodding part of the demo recording (its first 27 s: nods down and tilts up, before
    /// the walk) played `loops` times end to end, so a round always has decisions to make
    /// however long the browser takes to start.
    static func loopedNods(loops: Int) throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/config/demo/head.csv", encoding: .utf8)
        var header: [String] = [], rows: [(Int64, Substring)] = []
        for line in text.split(separator: "\n") {
            guard let comma = line.firstIndex(of: ","), let t = Int64(line[..<comma]) else {
                header.append(String(line)); continue
            }
            rows.append((t, line[comma...]))
        }
        guard let t0 = rows.first?.0 else { throw LineClient.Failure(description: "head.csv has no samples") }
        let period: Int64 = 27_000_000_000
        let part = rows.filter { $0.0 - t0 < period }
        var out = header.joined(separator: "\n") + "\n"
        for k in 0..<Int64(loops) { for (t, rest) in part { out += "\(t + k * period)\(rest)\n" } }
        return out
    }

    /// The demo walk with a course on every point (the bearing to the next one), as a receiver
    /// reports it: the walk itself has speeds only, and the daemon never invents a course.
    static func walkWithCourse() throws -> String {
        let text = try String(contentsOfFile: "\(repositoryRoot)/config/demo/walk.gpx", encoding: .utf8)
        let points = text.components(separatedBy: "<trkpt ")
        func point(_ p: String) -> GeoPoint? {
            func attribute(_ name: String) -> Double? {
                guard let r = p.range(of: "\(name)=\"") else { return nil }
                return Double(p[r.upperBound...].prefix { $0 != "\"" })
            }
            guard let lat = attribute("lat"), let lon = attribute("lon") else { return nil }
            return GeoPoint(lat: lat, lon: lon)
        }
        var out = points[0]
        for i in 1..<points.count {
            var p = points[i]
            if i + 1 < points.count, let a = point(p), let b = point(points[i + 1]), a != b,
                let end = p.range(of: "</gpxtpx:speed>")
            {
                let course = (Geo.bearing(from: a, to: b) * 10).rounded() / 10
                p.insert(contentsOf: "<gpxtpx:course>\(course)</gpxtpx:course>", at: end.upperBound)
            }
            out += "<trkpt " + p
        }
        return out
    }

    func startDaemon() throws {
        // The demo's GPX walk too (with a course), so the live view has a fix, places and quest
        // cells, and a heading from the course, to draw.
        let walk = "\(dir)/walk.gpx"
        if !FileManager.default.fileExists(atPath: walk) {
            try Self.walkWithCourse().write(toFile: walk, atomically: true, encoding: .utf8)
        }
        daemon = try DaemonProcess(
            [
                "run", "--config", "\(dir)/tiltd.toml", "--replay", recording, "--gpx", walk, "--gpx-speed", "1",
            ], logPath: "\(dir)/daemon.log")
        // Wait for the socket and for samples (a round's clock is sample time), not a fixed time.
        let c = try LineClient(path: socketPath, timeout: 20)
        var n = 0
        try waitUntil("the replay to stream samples", timeout: 20) {
            n += 1
            return (try c.request(#"{"cmd":"status","id":\#(n)}"#, id: n)["samples"]?.intValue ?? 0) > 0
        }
    }

    func startWeb() throws {
        web = try DaemonProcess(["web", "--config", "\(dir)/tiltd.toml"], logPath: "\(dir)/web.log")
        var found = 0
        try waitUntil("tiltd web to print its address", timeout: 30) {
            guard let web, web.isRunning else {
                throw LineClient.Failure(description: "tiltd web exited:\n\(self.web?.log ?? "")")
            }
            if let r = web.log.range(of: "listening on http://127.0.0.1:") {
                found = Int(web.log[r.upperBound...].prefix { $0.isNumber }) ?? 0
            }
            return found > 0
        }
        port = found
    }

    func stop() {
        if let web { XCTAssertEqual(web.stop(), 0, "tiltd web exit status; log:\n\(web.log)") }
        if let daemon { daemon.stop() }
        try? FileManager.default.removeItem(atPath: dir)
    }

    var logs: String { "--- daemon\n\(daemon?.log.suffix(3000) ?? "")\n--- web\n\(web?.log.suffix(3000) ?? "")" }
}

/// Where screenshots go: $TILTD_SCREENSHOTS, else /tmp/tiltd-screenshots.
let screenshotDir: String = {
    let d = ProcessInfo.processInfo.environment["TILTD_SCREENSHOTS"] ?? "/tmp/tiltd-screenshots"
    try? FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    return d
}()

/// Runs a blocking call (a socket read) off Swift's cooperative threads.
func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { c in
        Thread.detachNewThread { c.resume(with: Result { try body() }) }
    }
}

/// Milliseconds since the epoch, as the page's `performance.timeOrigin + performance.now()`.
func wallMillis() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_REALTIME, &ts)
    return Double(ts.tv_sec) * 1000 + Double(ts.tv_nsec) / 1e6
}
