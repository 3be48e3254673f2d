// SPDX-License-Identifier: Apache-2.0
import Hummingbird
import NIOCore

/// The pages and their assets, compiled into the binary (`PackageResources`, see Package.swift):
/// plain HTML, CSS and JavaScript, no build step, nothing fetched from elsewhere.
enum PageRoutes {
    struct Asset {
        let bytes: [UInt8]
        let type: String
    }

    static let assets: [String: Asset] = [
        "/": Asset(bytes: PackageResources.index_html, type: "text/html; charset=utf-8"),
        "/live": Asset(bytes: PackageResources.live_html, type: "text/html; charset=utf-8"),
        "/plots": Asset(bytes: PackageResources.plots_html, type: "text/html; charset=utf-8"),
        "/assets/style.css": Asset(bytes: PackageResources.style_css, type: "text/css; charset=utf-8"),
        "/assets/socket.js": Asset(bytes: PackageResources.socket_js, type: "text/javascript; charset=utf-8"),
        "/assets/game.js": Asset(bytes: PackageResources.game_js, type: "text/javascript; charset=utf-8"),
        "/assets/live.js": Asset(bytes: PackageResources.live_js, type: "text/javascript; charset=utf-8"),
        "/assets/plots.js": Asset(bytes: PackageResources.plots_js, type: "text/javascript; charset=utf-8"),
    ]

    static func add(to router: Router<WebContext>) {
        for (path, asset) in assets {
            router.get(RouterPath(path)) { _, _ -> Response in
                var h = HTTPFields()
                h[.contentType] = asset.type
                SecurityHeaders.apply(&h)
                return Response(status: .ok, headers: h, body: .init(byteBuffer: ByteBuffer(bytes: asset.bytes)))
            }
        }
    }
}
