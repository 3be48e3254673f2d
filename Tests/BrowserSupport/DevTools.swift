// SPDX-License-Identifier: Apache-2.0
import Foundation
import HummingbirdWSClient
import Logging
import NIOConcurrencyHelpers
import TiltCore
import TiltProtocol

/// A Chrome DevTools Protocol connection to a browser (one WebSocket; pages are flat sessions
/// of it). Just what the tests and the bench need: open a page, evaluate JavaScript (awaiting
/// promises), take screenshots, set the viewport.
public final class DevTools: Sendable {
    public struct ProtocolError: Error, CustomStringConvertible {
        public var description: String
    }

    private struct State {
        var outbound: WebSocketOutboundWriter?
        var pending: [Int: CheckedContinuation<JSONValue, any Error>] = [:]
        var nextID = 1
        var ready: CheckedContinuation<Void, any Error>?
        var closed = false
    }
    private let state = NIOLockedValueBox(State())

    private init() {}

    /// Connects to `url` (a browser's `ws://…/devtools/browser/…`).
    public static func connect(_ url: String) async throws -> DevTools {
        let d = DevTools()
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
            d.state.withLockedValue { $0.ready = c }
            Task {
                do {
                    try await WebSocketClient.connect(
                        url: url, configuration: .init(maxFrameSize: 1 << 26), logger: Logger(label: "devtools")
                    ) { inbound, outbound, _ in
                        d.state.withLockedValue { s in
                            s.outbound = outbound; s.ready?.resume(); s.ready = nil
                        }
                        for try await message in inbound.messages(maxSize: 1 << 26) {
                            if case .text(let text) = message { d.receive(text) }
                        }
                    }
                    d.finish(ProtocolError(description: "the DevTools connection closed"))
                } catch {
                    d.finish(error)
                }
            }
        }
        return d
    }

    private func receive(_ text: String) {
        guard let v = try? JSONParser.parse(text), let id = v["id"]?.intValue else { return }
        let waiter = state.withLockedValue { $0.pending.removeValue(forKey: Int(id)) }
        if let err = v["error"] {
            waiter?.resume(
                throwing: ProtocolError(
                    description: "\(err["message"]?.stringValue ?? "error") (\(err["code"]?.intValue ?? 0))"))
        } else {
            waiter?.resume(returning: v["result"] ?? .null)
        }
    }

    private func finish(_ error: any Error) {
        let (ready, waiters) = state.withLockedValue {
            s -> (CheckedContinuation<Void, any Error>?, [CheckedContinuation<JSONValue, any Error>]) in
            s.closed = true
            defer { s.ready = nil; s.pending = [:] }
            return (s.ready, Array(s.pending.values))
        }
        ready?.resume(throwing: error)
        for w in waiters { w.resume(throwing: error) }
    }

    /// Sends `method` with `params` (in `session` when given) and returns its `result`.
    @discardableResult
    public func call(
        _ method: String, _ params: JSONObject = JSONObject(), session: String? = nil
    ) async throws -> JSONValue {
        try await withCheckedThrowingContinuation { (c: CheckedContinuation<JSONValue, any Error>) in
            let (id, out, closed) = state.withLockedValue { s -> (Int, WebSocketOutboundWriter?, Bool) in
                defer { s.nextID += 1 }
                if !s.closed { s.pending[s.nextID] = c }
                return (s.nextID, s.outbound, s.closed)
            }
            guard !closed, let out else {
                c.resume(throwing: ProtocolError(description: "the DevTools connection is closed")); return
            }
            var msg: JSONObject = ["id": .int(Int64(id)), "method": .string(method), "params": .object(params)]
            if let session { msg["sessionId"] = .string(session) }
            var w = JSONWriter()
            w.value(.object(msg))
            let text = w.text
            Task {
                do { try await out.write(.text(text)) } catch {
                    state.withLockedValue { $0.pending.removeValue(forKey: id) }?.resume(throwing: error)
                }
            }
        }
    }

    /// Opens `url` in a new page of `width`×`height` CSS pixels (`mobile`: a phone's viewport
    /// and touch) and returns it.
    public func openPage(
        _ url: String, width: Int = 1280, height: Int = 900, mobile: Bool = false, scale: Double = 1
    ) async throws -> Page {
        // Each page in its own window: a background tab gets no animation frames.
        let target = try await call("Target.createTarget", ["url": "about:blank", "newWindow": true])
        guard let targetID = target["targetId"]?.stringValue else { throw ProtocolError(description: "no targetId") }
        let attached = try await call("Target.attachToTarget", ["targetId": .string(targetID), "flatten": true])
        guard let session = attached["sessionId"]?.stringValue else { throw ProtocolError(description: "no sessionId") }
        let page = Page(devTools: self, session: session, targetID: targetID)
        try await page.setViewport(width: width, height: height, mobile: mobile, scale: scale)
        try await call("Page.enable", session: session)
        try await call("Runtime.enable", session: session)
        try await page.navigate(url)
        return page
    }
}

/// One page (tab) of the browser.
public struct Page: Sendable {
    public let devTools: DevTools
    public let session: String
    public let targetID: String

    public func navigate(_ url: String) async throws {
        try await devTools.call("Page.navigate", ["url": .string(url)], session: session)
        try await waitFor("document.readyState === 'complete'", timeout: 30)
    }

    public func setViewport(width: Int, height: Int, mobile: Bool, scale: Double = 1) async throws {
        try await devTools.call(
            "Emulation.setDeviceMetricsOverride",
            [
                "width": .int(Int64(width)), "height": .int(Int64(height)),
                "deviceScaleFactor": .number(scale), "mobile": .bool(mobile),
            ], session: session)
        try await devTools.call("Emulation.setTouchEmulationEnabled", ["enabled": .bool(mobile)], session: session)
    }

    /// Evaluates `expression` in the page (awaiting a promise) and returns its value as JSON.
    @discardableResult
    public func evaluate(_ expression: String) async throws -> JSONValue {
        let r = try await devTools.call(
            "Runtime.evaluate", ["expression": .string(expression), "awaitPromise": true, "returnByValue": true],
            session: session)
        if let ex = r["exceptionDetails"] {
            let text = ex["exception"]?["description"]?.stringValue ?? ex["text"]?.stringValue ?? "exception"
            throw DevTools.ProtocolError(description: "\(text) in: \(expression.prefix(200))")
        }
        return r["result"]?["value"] ?? .null
    }

    /// Waits in the page until `condition` (a JavaScript expression) is truthy; returns its value.
    /// Checked every 10 ms by the page itself, so no round trip per check.
    @discardableResult
    public func waitFor(_ condition: String, timeout: Double = 10) async throws -> JSONValue {
        try await evaluate(
            """
            new Promise((resolve, reject) => {
              const t0 = performance.now();
              (function check() {
                let v; try { v = (\(condition)); } catch (e) { v = undefined; }
                if (v) resolve(v);
                else if (performance.now() - t0 > \(Int(timeout * 1000))) reject(new Error('timed out after \(timeout) s waiting for: ' + \(jsString(condition))));
                else setTimeout(check, 10);
              })();
            })
            """)
    }

    /// Saves a PNG of the viewport to `path`.
    public func screenshot(to path: String) async throws {
        let r = try await devTools.call("Page.captureScreenshot", ["format": "png"], session: session)
        guard let b64 = r["data"]?.stringValue, let data = Data(base64Encoded: b64) else {
            throw DevTools.ProtocolError(description: "no screenshot data")
        }
        try data.write(to: URL(fileURLWithPath: path))
    }

    public func close() async throws {
        try await devTools.call("Target.closeTarget", ["targetId": .string(targetID)])
    }
}

/// `s` as a JavaScript string literal.
public func jsString(_ s: String) -> String {
    var w = JSONWriter()
    w.string(s)
    return w.text
}
