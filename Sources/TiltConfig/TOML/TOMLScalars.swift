// SPDX-License-Identifier: Apache-2.0
import TiltCore
import TiltProtocol

/// The scalars `TOMLValueReader.readBareValue` hands over once it has the token: dates, times and
/// date-times (checked, returned as the text written) and integers and floats.
extension TOMLValueReader {
    /// `text` as quoted in a message: at most 40 characters, so a huge token makes a short message.
    static func excerpt(_ text: String) -> String { text.count > 40 ? text.prefix(40) + "…" : text }

    /// `YYYY-MM-DD` as to shape (digits and dashes), whatever the numbers.
    static func isDateShaped(_ t: ArraySlice<UInt8>) -> Bool {
        t.count == 10
            && t.indices.allSatisfy { k in
                let off = k - t.startIndex
                return off == 4 || off == 7 ? t[k] == 0x2D : isDigit(t[k])
            }
    }

    /// The number written with the two digits at `k`.
    static func twoDigits(_ t: ArraySlice<UInt8>, _ k: Int) -> Int? {
        guard k + 1 < t.endIndex, isDigit(t[k]), isDigit(t[k + 1]) else { return nil }
        return Int(t[k] - 0x30) * 10 + Int(t[k + 1] - 0x30)
    }

    /// The length of the `HH:MM:SS` or `HH:MM:SS.fraction` that `t` starts with, or nil if it does not.
    static func timeLength(_ t: ArraySlice<UInt8>) -> Int? {
        let s = t.startIndex
        guard let h = twoDigits(t, s), let m = twoDigits(t, s + 3), let sec = twoDigits(t, s + 6),
            t[s + 2] == 0x3A, t[s + 5] == 0x3A, h < 24, m < 60, sec < 60
        else { return nil }
        guard s + 8 < t.endIndex, t[s + 8] == 0x2E else { return 8 }
        var k = s + 9
        while k < t.endIndex && isDigit(t[k]) { k += 1 }
        return k > s + 9 ? k - s : nil
    }

    /// Checks a (local or offset) date, date-time or local date-time, which is kept as written.
    func dateTime(_ t: ArraySlice<UInt8>, _ text: String) throws(TOMLSyntaxError) -> JSONValue {
        let s = t.startIndex
        let year = Int(text.prefix(4)) ?? 0, month = Self.twoDigits(t, s + 5) ?? 0, day = Self.twoDigits(t, s + 8) ?? 0
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
        guard (1...12).contains(month), (1...days[month - 1]).contains(day) else {
            throw error("invalid date '\(Self.excerpt(text))' (no such day)")
        }
        if t.count == 10 { return .string(text) }
        // This exact message is relied on by tests (`1979-05-27T` with no time once crashed toml++).
        guard t.count > 11 && Self.isDigit(t[s + 11]) || !"Tt".utf8.contains(t[s + 10]) else {
            throw error("a date-time needs a time after 'T', like 1979-05-27T07:32:00Z")
        }
        let bad = error(
            "invalid date-time '\(Self.excerpt(text))', expected like 1979-05-27T07:32:00Z or 1979-05-27 07:32:00")
        guard "Tt ".utf8.contains(t[s + 10]), let n = Self.timeLength(t[(s + 11)...]) else { throw bad }
        let offset = t[(s + 11 + n)...]
        if offset.isEmpty || offset.elementsEqual("Z".utf8) || offset.elementsEqual("z".utf8) { return .string(text) }
        let o = offset.startIndex
        guard offset.count == 6, offset[o] == 0x2B || offset[o] == 0x2D, offset[o + 3] == 0x3A,
            let h = Self.twoDigits(offset, o + 1), let m = Self.twoDigits(offset, o + 4), h < 24, m < 60
        else { throw bad }
        return .string(text)
    }

    /// True for digits (as `isDigit` sees them) with single `_` between them: `1_000`, not `1__0` or `_1`.
    static func digitsOK(_ t: ArraySlice<UInt8>, _ isDigit: (UInt8) -> Bool) -> Bool {
        guard let f = t.first, let l = t.last, isDigit(f), isDigit(l) else { return false }
        return zip(t, t.dropFirst()).allSatisfy { a, b in isDigit(b) ? true : b == 0x5F && isDigit(a) }
    }

    /// Reads an integer (decimal, `0x`, `0o`, `0b`) or a float; integers must fit in 64 bits.
    func number(_ t: ArraySlice<UInt8>, _ text: String) throws(TOMLSyntaxError) -> JSONValue {
        let invalid = error("invalid value '\(Self.excerpt(text))' (a string needs quotes)")
        let signed = t.first == 0x2B || t.first == 0x2D
        let body = signed ? t.dropFirst() : t
        let b = body.startIndex
        let radix: Int? = body.count > 2 && body[b] == 0x30 ? [0x78: 16, 0x6F: 8, 0x62: 2][body[b + 1]] : nil
        if let radix {
            let digits = body.dropFirst(2)
            guard !signed, Self.digitsOK(digits, { Int(String(UnicodeScalar($0)), radix: radix) != nil }) else {
                throw error("invalid number '\(Self.excerpt(text))'")
            }
            guard let v = Int64(String(decoding: digits.filter { $0 != 0x5F }, as: UTF8.self), radix: radix) else {
                throw error("integer '\(Self.excerpt(text))' does not fit in 64 bits")
            }
            return .int(v)
        }
        // Split into the integer part, the fraction after `.` and the exponent after `e`.
        let intEnd = body.firstIndex { $0 == 0x2E || $0 == 0x65 || $0 == 0x45 } ?? body.endIndex
        let intPart = body[..<intEnd]
        guard let first = intPart.first, Self.isDigit(first) else { throw invalid }
        guard Self.digitsOK(intPart, Self.isDigit) else { throw error("invalid number '\(Self.excerpt(text))'") }
        guard first != 0x30 || intPart.count == 1 else {
            throw error("invalid number '\(Self.excerpt(text))' (leading zero)")
        }
        let clean = String(decoding: t.filter { $0 != 0x5F }, as: UTF8.self)
        if intEnd == body.endIndex {
            guard let v = Int64(clean) else { throw error("integer '\(Self.excerpt(text))' does not fit in 64 bits") }
            return .int(v)
        }
        var rest = body[intEnd...]
        if rest.first == 0x2E {
            let fracEnd = rest.firstIndex { $0 == 0x65 || $0 == 0x45 } ?? rest.endIndex
            guard Self.digitsOK(rest[(rest.startIndex + 1)..<fracEnd], Self.isDigit) else {
                throw error("invalid number '\(Self.excerpt(text))' (a '.' needs digits on both sides)")
            }
            rest = rest[fracEnd...]
        }
        if !rest.isEmpty {  // `e` or `E`, then an optional sign and digits
            var exp = rest.dropFirst()
            if exp.first == 0x2B || exp.first == 0x2D { exp = exp.dropFirst() }
            guard Self.digitsOK(exp, Self.isDigit) else {
                throw error("invalid number '\(Self.excerpt(text))' (bad exponent)")
            }
        }
        guard let d = Double(clean) else { throw error("invalid number '\(Self.excerpt(text))'") }
        return .double(d)
    }
}
