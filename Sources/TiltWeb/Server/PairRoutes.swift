// SPDX-License-Identifier: Apache-2.0
import Foundation
import Hummingbird
import TiltCore
import TiltProtocol

/// `POST /pair` (body: the code, as `code=…` form data or `{"code":"…"}`) sets the session
/// cookie; `POST /unpair` forgets it; `GET /session` says whether this browser is paired.
enum PairRoutes {
    static func add(to router: Router<WebContext>, pairing: Pairing, origins: OriginPolicy) {
        router.post("/pair") { request, context -> Response in
            guard origins.accepts(origin: request.origin, host: request.hostHeader) else {
                return json(.forbidden, ["ok": false, "error": "this page's origin may not pair"])
            }
            var request = request
            let body = String(buffer: try await request.collectBody(upTo: context.maxUploadSize))
            guard let code = Self.code(from: body) else {
                return json(.badRequest, ["ok": false, "error": "send the code as code=… or {\"code\":\"…\"}"])
            }
            switch pairing.pair(code, from: context.peer, now: ProcessInfo.processInfo.systemUptime) {
            case .success(let token):
                var r = json(.ok, ["ok": true, "paired": true])
                // HttpOnly: page scripts never see it; SameSite=Strict: other sites' pages never send it.
                r.setCookie(
                    Cookie(
                        name: Pairing.cookieName, value: token, maxAge: 30 * 86_400, path: "/", httpOnly: true,
                        sameSite: .strict))
                context.logger.notice("paired a browser at \(context.peer)")
                return r
            case .failure(let refusal):
                context.logger.warning("refused pairing from \(context.peer): \(refusal)")
                if case .lockedOut(let s) = refusal {
                    var r = json(.tooManyRequests, ["ok": false, "error": .string(refusal.description)])
                    r.headers[.retryAfter] = String(s)
                    return r
                }
                return json(.forbidden, ["ok": false, "error": .string(refusal.description)])
            }
        }
        router.post("/unpair") { request, _ -> Response in
            guard origins.accepts(origin: request.origin, host: request.hostHeader) else {
                return json(.forbidden, ["ok": false])
            }
            if let t = request.sessionToken { pairing.forget(token: t) }
            var r = json(.ok, ["ok": true, "paired": false])
            r.setCookie(
                Cookie(name: Pairing.cookieName, value: "", maxAge: 0, path: "/", httpOnly: true, sameSite: .strict))
            return r
        }
        router.get("/session") { request, _ -> Response in
            json(.ok, ["paired": .bool(pairing.isPaired(token: request.sessionToken))])
        }
    }

    static func code(from body: String) -> String? {
        let trimmed = body.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.hasPrefix("{") {
            return (try? JSONParser.parse(trimmed))?["code"]?.stringValue.flatMap { $0.utf8.count <= 64 ? $0 : nil }
        }
        for pair in trimmed.split(separator: "&") where pair.hasPrefix("code=") {
            let v = String(pair.dropFirst(5)).replacingOccurrences(of: "+", with: " ")
            return v.removingPercentEncoding.flatMap { $0.utf8.count <= 64 ? $0 : nil }
        }
        return nil
    }

    static func json(_ status: HTTPResponse.Status, _ o: JSONObject) -> Response {
        var h = HTTPFields()
        h[.contentType] = "application/json"
        SecurityHeaders.apply(&h)
        return Response(
            status: status, headers: h, body: .init(byteBuffer: ByteBuffer(string: JSONValue.object(o).jsonText + "\n"))
        )
    }
}
