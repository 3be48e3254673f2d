// libFuzzer target for the configuration parser (built by scripts/fuzz): TOML text through
// `TOMLParser` (values and key lines) and every validation of `Configuration.parse`.
//
// Properties: valid UTF-8 text gives a configuration or a `ConfigError` (never a crash);
// an error's line, when given, is a line of the file; an accepted configuration renders.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)
    // `Configuration.load` refuses files that are not UTF-8 before parsing; do the same.
    guard let text = String(validating: bytes, as: UTF8.self) else { return 0 }
    let lineCount = text.split(separator: "\n", omittingEmptySubsequences: false).count

    do {
        let located = try TOMLParser.parse(text).lines
        for (_, line) in located {
            precondition((1...lineCount).contains(line), "TOMLParser gave line \(line) of \(lineCount)")
        }
    } catch {
        precondition((1...lineCount).contains(error.line), "syntax error on line \(error.line) of \(lineCount)")
    }

    // A directory that does not exist, so no calibration file next to it is ever read.
    do {
        let c = try Configuration.parse(text: text, file: "/nonexistent/tiltd-fuzz/tiltd.toml")
        _ = EffectiveConfig.render(c)
    } catch {
        if let l = error.line { precondition(l >= 1, "error line \(l) < 1: \(error)") }
        _ = error.description
    }
    return 0
}
