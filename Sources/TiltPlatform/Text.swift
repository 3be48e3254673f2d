// SPDX-License-Identifier: Apache-2.0
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Small text helpers that the full Foundation would otherwise be linked for (with ICU's data:
// see docs/hardware.md, "Footprint"). ASCII semantics, which is what config files, sysfs
// attributes and log lines need.

extension StringProtocol {
    /// Without the leading and trailing characters that satisfy `isTrimmed`.
    public func trimming(_ isTrimmed: (Character) -> Bool) -> String {
        guard let first = firstIndex(where: { !isTrimmed($0) }) else { return "" }
        let last = lastIndex(where: { !isTrimmed($0) })!
        return String(self[first...last])
    }

    /// Without leading and trailing spaces and tabs, and line breaks unless `newlines` is false
    /// (Foundation's `.whitespacesAndNewlines` / `.whitespaces` for ASCII text).
    public func trimmingWhitespace(newlines: Bool = true) -> String {
        trimming { c in c == " " || c == "\t" || (newlines && (c == "\n" || c == "\r" || c == "\r\n")) }
    }
}

/// Path helpers (what NSString's path methods did here).
public enum PathName {
    /// The directory part of `path`: "" for a bare name, "/" for a file in the root.
    public static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// `name` inside `directory` (`name` itself when the directory is empty).
    public static func appending(_ name: String, to directory: String) -> String {
        if directory.isEmpty { return name }
        return directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }

    /// The last component of `path` (after the last slash).
    public static func lastComponent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

/// printf-style formatting of numbers (`%.2f`, `%5d`, `%.9g`) through the C library's
/// vsnprintf: `cFormat("%.1f ms", x)`. Strings go in by interpolation, not `%s`.
public func cFormat(_ format: String, _ arguments: any CVarArg...) -> String {
    withVaList(arguments) { list in
        var buffer = [CChar](repeating: 0, count: 128)
        // vsnprintf consumes the va_list: a second pass (longer output) needs a fresh one.
        let n = Int(vsnprintf(&buffer, buffer.count, format, list))
        if n < buffer.count { return String(cString: buffer) }
        return withVaList(arguments) { again in
            var big = [CChar](repeating: 0, count: n + 1)
            _ = vsnprintf(&big, big.count, format, again)
            return String(cString: big)
        }
    }
}
