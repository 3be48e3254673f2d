// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol

/// Turns a `MonitorState` into text: the full-screen view of `tiltd monitor` and the one-line
/// summary it prints when stdout is not a terminal.
///
/// Plain ASCII on purpose: the monitor is meant for a Pi's console or an SSH session whose
/// locale may not be UTF-8. Pure (no terminal, no clock), so it is tested with fixed states.
public enum MonitorView {
    /// The screen as lines, each at most `width` characters, at most `height` lines.
    public static func screen(_ s: MonitorState, width: Int, height: Int) -> [String] {
        let width = max(width, 40)
        var out: [String] = []
        let title = "tiltd monitor  \(s.socketPath)"
        let conn: String
        if s.connected {
            conn = "connected" + (s.daemonVersion.map { " (tiltd \($0))" } ?? "")
        } else {
            conn = "disconnected, retrying..." + (s.disconnectReason.map { " (\($0))" } ?? "")
        }
        out.append(title)
        out.append(conn + "   q: quit")
        out.append("")

        // Attitude
        if let a = s.attitude {
            out.append(
                "roll \(angle(a.rollDeg))   pitch \(angle(a.pitchDeg))   yaw \(a.yawDeg.map(angle) ?? "---")"
                    + (a.t.map { "   t \(fixed(Double($0) / 1e9, 3)) s" } ?? ""))
            let rest = a.atRest.map { $0 ? "yes" : "no" } ?? "?"
            let bias = a.gyroBias.map { "[" + $0.map { signed($0, 5) }.joined(separator: ", ") + "] rad/s" } ?? "?"
            out.append("at rest: \(rest)   gyro bias: \(bias)")
            out.append(headingText(a))
        } else {
            out.append("roll ---   pitch ---   yaw ---   (no attitude yet)")
            out.append("at rest: ?   gyro bias: ?")
            out.append("heading: ---")
        }
        out.append("")
        out.append(
            contentsOf: gauge(
                absRoll: s.attitude.map { abs($0.rollDeg) }, low: s.lowThresholdDeg, high: s.highThresholdDeg,
                lowSide: s.game.lowSide, width: width))
        out.append("")

        // Game
        var g = "game: \(s.game.state)"
        if let r = s.game.round { g += "   round \(r)" }
        g += "   score \(s.game.score)"
        if let left = s.gameTimeLeftMs { g += "   time left \(fixed(Double(left) / 1000, 1)) s" }
        if let m = s.game.mode, m != "absolute" { g += "   mode \(m)" }
        if let h = s.game.headFrame { g += "   head frame \(h)" + (s.game.orientationSuspect ? " (suspect)" : "") }
        out.append(g)
        var p = "  prompt: " + (s.game.prompt.map { "\"\($0)\"" } ?? "-")
        if let k = s.game.lastKind {
            p += "   last: \(k)" + (s.game.tiltDeg.map { " (tilt \(fixed($0, 1)) deg)" } ?? "")
        }
        out.append(p)
        out.append("")

        // Fix
        out.append("fix: " + fixText(s.fix))
        out.append("")

        // Stream health
        var st = "rate: " + (s.sampleRateHz.map { "\(fixed($0, 1)) Hz" } ?? "?")
        if let c = s.clients { st += "   clients \(c)" }
        out.append(st)
        out.append(
            "dropped: \(s.gapDropped) lines to this monitor (\(s.gapEvents) gap events)"
                + (s.droppedLinesAllClients.map { ", \($0) to all clients" } ?? ""))
        if !s.sources.isEmpty {
            out.append(
                "sources: "
                    + s.sources.map { "\($0.source) \($0.state)" + ($0.message.isEmpty ? "" : ": \($0.message)") }
                    .joined(separator: "; "))
        }
        if s.badLines > 0 { out.append("unreadable lines: \(s.badLines)") }

        return out.prefix(max(height, 1)).map { clip(printable($0), width) }
    }

    /// The |roll| gauge over 0...180 degrees: a bar, the thresholds as `|`, the reading as `O`,
    /// then a scale line and the zone names.
    ///
    ///     [#########################|#######O       |                         ]
    ///      0                        63              117                    180
    ///      correct                       neutral                       skip
    public static func gauge(
        absRoll: Double?, low: Double, high: Double, lowSide: String = "correct", width: Int
    ) -> [String] {
        let cells = max(width - 2, 20)
        func cell(_ deg: Double) -> Int {
            min(cells - 1, max(0, Int(saturating: (deg / 180 * Double(cells)).rounded(.down))))
        }
        let lowCell = cell(low), highCell = cell(high)
        var bar = [Character](repeating: " ", count: cells)
        if let r = absRoll, r.isFinite {
            let v = cell(min(max(r, 0), 180))
            for i in 0..<v { bar[i] = "#" }
            bar[v] = "O"
        }
        // Thresholds stay visible under the fill; the reading's marker wins when on one.
        if bar[lowCell] != "O" { bar[lowCell] = "|" }
        if bar[highCell] != "O" { bar[highCell] = "|" }

        var scale = [Character](repeating: " ", count: cells + 2)
        func put(_ text: String, at col: Int) {
            let chars = Array(text)
            let start = min(max(col, 0), scale.count - chars.count)
            for (i, c) in chars.enumerated() { scale[start + i] = c }
        }
        put("0", at: 1)
        put(number(low), at: lowCell + 1)
        put(number(high), at: highCell + 1)
        put("180", at: cells - 2)

        var zones = [Character](repeating: " ", count: cells + 2)
        let highSide = lowSide == "skip" ? "correct" : "skip"
        for (text, from, to) in [(lowSide, 0, lowCell), ("neutral", lowCell, highCell), (highSide, highCell, cells)] {
            let chars = Array(text)
            let mid = 1 + (from + to) / 2 - chars.count / 2
            let start = min(max(mid, 1), zones.count - chars.count)
            for (i, c) in chars.enumerated() { zones[start + i] = c }
        }

        let reading = absRoll.map { "|roll| \(fixed($0, 1)) deg" } ?? "|roll| ---"
        return [
            reading, "[" + String(bar) + "]", String(scale).trailingSpaceTrimmed, String(zones).trailingSpaceTrimmed,
        ]
    }

    /// One line for a log or a pipe: everything important, `key=value`.
    public static func summary(_ s: MonitorState) -> String {
        guard s.connected else { return "disconnected, retrying..." + (s.disconnectReason.map { " (\($0))" } ?? "") }
        var parts: [String] = []
        if let a = s.attitude {
            parts.append(
                "roll=\(fixed(a.rollDeg, 1)) pitch=\(fixed(a.pitchDeg, 1)) yaw=\(a.yawDeg.map { fixed($0, 1) } ?? "-")")
            parts.append("at_rest=\(a.atRest.map { $0 ? "yes" : "no" } ?? "?")")
            if let b = a.gyroBias { parts.append("gyro_bias=" + b.map { fixed($0, 5) }.joined(separator: ",")) }
            if let src = a.headingSource {
                var h = "heading=\(a.headingDeg.map { fixed($0, 1) } ?? "-")"
                if let t = a.trueHeadingDeg { h += " true_heading=\(fixed(t, 1))" }
                h += " heading_source=\(src)"
                if a.magDisturbed == true { h += " mag_disturbed=yes" }
                parts.append(h)
            }
        } else {
            parts.append("roll=-")
        }
        parts.append("thresholds=\(number(s.lowThresholdDeg)),\(number(s.highThresholdDeg))")
        var g = "game=\(s.game.state)"
        if let r = s.game.round { g += " round=\(r)" }
        g += " score=\(s.game.score)"
        if let left = s.gameTimeLeftMs { g += " left=\(fixed(Double(left) / 1000, 1))s" }
        if let p = s.game.prompt { g += " prompt=\"\(p)\"" }
        if let h = s.game.headFrame { g += " head_frame=\(h)" + (s.game.orientationSuspect ? ",suspect" : "") }
        parts.append(g)
        if let f = s.fix, f.mode >= 2, let lat = f.lat, let lon = f.lon {
            parts.append("fix=\(fixed(lat, 6)),\(fixed(lon, 6))")
        } else {
            parts.append("fix=none")
        }
        parts.append("rate=" + (s.sampleRateHz.map { "\(fixed($0, 1))Hz" } ?? "?"))
        parts.append("dropped=\(s.gapDropped)" + (s.droppedLinesAllClients.map { " dropped_all=\($0)" } ?? ""))
        return printable(parts.joined(separator: " "))
    }

    /// `heading 61.3 deg magnetic   66.1 deg true (ENE)   source: mag`, with the compass point
    /// of the true heading (else the magnetic one) and a note while the field is disturbed.
    static func headingText(_ a: MonitorState.AttitudeReading) -> String {
        guard let source = a.headingSource else { return "heading: ? (the daemon does not send it)" }
        var parts: [String] = []
        if let m = a.headingDeg { parts.append("\(fixed(m, 1)) deg magnetic") }
        if let t = a.trueHeadingDeg { parts.append("\(fixed(t, 1)) deg true") }
        var text = "heading: " + (parts.isEmpty ? "---" : parts.joined(separator: "   "))
        if let d = a.trueHeadingDeg ?? a.headingDeg { text += " (\(compassPoint(d)))" }
        text += "   source: \(source)"
        if a.magDisturbed == true { text += "   field disturbed: held on the gyro" }
        return text
    }

    /// The nearest of the 16 compass points ("N", "NNE", …) to `deg` clockwise from north.
    static func compassPoint(_ deg: Double) -> String {
        let names = [
            "N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW",
        ]
        guard deg.isFinite else { return "?" }
        let i = Int(saturating: (deg / 22.5).rounded()) % 16
        return names[i < 0 ? i + 16 : i]
    }

    static func fixText(_ f: MonitorState.FixReading?) -> String {
        guard let f else { return "none yet" }
        let modeName = ["no data", "no fix", "2D", "3D"]
        var t = "mode \(f.mode)" + (0...3 ~= f.mode ? " (\(modeName[Int(f.mode)]))" : "")
        if let lat = f.lat, let lon = f.lon { t += "   \(fixed(lat, 6)), \(fixed(lon, 6))" }
        if let a = f.altM { t += "   alt \(fixed(a, 1)) m" }
        if let v = f.speedMps { t += "   speed \(fixed(v, 1)) m/s" }
        if let c = f.trackDeg { t += "   track \(fixed(c, 0)) deg" }
        return t
    }

    // MARK: number formatting (no Foundation: exact, locale-free)

    /// `+90.1 deg` with a sign, fixed width so the line does not jump.
    static func angle(_ d: Double) -> String {
        let s = signed(d, 1)
        return String(repeating: " ", count: max(0, 6 - s.count)) + s + " deg"
    }

    static func signed(_ x: Double, _ digits: Int) -> String {
        let s = fixed(x, digits)
        return s.hasPrefix("-") ? s : "+" + s
    }

    /// `x` rounded to `digits` decimals, as text ("-0.0" is "0.0").
    public static func fixed(_ x: Double, _ digits: Int) -> String {
        guard x.isFinite else { return x.isNaN ? "nan" : (x < 0 ? "-inf" : "inf") }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let r = (abs(x) * scale).rounded()
        guard r < 9e18 else { return String(x) }
        let n = Int64(r)
        let negative = x < 0 && n != 0
        let p = Int64(scale)
        var text = String(n / p)
        if digits > 0 {
            let frac = String(n % p)
            text += "." + String(repeating: "0", count: digits - frac.count) + frac
        }
        return negative ? "-" + text : text
    }

    /// A threshold: whole numbers without decimals.
    static func number(_ x: Double) -> String { x == x.rounded() ? fixed(x, 0) : fixed(x, 1) }

    /// Text from the daemon (prompts, messages) with control characters replaced, so a deck
    /// entry cannot send escape sequences to the terminal.
    static func printable(_ s: String) -> String {
        String(
            String.UnicodeScalarView(
                s.unicodeScalars.map { ($0.value < 0x20 || (0x7F...0x9F).contains($0.value)) ? "?" : $0 }))
    }

    static func clip(_ line: String, _ width: Int) -> String {
        line.count <= width ? line : String(line.prefix(width))
    }
}

extension String {
    fileprivate var trailingSpaceTrimmed: String {
        var s = self
        while s.last == " " { s.removeLast() }
        return s
    }
}
