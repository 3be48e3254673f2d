// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import TiltCore
import TiltPlot
import TiltRecordings

/// The page's recordings view: `GET /api/recordings` lists the recordings in `[web] recordings`
/// (names only: nothing outside that directory is reachable), `GET /api/recordings/NAME/plot.svg`
/// (`?game=1` adds the game panel) draws one with `RecordingPlot`.
struct PlotRoutes: Sendable {
    let directory: String?
    let calibration: IMUCalibration
    let rules: TiltGame.Rules
    /// Plots drawn already, and the bound on drawing (`PlotCache`).
    let cache = PlotCache()

    func add(to router: Router<WebContext>) {
        router.get("/api/recordings") { _, _ -> Response in
            PairRoutes.json(
                .ok,
                ["directory": directory.map { .string($0) } ?? .null, "recordings": .array(list().map { .string($0) })])
        }
        router.get("/api/recordings/:name/plot.svg") { request, context -> Response in
            let name = try context.parameters.require("name")
            guard let dir = directory, list().contains(name) else {
                throw HTTPError(.notFound, message: "no recording \"\(name)\"")
            }
            let game = request.uri.queryParameters["game"].map { $0 != "0" } ?? false
            let path = (dir as NSString).appendingPathComponent(name)
            guard let key = PlotCache.Key.current(name: name, path: path, game: game) else {
                throw HTTPError(.notFound, message: "no recording \"\(name)\"")
            }
            guard key.size <= PlotCache.maxFileBytes else {
                throw HTTPError(.contentTooLarge, message: "\(name) is larger than \(PlotCache.maxFileBytes >> 20) MiB")
            }
            let svg: String
            if let kept = cache.plot(key) {
                svg = kept
            } else {
                guard cache.beginDrawing() else {
                    var h = HTTPFields()
                    h[.retryAfter] = "2"
                    return Response(status: .serviceUnavailable, headers: h)
                }
                var drawn: String?
                defer { cache.endDrawing(key, svg: drawn) }
                svg = try await Task.detached { [calibration, rules] in
                    let data = try DatasetReader.read(path: path)
                    let plot = RecordingPlot(calibration: calibration, rules: rules, game: game)
                    return try plot.chart(samples: data.samples, title: name).0.render()
                }.value
                drawn = svg
            }
            var h = HTTPFields()
            h[.contentType] = "image/svg+xml"
            SecurityHeaders.apply(&h)
            return Response(status: .ok, headers: h, body: .init(byteBuffer: ByteBuffer(string: svg)))
        }
    }

    /// Recording files directly in the directory (`.csv`, `.csv.gz`), sorted by name.
    func list() -> [String] {
        guard let directory, let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else {
            return []
        }
        return names.filter { !$0.hasPrefix(".") && ($0.hasSuffix(".csv") || $0.hasSuffix(".csv.gz")) }.sorted()
    }
}
