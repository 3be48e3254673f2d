// swift-tools-version:6.1
// SPDX-License-Identifier: Apache-2.0
import PackageDescription

let package = Package(
    name: "tiltd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tiltd", targets: ["tiltd"]),
        .executable(name: "tiltd-web", targets: ["tiltd-web"]),
        .library(name: "TiltCore", targets: ["TiltCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        // No traits (ConfigurationSupport, FullFoundation: tiltd uses neither), as hummingbird-websocket
        // asks for it. With hummingbird's default traits here, Debian sid's SwiftPM 6.2.3 (the cross
        // compiler's) fails to plan a --product build: "product 'Configuration' required by package
        // 'hummingbird' target 'HummingbirdTLS' not found in package 'swift-configuration'" (issue 27).
        // `traits:` needs tools version 6.1; hummingbird itself needs 6.2.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        .package(url: "https://github.com/hummingbird-project/hummingbird-websocket", from: "2.8.1"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        // C libraries from Debian's -dev packages, seen through pkg-config.
        .systemLibrary(name: "CLibIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        .systemLibrary(name: "CLibGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),
        .systemLibrary(name: "CLibMosquitto", pkgConfig: "libmosquitto", providers: [.apt(["libmosquitto-dev"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CSQLite3", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .systemLibrary(name: "CLibURing", pkgConfig: "liburing", providers: [.apt(["liburing-dev"])]),

        // The platform layer under everything that does I/O (Glibc only, no C library): the clocks and
        // `Nanoseconds`, time conversions that never trap, whole-file reads and writes, `SystemError`,
        // system calls made again after EINTR, `HOST:PORT` parsing. Small enough that the web screen,
        // the bridge, the logger and the config link it without the sensors' libiio and libgps.
        .target(name: "TiltPlatform"),

        // The wire model (docs/protocol.md): JSON, every line class typed, commands, replies, errors,
        // the protocol version. No I/O. Below TiltCore, which builds the lines it emits from it, so
        // clients of the socket link the protocol without the core, and the core stays pure.
        .target(name: "TiltProtocol", dependencies: ["TiltPlatform"]),

        // Pure logic: no C, no I/O, no clocks. Tested in microseconds. Of TiltPlatform it uses only
        // `Nanoseconds`, the bounded conversions and the text helpers, never its clocks or files.
        .target(name: "TiltCore", dependencies: ["TiltProtocol", "TiltPlatform"]),

        // The one client of the daemon's socket (NIO): framing, id-matched replies, watch,
        // reconnect with backoff. The web screen, the MQTT bridge, the monitor, reload and the
        // tests use it; it links no part of the daemon. The monitor's model and screen
        // (Monitor/) live beside it: they read only what it hands over.
        .target(
            name: "TiltClient",
            dependencies: [
                "TiltProtocol", "TiltPlatform",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),

        // Recordings read back: the CSV datasets (gzip through zlib) and GPX tracks. Needs only zlib,
        // so `tiltd plot` and the web screen's plots page read them without the sensors' libraries.
        .target(name: "TiltRecordings", dependencies: ["TiltCore", "TiltPlatform", "CZlib"]),

        // Hardware and file sources: libiio, libgps, replays of recordings.
        .target(
            name: "TiltSensors",
            dependencies: [
                "TiltCore", "TiltPlatform", "TiltRecordings", "CLibIIO", "CLibGPS",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The config file: every table and key declared once (name, type, range, default, meaning,
        // reload rule), and from that parsing, validation, `check-config`, the reload's diff and
        // docs/config.md's tables. No NIO, no SQLite, no io_uring: `tiltd web` and the bridge use it.
        .target(name: "TiltConfig", dependencies: ["TiltCore", "TiltProtocol", "TiltPlatform"]),

        // The log handler of every process (journald-friendly, repeats limited): the daemon,
        // `tiltd web` and `tiltd mqtt`, which need none of the daemon's parts.
        .target(
            name: "TiltLogging",
            dependencies: ["TiltPlatform", .product(name: "Logging", package: "swift-log")]
        ),

        // sd_notify and socket activation: the daemon's and `tiltd web`'s units (Type=notify).
        .target(name: "TiltSystemd", dependencies: ["TiltPlatform"]),

        // The daemon's parts: hub, socket, store, engine.
        .target(
            name: "TiltService",
            dependencies: [
                "TiltCore", "TiltProtocol", "TiltPlatform", "TiltSensors", "TiltRecordings", "TiltConfig",
                "TiltLogging",
                "TiltSystemd", "ResidentMemory", "SocketWriteRing",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                "CSQLite3",
            ]
        ),

        // Gives back the pages a long-running process needed only to start (Glibc only: the
        // daemon, the web screen and bench/footprint's floor use it).
        .target(name: "ResidentMemory", dependencies: ["TiltPlatform"]),

        // Many sockets' writes with one system call (io_uring), for the daemon's fan-out. Its own
        // module so that liburing's copies of the libc headers stay out of TiltService.
        .target(name: "SocketWriteRing", dependencies: ["TiltPlatform", "CLibURing"]),

        // Recordings drawn as SVG charts: `tiltd plot` and the web screen's plots page.
        .target(name: "TiltPlot", dependencies: ["TiltCore", "TiltRecordings"]),

        // `tiltd web`: a client of the daemon's socket serving the players' screen, and `tiltd plot`.
        .target(
            name: "TiltWeb",
            dependencies: [
                "TiltCore", "TiltProtocol", "TiltPlatform", "TiltRecordings", "TiltConfig", "TiltPlot", "TiltClient",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "HummingbirdWebSocket", package: "hummingbird-websocket"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ],
            // The page assets are compiled into the binary (`PackageResources`), so `tiltd web` needs
            // no files beside it; plain HTML/CSS/JS, no build step.
            resources: [
                "index.html", "live.html", "plots.html", "style.css", "socket.js", "game.js", "live.js", "plots.js",
            ]
            .map { .embedInCode("Assets/\($0)") }
        ),

        // `tiltd mqtt`: the daemon's socket bridged to an MQTT broker (libmosquitto), shared rounds.
        .target(
            name: "TiltBridge",
            dependencies: [
                "TiltCore", "TiltProtocol", "TiltPlatform", "TiltConfig", "TiltClient", "CLibMosquitto",
                "ResidentMemory",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
            ]
        ),

        // What both executables' commands share: --config, --log-level, errors printed as-is.
        .target(
            name: "TiltCommandLine",
            dependencies: [
                "TiltConfig", "TiltPlatform",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The daemon and its tools. It links no module that imports the full Foundation (so no ICU):
        // `tiltd web` runs `tiltd-web`, installed beside it (docs/hardware.md, "Footprint").
        .executableTarget(
            name: "tiltd",
            dependencies: [
                "TiltCore", "TiltProtocol", "TiltPlatform", "TiltSensors", "TiltRecordings", "TiltConfig",
                "TiltService", "TiltPlot", "TiltBridge", "TiltCommandLine", "TiltClient", "TiltLogging", "TiltSystemd",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The players' web screen (Hummingbird, whose metrics dependency imports Foundation).
        .executableTarget(
            name: "tiltd-web",
            dependencies: [
                "TiltCore", "TiltPlatform", "TiltConfig", "TiltLogging", "TiltSystemd", "TiltWeb", "TiltCommandLine",
                "ResidentMemory",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),

        // Benchmarks (run with -c release; see bench/README.md).
        .executableTarget(
            name: "PipelineBench", dependencies: ["TiltCore"], path: "bench/pipeline",
            exclude: ["run", "cores.cpp", "check_cores.py"]),
        // The game on real heads: the head-gestures logs through the detector and the game (bench/gestures/run).
        .executableTarget(
            name: "GestureBench",
            dependencies: ["TiltCore", "TiltPlatform", "TiltSensors", "TiltRecordings", "TestSupport"],
            path: "bench/gestures",
            exclude: ["run", "train", "classifiers-lopo.json"]),
        // What tilt from the accelerometer alone costs next to the 6-axis estimator (real recordings).
        .executableTarget(
            name: "AccelOnlyBench", dependencies: ["TiltCore"], path: "bench/accel-only", exclude: ["run"]),
        // Speed of the place pipeline with 100,000 places.
        .executableTarget(name: "PlacesBench", dependencies: ["TiltCore"], path: "bench/places"),
        // The real daemon under the fake-hardware harness fanning attitude out to 100–1000 clients.
        .executableTarget(
            name: "FanoutBench", dependencies: ["TiltCore", "FakeHardware", "CEpoll"], path: "bench/fanout",
            exclude: ["run", "before-after", "CEpoll", "cfanout.c"]),
        .systemLibrary(name: "CEpoll", path: "bench/fanout/CEpoll"),
        // tiltd web: daemon line → browser-visible latency and CPU with 50 WebSocket clients (bench/web/run).
        .executableTarget(
            name: "WebBench",
            dependencies: [
                "TiltCore", "BrowserSupport", "TestSupport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "bench/web", exclude: ["run"]),
        // bench/footprint/run: an empty daemon on tiltd's stack, the floor under its size and memory.
        .executableTarget(
            name: "FootprintFloor",
            dependencies: [
                "ResidentMemory",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ], path: "bench/footprint/floor"),
        // A shared round's decision → scoreboard latency through a real Mosquitto (bench/mqtt/run).
        .executableTarget(
            name: "MQTTBench", dependencies: ["TiltCore", "TiltBridge"], path: "bench/mqtt", exclude: ["run"]),

        // Helpers shared by the test targets: socket clients, processes, waiting on conditions.
        .target(
            name: "TestSupport", dependencies: ["TiltCore", "TiltProtocol", "TiltPlatform"], path: "Tests/TestSupport"),
        // A real headless Chromium driven over the DevTools protocol, for the web tests and bench/web.
        .target(
            name: "BrowserSupport",
            dependencies: [
                "TiltCore",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ], path: "Tests/BrowserSupport"),

        .testTarget(
            name: "TiltCoreTests", dependencies: ["TiltCore", "TiltPlatform", "TestSupport"], exclude: ["Fixtures"]),
        // Builds fake IIO scenario trees and FIFO writers for tests run under scripts/fakehw-ns.
        .target(name: "FakeHardware", dependencies: ["TiltCore"], path: "Tests/FakeHardware"),
        .testTarget(
            name: "TiltSensorsTests",
            dependencies: ["TiltSensors", "TiltRecordings", "TiltPlatform", "TiltCore", "FakeHardware", "TestSupport"]),
        .testTarget(
            name: "TiltClientTests",
            dependencies: [
                "TiltClient", "TiltProtocol", "TiltPlatform", "TiltCore", "TestSupport",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]),
        .testTarget(
            name: "TiltBridgeTests",
            dependencies: ["TiltBridge", "TiltCore", "TiltConfig", "TiltService", "TiltProtocol"]),
        // The config file's declarations, parser, docs and example, without the daemon.
        .testTarget(
            name: "TiltConfigTests", dependencies: ["TiltConfig", "TiltCore", "TestSupport"], exclude: ["Fixtures"]),
        .testTarget(
            name: "TiltServiceTests",
            dependencies: [
                "TiltService", "TiltConfig", "TiltLogging", "TiltSystemd", "TiltCore", "TiltPlatform", "TestSupport",
                "ResidentMemory",
            ],
            exclude: ["Fixtures"]),
        // Starts the real `tiltd` binary (under the fake-hardware harness, with a real gpsd).
        .testTarget(
            name: "IntegrationTests",
            dependencies: [
                "TiltCore", "TiltConfig", "TiltPlatform", "FakeHardware", "TestSupport", "BrowserSupport",
                .product(name: "HummingbirdWSClient", package: "hummingbird-websocket"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            exclude: ["Fixtures"]),
        // tiltd web's parts without a daemon: pairing, origins, rate limits, commands, plots, metrics.
        .testTarget(
            name: "TiltWebTests",
            dependencies: ["TiltWeb", "TiltPlot", "TiltRecordings", "TiltCore", "TiltConfig", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
