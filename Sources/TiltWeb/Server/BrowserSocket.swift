// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import TiltCore
import TiltProtocol

/// `GET /ws`: one browser's WebSocket. Out: every daemon line the relay forwards (attitude only
/// with `?attitude=1`), then replies to this browser's commands. In: commands as JSON objects
/// (`{"cmd":"game.start","id":1,"deck":"nearby"}`), checked by `BrowserCommands` and sent
/// to the daemon by the web process. A message that is not a JSON object, is too large, or comes
/// faster than `[web] max_messages_per_s` closes this browser's connection only.
struct BrowserSocket: Sendable {
    let relay: LiveRelay
    let pairing: Pairing
    let origins: OriginPolicy
    let maxMessageBytes: Int
    let messagesPerSecond: Double

    func add(to router: Router<WebContext>) {
        router.ws("/ws") { request, context in
            guard origins.accepts(origin: request.origin, host: request.hostHeader) else {
                context.logger.warning(
                    "refused a WebSocket from \(context.peer): Origin \(request.origin ?? "-") is not this server (Host \(request.hostHeader ?? "-")) nor in [web] allowed_origins"
                )
                throw HTTPError(.forbidden, message: "cross-origin WebSocket refused")
            }
            guard relay.hub.count < relay.hub.capacity else {
                throw HTTPError(.serviceUnavailable, message: "too many browsers connected ([web] max_clients)")
            }
            return .upgrade([:])
        } onUpgrade: { inbound, outbound, context in
            let request = context.request
            let paired = pairing.isPaired(token: request.sessionToken)
            let wantsAttitude = request.uri.queryParameters["attitude"].map { $0 != "0" } ?? true
            guard let (id, lines) = relay.hub.add(wantsAttitude: wantsAttitude) else {
                try await outbound.close(.unknown(1013), reason: "too many browsers connected")
                return
            }
            defer { relay.hub.remove(id) }
            let session: JSONObject = [
                "class": "web", "event": "session", "paired": .bool(paired),
                "commands": .array(
                    (BrowserCommands.open + (paired ? BrowserCommands.pairedOnly : [])).map { .string($0) }),
            ]
            relay.hub.send(JSONValue.object(session).jsonText, to: id)
            for l in relay.greeting() { relay.hub.send(l, to: id) }
            // The whole game state for this browser (it applies later events on top, by seq).
            Task { if let s = await relay.freshStatus() { relay.hub.send(s, to: id) } }

            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    for await line in lines { try await outbound.write(.text(line)) }
                }
                group.addTask {
                    try await readCommands(
                        inbound.messages(maxSize: maxMessageBytes), browser: id, paired: paired,
                        outbound: outbound, logger: context.logger)
                }
                // Either side ending ends the session: the browser left, or it was closed here.
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private func readCommands(
        _ messages: WebSocketInboundMessageStream, browser id: Int, paired: Bool,
        outbound: WebSocketOutboundWriter, logger: Logger
    ) async throws {
        var bucket = TokenBucket(rate: messagesPerSecond, burst: max(2, 2 * messagesPerSecond))
        for try await message in messages {
            guard bucket.take(now: ProcessInfo.processInfo.systemUptime) else {
                logger.warning("browser \(id) sent more than \(messagesPerSecond) messages/s: closing it")
                try await outbound.close(.policyViolation, reason: "too many messages")
                return
            }
            guard case .text(let text) = message, (try? JSONParser.parse(text))?.objectValue != nil else {
                logger.warning("browser \(id) sent a message that is not a JSON object: closing it")
                try await outbound.close(.unacceptableData, reason: "messages are JSON objects")
                return
            }
            switch BrowserCommands.check(text, paired: paired) {
            case .failure(let f):
                relay.hub.send(BrowserCommands.refusalLine(f.refusal, id: f.id, cmd: f.cmd), to: id)
            case .success(let checked):
                // Replies may come in any order; each goes back with the browser's own id.
                Task { await forward(checked, to: id, logger: logger) }
            }
        }
    }

    private func forward(_ c: BrowserCommands.Checked, to browser: Int, logger: Logger) async {
        guard let link = relay.link else { return }
        do {
            let reply = try await link.request(c.fields)
            var o = reply.fields
            o["id"] = c.browserID
            relay.hub.send(JSONValue.object(o).jsonText, to: browser)
            if BrowserCommands.pairedOnly.contains(c.name) {
                logger.info(
                    "browser \(browser): \(c.name) → \(reply.ok ? "ok" : (reply.error?.code.rawValue ?? "?"))"
                )
            }
        } catch {
            let r = BrowserCommands.Refusal(code: ProtocolError.Code.unavailable.rawValue, message: "\(error)")
            relay.hub.send(BrowserCommands.refusalLine(r, id: c.browserID, cmd: c.name), to: browser)
        }
    }
}
