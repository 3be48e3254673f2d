// SPDX-License-Identifier: Apache-2.0
// libFuzzer target for what a client can send and what the monitor reads (built by scripts/fuzz).
//
// Properties checked on every input, beyond "does not crash":
// - `Request.parse` returns a request or an error, and an error reply for it encodes;
// - whatever `JSONParser` accepts, `JSONWriter` writes back as JSON that parses again and
//   writes identically (the codec is a fixed point after one round trip);
// - `MonitorState` takes the line as a daemon line and `MonitorView` draws the result.
import TiltCore
import TiltProtocol

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzProtocol(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: data, count: size)

    switch Request.parse(bytes) {
    case .success(let request):
        _ = request.command.name
        _ = Event.reply(id: request.id, cmd: request.command.name).encode(seq: 1)
    case .failure(let e):
        _ = Event.reply(id: e.id, cmd: e.cmd, error: e.error).encode(seq: 1)
    }

    if let value = try? JSONParser.parse(bytes) {
        let once = value.jsonText
        guard let again = try? JSONParser.parse(once) else {
            fatalError("the writer's output does not parse: \(once)")
        }
        let twice = again.jsonText
        precondition(once == twice, "round trip changed the text: \(once) -> \(twice)")
    }

    let rules = TiltGame.Rules()
    var state = MonitorState(
        socketPath: "/run/tiltd/tiltd.sock", defaultThresholdsDeg: (rules.lowThresholdDeg, rules.highThresholdDeg))
    state.didConnect()
    state.apply(line: bytes)
    _ = MonitorView.screen(state, width: 100, height: 30)
    _ = MonitorView.summary(state)
    return 0
}
