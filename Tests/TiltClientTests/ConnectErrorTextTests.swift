// SPDX-License-Identifier: Apache-2.0
import NIOCore
import NIOPosix
import TestSupport
import XCTest

@testable import TiltClient

/// What `tiltd web` and `tiltd mqtt` say when the daemon's socket is not there: the reason,
/// not NIO's name for the system call.
final class ConnectErrorTextTests: XCTestCase {
    func testAMissingSocketSaysSoInPlainWords() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let dir = makeTempDir("connect")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        XCTAssertThrowsError(try ClientBootstrap(group: group).connect(unixDomainSocketPath: "\(dir)/none.sock").wait())
        {
            XCTAssertEqual(ConnectErrorText.describe($0), "no such file or directory (errno: 2)", "\($0)")
        }
    }
}
