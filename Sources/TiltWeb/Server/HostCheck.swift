// SPDX-License-Identifier: Apache-2.0
import Glibc
import HTTPTypes
import Hummingbird

/// Refuses every request whose Host header names a host this server does not go by
/// (`OriginPolicy.acceptsHost`): the defence against DNS rebinding, where another site's page
/// re-points its own name at the Pi and reads the stream (the wearer's position among it) or
/// tries pairing codes as if it were this server's own page. Added before every route, the
/// WebSocket upgrade included.
struct HostCheck: RouterMiddleware {
    typealias Context = WebContext
    let origins: OriginPolicy
    let machineName: String

    init(origins: OriginPolicy, machineName: String = HostCheck.localName()) {
        self.origins = origins
        self.machineName = machineName
    }

    func handle(
        _ request: Request, context: WebContext, next: (Request, WebContext) async throws -> Response
    ) async throws -> Response {
        guard origins.acceptsHost(request.hostHeader, machineName: machineName) else {
            context.logger.warning(
                "refused a request from \(context.peer): Host \(request.hostHeader ?? "-") is not this server's address or name, nor in [web] allowed_origins"
            )
            throw HTTPError(
                .misdirectedRequest,
                message: "unknown host: use the server's address, or add the name to [web] allowed_origins")
        }
        return try await next(request, context)
    }

    /// This machine's name (gethostname), "" when unknown.
    static func localName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count) == 0 else { return "" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
