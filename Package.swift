// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "tiltd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "tiltd", targets: ["tiltd"]),
        .library(name: "TiltCore", targets: ["TiltCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        // TOMLKit changes its API in minor releases: pinned.
        .package(url: "https://github.com/LebJe/TOMLKit", exact: "0.6.0"),
    ],
    targets: [
        // C libraries from Debian's -dev packages, seen through pkg-config.
        .systemLibrary(name: "CLibIIO", pkgConfig: "libiio", providers: [.apt(["libiio-dev"])]),
        .systemLibrary(name: "CLibGPS", pkgConfig: "libgps", providers: [.apt(["libgps-dev"])]),

        // Pure logic: no C, no I/O, no clocks. Tested in microseconds.
        .target(name: "TiltCore"),

        // Hardware and file sources: libiio, libgps, recordings.
        .target(
            name: "TiltSensors",
            dependencies: [
                "TiltCore", "CLibIIO", "CLibGPS",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // The daemon's parts: config, hub, socket, store, systemd.
        .target(
            name: "TiltService",
            dependencies: [
                "TiltCore", "TiltSensors",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "GRDB", package: "GRDB.swift"),
                .product(name: "TOMLKit", package: "TOMLKit"),
            ]
        ),

        .executableTarget(
            name: "tiltd",
            dependencies: [
                "TiltCore", "TiltSensors", "TiltService",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),

        // Benchmarks (run with -c release; see bench/README.md).
        .executableTarget(name: "PipelineBench", dependencies: ["TiltCore"], path: "bench/pipeline",
                          exclude: ["run", "cores.cpp", "check_cores.py"]),
        // The game on real heads: the head-gestures logs through the detector and the game (bench/gestures/run).
        .executableTarget(name: "GestureBench", dependencies: ["TiltCore", "TestSupport"], path: "bench/gestures", exclude: ["run"]),
        // What tilt from the accelerometer alone costs next to the 6-axis estimator (real recordings).
        .executableTarget(name: "AccelOnlyBench", dependencies: ["TiltCore"], path: "bench/accel-only", exclude: ["run"]),
        // Speed of the place pipeline with 100,000 places.
        .executableTarget(name: "PlacesBench", dependencies: ["TiltCore"], path: "bench/places"),
        // The real daemon under the fake-hardware harness fanning attitude out to 100–1000 clients.
        .executableTarget(name: "FanoutBench", dependencies: ["TiltCore", "FakeHardware", "CEpoll"], path: "bench/fanout", exclude: ["run", "CEpoll", "cfanout.c"]),
        .systemLibrary(name: "CEpoll", path: "bench/fanout/CEpoll"),

        // Helpers shared by the test targets: socket clients, processes, waiting on conditions.
        .target(name: "TestSupport", dependencies: ["TiltCore"], path: "Tests/TestSupport"),

        .testTarget(name: "TiltCoreTests", dependencies: ["TiltCore", "TestSupport"], exclude: ["Fixtures"]),
        // Builds fake IIO scenario trees and FIFO writers for tests run under scripts/fakehw-ns.
        .target(name: "FakeHardware", dependencies: ["TiltCore"], path: "Tests/FakeHardware"),
        .testTarget(name: "TiltSensorsTests", dependencies: ["TiltSensors", "TiltCore", "FakeHardware", "TestSupport"]),
        .testTarget(name: "TiltServiceTests", dependencies: ["TiltService", "TiltCore", "TestSupport"], exclude: ["Fixtures"]),
        // Starts the real `tiltd` binary (under the fake-hardware harness, with a real gpsd).
        .testTarget(name: "IntegrationTests", dependencies: ["TiltCore", "FakeHardware", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)
