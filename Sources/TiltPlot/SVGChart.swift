// SPDX-License-Identifier: Apache-2.0
import FoundationEssentials
import Glibc
import TiltCore
import TiltPlatform

/// A stack of time-series panels sharing one time axis, written as SVG text: what `tiltd plot`
/// and the page's recordings view draw. Series are thinned to at most `maxPoints` per panel
/// width by keeping each bucket's minimum and maximum, so a 1 ms spike still shows.
public struct SVGChart {
    /// One line in a panel: `y` against `t` (seconds), in `color`.
    public struct Series {
        /// The legend's label.
        public var name: String
        /// An SVG/CSS colour (e.g. "#1f77b4").
        public var color: String
        /// Sample times, seconds; as many as `y`.
        public var t: [Double]
        /// Sample values, in the panel's unit.
        public var y: [Double]
        /// A series named `name` drawn in `color`.
        public init(name: String, color: String, t: [Double], y: [Double]) {
            self.name = name; self.color = color; self.t = t; self.y = y
        }
    }

    /// A horizontal band (a game zone) with a label.
    public struct Band {
        public var from: Double, to: Double, color: String, label: String
        /// A band from `from` to `to` (panel units) in `color`, labelled `label`.
        public init(from: Double, to: Double, color: String, label: String) {
            self.from = from; self.to = to; self.color = color; self.label = label
        }
    }

    /// A vertical mark at time `t` (a decision): drawn as a line with a labelled dot at `y`.
    public struct Marker {
        public var t: Double, y: Double, kind: String, label: String, color: String
        /// A marker at time `t`, value `y`, of `kind` (e.g. a decision's kind).
        public init(t: Double, y: Double, kind: String, label: String, color: String) {
            self.t = t; self.y = y; self.kind = kind; self.label = label; self.color = color
        }
    }

    /// A shaded time span (a prompt on screen).
    public struct Span {
        public var from: Double, to: Double, label: String
        /// A span from `from` to `to` seconds, labelled `label`.
        public init(from: Double, to: Double, label: String) { self.from = from; self.to = to; self.label = label }
    }

    /// One chart of the stack: its series and what is drawn behind or over them.
    public struct Panel {
        /// Shown above the panel.
        public var title: String
        /// The y axis's unit (e.g. "deg", "m/s²").
        public var unit: String
        /// The lines drawn.
        public var series: [Series]
        /// Horizontal bands drawn behind the series.
        public var bands: [Band] = []
        /// Vertical marks drawn over the series.
        public var markers: [Marker] = []
        /// Shaded time spans drawn behind the series.
        public var spans: [Span] = []
        /// Fixed y range; nil = from the data.
        public var yRange: ClosedRange<Double>?
        /// A panel of `series` with no bands, markers or spans.
        public init(title: String, unit: String, series: [Series], yRange: ClosedRange<Double>? = nil) {
            self.title = title; self.unit = unit; self.series = series; self.yRange = yRange
        }
    }

    /// The chart's title, drawn at the top.
    public var title: String
    /// The panels, top to bottom.
    public var panels: [Panel]
    /// The SVG's width, pixels.
    public var width = 1200.0
    /// Each panel's height, pixels.
    public var panelHeight = 200.0
    /// Points kept per series after thinning.
    public var maxPoints = 1200

    /// A chart of `panels` with the default size.
    public init(title: String, panels: [Panel]) { self.title = title; self.panels = panels }

    static let left = 70.0, right = 20.0, top = 40.0, gap = 40.0, bottom = 40.0

    /// The chart as a standalone SVG document.
    public func render() -> String {
        let allT = panels.flatMap { $0.series.flatMap(\.t) }
        let t0 = allT.min() ?? 0, t1 = max(allT.max() ?? 1, t0 + 1e-9)
        let plotW = width - Self.left - Self.right
        let height = Self.top + Double(panels.count) * (panelHeight + Self.gap) + Self.bottom - Self.gap
        var s = """
            <svg xmlns="http://www.w3.org/2000/svg" width="\(f(width))" height="\(f(height))" viewBox="0 0 \(f(width)) \(f(height))" font-family="sans-serif" font-size="12">
            <title>\(esc(title))</title>
            <rect width="100%" height="100%" fill="#ffffff"/>
            <text x="\(f(Self.left))" y="24" font-size="16" font-weight="bold">\(esc(title))</text>

            """
        for (i, p) in panels.enumerated() {
            let y0 = Self.top + Double(i) * (panelHeight + Self.gap)
            let values = p.series.flatMap(\.y).filter(\.isFinite) + p.bands.flatMap { [$0.from, $0.to] }
            var lo = p.yRange?.lowerBound ?? (values.min() ?? -1), hi = p.yRange?.upperBound ?? (values.max() ?? 1)
            if hi - lo < 1e-9 { lo -= 1; hi += 1 }
            let pad = p.yRange == nil ? (hi - lo) * 0.05 : 0
            lo -= pad; hi += pad
            func x(_ t: Double) -> Double { Self.left + (t - t0) / (t1 - t0) * plotW }
            func y(_ v: Double) -> Double { y0 + panelHeight - (min(max(v, lo), hi) - lo) / (hi - lo) * panelHeight }

            s += "<g class=\"panel\" data-title=\"\(esc(p.title))\">\n"
            s +=
                "<text x=\"\(f(Self.left))\" y=\"\(f(y0 - 6))\" font-weight=\"bold\">\(esc(p.title)) (\(esc(p.unit)))</text>\n"
            s +=
                "<rect x=\"\(f(Self.left))\" y=\"\(f(y0))\" width=\"\(f(plotW))\" height=\"\(f(panelHeight))\" fill=\"#fafafa\" stroke=\"#999\"/>\n"
            for sp in p.spans {
                s +=
                    "<rect class=\"prompt\" x=\"\(f(x(sp.from)))\" y=\"\(f(y0))\" width=\"\(f(max(0.5, x(sp.to) - x(sp.from))))\" height=\"\(f(panelHeight))\" fill=\"#fff3c4\"><title>\(esc(sp.label))</title></rect>\n"
            }
            for b in p.bands {
                let ya = y(max(b.from, b.to)), yb = y(min(b.from, b.to))
                s +=
                    "<rect class=\"zone\" x=\"\(f(Self.left))\" y=\"\(f(ya))\" width=\"\(f(plotW))\" height=\"\(f(yb - ya))\" fill=\"\(b.color)\" fill-opacity=\"0.18\"/>\n"
                s +=
                    "<text x=\"\(f(Self.left + plotW - 4))\" y=\"\(f((ya + yb) / 2 + 4))\" text-anchor=\"end\" fill=\"\(b.color)\">\(esc(b.label))</text>\n"
            }
            for tick in Self.ticks(lo, hi, count: 5) {
                s +=
                    "<line x1=\"\(f(Self.left))\" x2=\"\(f(Self.left + plotW))\" y1=\"\(f(y(tick)))\" y2=\"\(f(y(tick)))\" stroke=\"#e3e3e3\"/>"
                s +=
                    "<text x=\"\(f(Self.left - 6))\" y=\"\(f(y(tick) + 4))\" text-anchor=\"end\">\(Self.label(tick))</text>\n"
            }
            for tick in Self.ticks(t0, t1, count: 10) {
                s +=
                    "<line x1=\"\(f(x(tick)))\" x2=\"\(f(x(tick)))\" y1=\"\(f(y0))\" y2=\"\(f(y0 + panelHeight))\" stroke=\"#eeeeee\"/>"
                s +=
                    "<text x=\"\(f(x(tick)))\" y=\"\(f(y0 + panelHeight + 14))\" text-anchor=\"middle\">\(Self.label(tick)) s</text>\n"
            }
            // The legend sits at the right end of the title line, clear of the title.
            var legendX = Self.left + plotW - 90 * Double(p.series.count)
            for ser in p.series {
                s +=
                    "<polyline class=\"series\" data-name=\"\(esc(ser.name))\" fill=\"none\" stroke=\"\(ser.color)\" stroke-width=\"1.2\" points=\""
                for (t, v) in thin(ser, t0: t0, t1: t1) where v.isFinite { s += "\(f(x(t))),\(f(y(v))) " }
                s += "\"/>\n"
                s +=
                    "<rect x=\"\(f(legendX))\" y=\"\(f(y0 - 16))\" width=\"12\" height=\"4\" fill=\"\(ser.color)\"/><text x=\"\(f(legendX + 16))\" y=\"\(f(y0 - 11))\">\(esc(ser.name))</text>\n"
                legendX += 90
            }
            for m in p.markers {
                s +=
                    "<g class=\"decision\" data-kind=\"\(esc(m.kind))\" data-t=\"\(f(m.t))\"><title>\(esc(m.label))</title>"
                s +=
                    "<line x1=\"\(f(x(m.t)))\" x2=\"\(f(x(m.t)))\" y1=\"\(f(y0))\" y2=\"\(f(y0 + panelHeight))\" stroke=\"\(m.color)\" stroke-dasharray=\"3,3\"/>"
                s += "<circle cx=\"\(f(x(m.t)))\" cy=\"\(f(y(m.y)))\" r=\"5\" fill=\"\(m.color)\"/>"
                s +=
                    "<text x=\"\(f(x(m.t) + 6))\" y=\"\(f(y(m.y) - 6))\" fill=\"\(m.color)\">\(esc(m.kind))</text></g>\n"
            }
            s += "</g>\n"
        }
        s += "</svg>\n"
        return s
    }

    /// At most `maxPoints` points: each bucket's min and max, in time order.
    func thin(_ ser: Series, t0: Double, t1: Double) -> [(Double, Double)] {
        let n = min(ser.t.count, ser.y.count)
        guard n > maxPoints else { return Array(zip(ser.t.prefix(n), ser.y.prefix(n))) }
        let buckets = maxPoints / 2
        var out: [(Double, Double)] = []
        out.reserveCapacity(maxPoints)
        var i = 0
        for b in 0..<buckets {
            let end = t0 + (t1 - t0) * Double(b + 1) / Double(buckets)
            var lo: (Double, Double)?, hi: (Double, Double)?
            while i < n && (ser.t[i] <= end || b == buckets - 1) {
                let p = (ser.t[i], ser.y[i])
                if lo == nil || p.1 < lo!.1 { lo = p }
                if hi == nil || p.1 > hi!.1 { hi = p }
                i += 1
            }
            if let lo, let hi { out += lo.0 <= hi.0 ? [lo, hi] : [hi, lo] }
        }
        return out
    }

    /// "Nice" tick values (1, 2, 5 × 10ⁿ) covering lo…hi.
    static func ticks(_ lo: Double, _ hi: Double, count: Int) -> [Double] {
        let raw = (hi - lo) / Double(max(1, count))
        guard raw > 0, raw.isFinite else { return [] }
        let mag = pow(10, floor(log10(raw)))
        let step = [1.0, 2, 5, 10].map { $0 * mag }.first { $0 >= raw } ?? 10 * mag
        var out: [Double] = []
        var v = ceil(lo / step) * step
        while v <= hi + step * 1e-9 { out.append(abs(v) < step * 1e-9 ? 0 : v); v += step }
        return out
    }

    static func label(_ v: Double) -> String {
        v == v.rounded() && abs(v) < 1e15 ? String(Int64(saturating: v)) : cFormat("%.2g", v)
    }
}

func f(_ v: Double) -> String { cFormat("%.1f", v) }

/// Escapes text for SVG (XML) content and attributes.
func esc(_ s: String) -> String {
    var out = ""
    for c in s {
        switch c {
        case "&": out += "&amp;"
        case "<": out += "&lt;"
        case ">": out += "&gt;"
        case "\"": out += "&quot;"
        default: out.append(c)
        }
    }
    return out
}
