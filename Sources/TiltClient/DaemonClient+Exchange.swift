// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import TiltProtocol

extension DaemonClient {
    /// One request and its reply, for command-line clients (`tiltd reload`): connect once (no
    /// retry), send, wait for the reply with the request's id, close. Blocks the calling thread
    /// (never call it on an event loop); `timeout` bounds the whole exchange.
    /// - Throws: `Failure` (`cannotConnect` with the reason, `timedOut`, `connectionLost`).
    public static func exchange(
        _ fields: JSONObject, socket path: String, timeout: Double, idPrefix: String = "tiltd-",
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) throws -> ReplyBody {
        var options = Options(socketPath: path, idPrefix: idPrefix)
        options.reconnect = false
        options.connectTimeout = timeout
        let client = DaemonClient(options: options, group: group) { _ in }
        defer { client.close() }
        client.start()
        let start = NIODeadline.now()
        try client.connected(timeout: timeout).wait()
        let left = max(0.001, timeout - Double((NIODeadline.now() - start).nanoseconds) / 1e9)
        return try client.request(fields, timeout: left).wait()
    }
}
