// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltPlatform

/// Reads the track points of a GPX 1.1 (or 1.0) file as fixes.
///
/// Used: every `trkpt` in document order (all tracks and segments), its `lat`/`lon` attributes,
/// `ele` (→ alt, mode 3; without it mode 2), `time` (ISO 8601, `Z` or ±hh:mm offset, fractional
/// seconds kept to the nanosecond), `hdop` (→ eph = hdop × `ephPerHDOP`, default 7 m: a 4 m
/// 1-sigma range error, spread over two axes, at the 95 % radius), `fix` (`none` → mode 1), and from
/// anywhere inside the point (GPX 1.0 or an `extensions` block such as Garmin's
/// TrackPointExtension) elements named `speed` (m/s) and `course` (degrees; without it, the
/// bearing from the point before, `withCourse`). Waypoints and routes
/// are ignored. Malformed input is an error naming the line; the file itself is never touched.
///
/// A file format, so it lives with the other readers (recordings, datasets) rather than in the
/// pure core. The XML reader is a small one of our own (no C XML library for one format): elements, attributes,
/// text, entities, CDATA, comments and processing instructions — enough for any GPX; it does not
/// validate against the schema or expand DTD entities.
public enum GPX {
    /// Why a GPX file could not be read, with the 1-based line.
    public struct Error: Swift.Error, Equatable, CustomStringConvertible {
        /// What is wrong.
        public var message: String
        /// The 1-based line.
        public var line: Int
        /// "GPX line N: message".
        public var description: String { "GPX line \(line): \(message)" }
    }

    /// eph (95 %, m) per unit of HDOP.
    public static let ephPerHDOP = 7.0

    /// The track points of `bytes` as fixes.
    public static func parseFixes(_ bytes: [UInt8]) throws(Error) -> [Fix] {
        var scanner = XMLScanner(bytes)
        var stack: [String] = []
        var fixes: [Fix] = []
        var current: Fix?
        var text = ""
        var sawRoot = false
        while let token = try scanner.next() {
            switch token {
            case .start(let rawName, let attrs, let selfClosing):
                let name = GPXLocal.name(rawName)
                if !sawRoot {
                    guard name == "gpx" else {
                        throw Error(message: "root element is <\(rawName)>, not <gpx>", line: scanner.line)
                    }
                    sawRoot = true
                }
                text = ""
                if name == "trkpt", stack.last == "trkseg" {
                    guard let latS = attrs["lat"], let lonS = attrs["lon"] else {
                        throw Error(message: "trkpt needs lat and lon attributes", line: scanner.line)
                    }
                    guard let lat = Double(latS), lat.isFinite, abs(lat) <= 90 else {
                        throw Error(message: "bad lat \"\(latS)\"", line: scanner.line)
                    }
                    guard let lon = Double(lonS), lon.isFinite, abs(lon) <= 180 else {
                        throw Error(message: "bad lon \"\(lonS)\"", line: scanner.line)
                    }
                    current = Fix(mode: 2, lat: lat, lon: lon)
                    if selfClosing { fixes.append(current!); current = nil } else { stack.append(name) }
                } else if !selfClosing {
                    stack.append(name)
                }
            case .text(let s):
                text += s
            case .end(let rawName):
                let name = GPXLocal.name(rawName)
                guard stack.last == name else {
                    throw Error(
                        message: "</\(rawName)> does not close <\(stack.last ?? "nothing")>", line: scanner.line)
                }
                stack.removeLast()
                if name == "trkpt", current != nil {
                    fixes.append(current!)
                    current = nil
                } else if current != nil {
                    try apply(name, text.gpxTrimmed(), to: &current!, line: scanner.line)
                }
                text = ""
            }
        }
        if !sawRoot { throw Error(message: "no <gpx> element", line: scanner.line) }
        if let open = stack.last { throw Error(message: "file ends inside <\(open)>", line: scanner.line) }
        return withCourse(fixes)
    }

    /// The smallest step between two track points that gives a course, m: under it, a
    /// receiver's position noise (a few metres) turns the bearing anywhere.
    public static let minCourseStep = 2.0
    /// How many points back a course may be measured from.
    public static let courseLookBack = 60

    /// Points without a `course` get the bearing from the nearest point before them that is at
    /// least `minCourseStep` away (a GPS receiver reports its course, and gpsd passes it on; GPX
    /// tracks seldom carry it, so without this a replayed walk has no course and no GPS heading).
    /// Measured back from each point, so a walk at 1–2 m per fix has a course at every fix.
    static func withCourse(_ fixes: [Fix]) -> [Fix] {
        var out = fixes
        var points: [GeoPoint] = []
        for i in out.indices {
            guard let lat = out[i].lat, let lon = out[i].lon, out[i].hasPosition else { continue }
            let here = GeoPoint(lat: lat, lon: lon)
            if out[i].track == nil {
                // The nearest earlier point far enough away, among the last `courseLookBack`: a
                // walker is that far within a few points; one standing still gets no course.
                for p in points.suffix(courseLookBack).reversed() where Geo.distance(p, here) >= minCourseStep {
                    out[i].track = Geo.bearing(from: p, to: here)
                    break
                }
            }
            points.append(here)
        }
        return out
    }

    /// Parses a GPX text.
    public static func parseFixes(_ text: String) throws(Error) -> [Fix] { try parseFixes(Array(text.utf8)) }

    private static func apply(_ name: String, _ v: String, to f: inout Fix, line: Int) throws(Error) {
        func number() throws(Error) -> Double {
            guard let d = Double(v), d.isFinite else {
                throw Error(message: "<\(name)> is not a number: \"\(v)\"", line: line)
            }
            return d
        }
        switch name {
        case "ele": f.alt = try number(); if f.mode == 2 { f.mode = 3 }
        case "time":
            guard let t = parseTime(v) else {
                throw Error(message: "bad <time> \"\(v)\" (want ISO 8601 like 2024-05-01T10:00:00Z)", line: line)
            }
            f.time = t
        case "hdop": f.eph = try number() * ephPerHDOP
        case "speed": f.speed = try number()
        case "course": f.track = try number()
        case "fix": if v == "none" { f.mode = 1 } else if v == "2d" { f.mode = 2 } else if v == "3d" { f.mode = 3 }
        default: break
        }
    }

    /// ISO 8601 date-time → ns since the Unix epoch: `YYYY-MM-DDThh:mm:ss[.f…](Z|±hh:mm)`.
    /// A time without a zone is read as UTC (GPX mandates UTC).
    public static func parseTime(_ s: String) -> Nanoseconds? {
        let b = Array(s.utf8)
        var i = 0
        func digits(_ n: Int) -> Int? {
            guard i + n <= b.count else { return nil }
            var v = 0
            for k in 0..<n {
                let c = b[i + k]
                guard c >= 48, c <= 57 else { return nil }
                v = v * 10 + Int(c - 48)
            }
            i += n
            return v
        }
        func expect(_ c: UInt8) -> Bool { if i < b.count, b[i] == c { i += 1; return true }; return false }
        guard let y = digits(4), expect(45), let mo = digits(2), expect(45), let d = digits(2),
            expect(84) || expect(116) || expect(32),
            let h = digits(2), expect(58), let mi = digits(2), expect(58), let sec = digits(2)
        else { return nil }
        guard (1...12).contains(mo), (1...31).contains(d), h <= 23, mi <= 59, sec <= 60 else { return nil }
        var frac: Int64 = 0
        if expect(46) {
            var scale: Int64 = 100_000_000
            var any = false
            while i < b.count, b[i] >= 48, b[i] <= 57 {
                frac += Int64(b[i] - 48) * scale
                scale /= 10
                i += 1; any = true
            }
            if !any { return nil }
        }
        var offset = 0
        if expect(90) || expect(122) {
        } else if i < b.count, b[i] == 43 || b[i] == 45 {
            let sign = b[i] == 45 ? -1 : 1
            i += 1
            guard let oh = digits(2) else { return nil }
            _ = expect(58)
            guard let om = digits(2) else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        }
        guard i == b.count else { return nil }
        let days = daysFromCivil(y, mo, d)
        let secs = Int64(days) * 86_400 + Int64(h * 3600 + mi * 60 + sec) - Int64(offset)
        // Years outside 1678–2262 do not fit in nanoseconds since 1970: not a time we can use.
        return nanoseconds(seconds: secs, nanoseconds: frac)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (the classic era-based algorithm).
    static func daysFromCivil(_ y0: Int, _ m: Int, _ d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (m + 9) % 12
        let doy = (153 * mp + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }
}

extension String {
    /// The text without leading and trailing white space (GPX element values).
    func gpxTrimmed() -> String {
        var s = Substring(self)
        while let c = s.first, c.isWhitespace { s.removeFirst() }
        while let c = s.last, c.isWhitespace { s.removeLast() }
        return String(s)
    }
}

/// A minimal pull reader for well-formed XML: start tags (with attributes), end tags and text.
struct XMLScanner {
    enum Token {
        case start(String, [String: String], selfClosing: Bool)
        case end(String)
        case text(String)
    }

    private let b: [UInt8]
    private var i = 0
    /// 1-based line of the reader's position.
    private(set) var line = 1

    init(_ bytes: [UInt8]) {
        b = bytes
        if b.starts(with: [0xEF, 0xBB, 0xBF]) { i = 3 }  // UTF-8 byte order mark
    }

    private func fail(_ m: String) -> GPX.Error { GPX.Error(message: m, line: line) }

    private mutating func advance() { if b[i] == 10 { line += 1 }; i += 1 }

    private func at(_ s: String) -> Bool {
        let u = Array(s.utf8)
        return i + u.count <= b.count && Array(b[i..<(i + u.count)]) == u
    }

    /// Skips to just past `terminator`.
    private mutating func skip(past terminator: String, what: String) throws(GPX.Error) {
        while i < b.count {
            if at(terminator) { i += terminator.utf8.count; return }
            advance()
        }
        throw fail("unterminated \(what)")
    }

    private static func isNameByte(_ c: UInt8) -> Bool {
        c >= 0x80 || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57)
            || c == 58 || c == 95 || c == 45 || c == 46
    }

    private static func isSpace(_ c: UInt8) -> Bool { c == 32 || c == 9 || c == 10 || c == 13 }

    private mutating func skipSpace() { while i < b.count, Self.isSpace(b[i]) { advance() } }

    private mutating func name() throws(GPX.Error) -> String {
        let s = i
        while i < b.count, Self.isNameByte(b[i]) { i += 1 }
        guard i > s else { throw fail("expected a name") }
        return String(decoding: b[s..<i], as: UTF8.self)
    }

    /// Decodes entity and character references in raw text.
    private func decode(_ raw: ArraySlice<UInt8>) throws(GPX.Error) -> String {
        guard raw.contains(38) else { return String(decoding: raw, as: UTF8.self) }
        var out: [UInt8] = []
        var k = raw.startIndex
        while k < raw.endIndex {
            if raw[k] != 38 { out.append(raw[k]); k += 1; continue }
            guard let semi = raw[k...].firstIndex(of: 59) else { throw fail("unterminated entity reference") }
            let ent = String(decoding: raw[(k + 1)..<semi], as: UTF8.self)
            switch ent {
            case "lt": out.append(60)
            case "gt": out.append(62)
            case "amp": out.append(38)
            case "quot": out.append(34)
            case "apos": out.append(39)
            default:
                var scalar: UInt32?
                if ent.hasPrefix("#x") {
                    scalar = UInt32(ent.dropFirst(2), radix: 16)
                } else if ent.hasPrefix("#") {
                    scalar = UInt32(ent.dropFirst(1))
                }
                guard let v = scalar, let u = Unicode.Scalar(v) else { throw fail("unknown entity &\(ent);") }
                out.append(contentsOf: Array(String(Character(u)).utf8))
            }
            k = semi + 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The next token, or nil at the end of input.
    mutating func next() throws(GPX.Error) -> Token? {
        while i < b.count {
            if b[i] != 60 {
                let s = i
                while i < b.count, b[i] != 60 { advance() }
                let t = try decode(b[s..<i])
                if t.contains(where: { !$0.isWhitespace }) { return .text(t) }
                continue
            }
            if at("<?") { try skip(past: "?>", what: "processing instruction"); continue }
            if at("<!--") { try skip(past: "-->", what: "comment"); continue }
            if at("<![CDATA[") {
                i += 9
                let s = i
                while i < b.count, !at("]]>") { advance() }
                guard i < b.count else { throw fail("unterminated CDATA section") }
                let t = String(decoding: b[s..<i], as: UTF8.self)
                i += 3
                return .text(t)
            }
            if at("<!") { try skip(past: ">", what: "declaration"); continue }
            if at("</") {
                i += 2
                let n = try name()
                skipSpace()
                guard i < b.count, b[i] == 62 else { throw fail("expected > after </\(n)") }
                i += 1
                return .end(n)
            }
            i += 1
            let n = try name()
            var attrs: [String: String] = [:]
            while true {
                skipSpace()
                guard i < b.count else { throw fail("file ends inside <\(n)>") }
                if b[i] == 62 { i += 1; return .start(n, attrs, selfClosing: false) }
                if at("/>") { i += 2; return .start(n, attrs, selfClosing: true) }
                let an = try name()
                skipSpace()
                guard i < b.count, b[i] == 61 else { throw fail("expected = after attribute \(an)") }
                i += 1
                skipSpace()
                guard i < b.count, b[i] == 34 || b[i] == 39 else { throw fail("attribute \(an) needs a quoted value") }
                let q = b[i]
                i += 1
                let s = i
                while i < b.count, b[i] != q { advance() }
                guard i < b.count else { throw fail("unterminated value of attribute \(an)") }
                attrs[GPXLocal.name(an)] = try decode(b[s..<i])
                i += 1
            }
        }
        return nil
    }
}

/// XML names without their namespace prefix ("gpxtpx:speed" → "speed").
enum GPXLocal {
    static func name(_ n: String) -> String {
        if let i = n.lastIndex(of: ":") { return String(n[n.index(after: i)...]) }
        return n
    }
}
