// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for the configuration parser (built by scripts/fuzz): TOML text through
// `TOMLParser` (values and key lines) and `TOMLDocument`, which the config loader reads.
//
// Properties: valid UTF-8 text gives a document or a located error (never a crash or a hang);
// every key line and error line is a line of the file.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // `Configuration.load` refuses files that are not UTF-8 before parsing; do the same.
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    // Lines end at LF bytes (a CRLF pair is one Character to Swift, so count bytes, not Characters).
    let lineCount = text.utf8.reduce(1) { $0 + ($1 == 10 ? 1 : 0) }

    do {
        let located = try TOMLParser.parse(text).lines
        for (_, line) in located {
            precondition((1...lineCount).contains(line), "TOMLParser gave line \(line) of \(lineCount)")
        }
    } catch {
        precondition((1...lineCount).contains(error.line), "syntax error on line \(error.line) of \(lineCount)")
    }

    // The document the config loader reads: same verdict as the parser, errors located.
    do {
        let doc = try TOMLDocument(text: text, file: "/nonexistent/tiltd-fuzz/tiltd.toml")
        for key in doc.root.keys { _ = doc.line(of: key) }
    } catch {
        if let l = error.line { precondition((1...lineCount).contains(l), "error line \(l) of \(lineCount): \(error)") }
        _ = error.description
    }
    return 0
}
