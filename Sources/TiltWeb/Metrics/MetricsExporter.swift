// SPDX-License-Identifier: Apache-2.0
import NIOConcurrencyHelpers
import Prometheus
import TiltCore
import TiltProtocol

/// `/metrics` in Prometheus' text format (swift-prometheus). On each scrape it asks the daemon
/// for `stats` and mirrors the counters (the daemon owns them; they restart from zero when it
/// restarts, which Prometheus' `rate()` handles), plus the web process's own: whether the daemon
/// is reachable, browsers, lines sent and dropped, reconnects.
public final class MetricsExporter: Sendable {
    private let registry = PrometheusCollectorRegistry()
    private struct Key: Hashable { let name: String; let labels: [String] }
    private struct Made {
        var counters: [Key: Counter] = [:]
        var gauges: [Key: Gauge] = [:]
    }
    private let made = NIOLockedValueBox(Made())
    /// One scrape at a time: a counter is reset and re-filled while the lock is held.
    private let scrapeLock = NIOLock()

    /// An exporter with its own registry; metrics are made on the first scrape.
    public init() {}

    /// Renders the metrics after asking `link` for the daemon's `stats`.
    public func scrape(link: DaemonLink?, hub: BrowserHub, relay: LiveRelay?) async -> String {
        var stats: StatsReplyBody?
        if let link, link.state == .connected, let reply = try? await link.request(["cmd": "stats"], timeout: 2) {
            stats = StatsReplyBody(reply)
        }
        return scrapeLock.withLock {
            gauge(
                "tiltd_up", "1 when tiltd web is connected to the daemon and it answered stats",
                set: stats == nil ? 0 : 1)
            if let s = stats { mirror(s) }
            gauge("tiltd_web_browsers", "browsers connected to tiltd web over WebSocket", set: Double(hub.count))
            let (sent, dropped) = hub.counters
            counter("tiltd_web_lines_sent_total", "lines queued to browsers", set: Double(sent))
            counter(
                "tiltd_web_lines_dropped_total", "lines dropped because a browser fell behind", set: Double(dropped))
            counter(
                "tiltd_web_daemon_connects_total", "connections tiltd web made to the daemon's socket",
                set: Double(link?.connects ?? 0))
            return registry.emitToString()
        }
    }

    /// The daemon's `stats` reply (docs/protocol.md) as metrics.
    private func mirror(_ s: StatsReplyBody) {
        if let v = s.uptimeSeconds {
            gauge("tiltd_uptime_seconds", "seconds since the daemon started", set: v)
        }
        if let v = s.sampleRateHz {
            gauge("tiltd_sample_rate_hz", "IMU samples per second, measured over the last second", set: v)
        }
        if let v = s.samples { counter("tiltd_samples_total", "IMU samples processed", set: v) }
        if let v = s.samplesDropped {
            counter("tiltd_samples_dropped_total", "samples dropped because the daemon's event loop was behind", set: v)
        }
        if let v = s.clients {
            gauge("tiltd_clients", "clients connected to the daemon's socket", set: v)
        }
        for (cls, n) in s.linesDropped {
            counter(
                "tiltd_lines_dropped_total", "lines dropped for slow socket clients, per event class",
                labels: [("class", cls)], set: n)
        }
        for (kind, n) in s.decisions {
            counter("tiltd_decisions_total", "game decisions, per kind", labels: [("kind", kind)], set: n)
        }
        for (event, n) in s.rounds {
            counter("tiltd_rounds_total", "game rounds, started and ended", labels: [("event", event)], set: n)
        }
        if let v = s.fixAgeSeconds {
            gauge("tiltd_fix_age_seconds", "seconds since the latest GPS fix arrived", set: v)
        }
        for (result, n) in s.reloads {
            counter(
                "tiltd_reloads_total", "configuration reloads, per result (applied, refused)",
                labels: [("result", result)], set: n)
        }
        if let last = s.lastReload {
            gauge(
                "tiltd_last_reload_applied", "1 when the latest reload was applied, 0 when it was refused",
                set: last == "applied" ? 1 : 0)
        }
    }

    private func counter(_ name: String, _ help: String, labels: [(String, String)] = [], set value: Double) {
        let key = Key(name: name, labels: labels.flatMap { [$0.0, $0.1] })
        let c = made.withLockedValue { m -> Counter in
            if let c = m.counters[key] { return c }
            let c = registry.makeCounter(descriptor: Self.descriptor(name, help), labels: labels)
            m.counters[key] = c
            return c
        }
        c.reset()
        c.increment(by: max(0, value))
    }

    /// A metric named exactly `name` (our names already end in their unit, e.g. `_total`).
    private static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    private func gauge(_ name: String, _ help: String, set value: Double) {
        let key = Key(name: name, labels: [])
        let g = made.withLockedValue { m -> Gauge in
            if let g = m.gauges[key] { return g }
            let g = registry.makeGauge(descriptor: Self.descriptor(name, help))
            m.gauges[key] = g
            return g
        }
        g.set(value)
    }
}
