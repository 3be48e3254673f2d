// SPDX-License-Identifier: Apache-2.0
import TestSupport
import TiltProtocol
import XCTest

/// The room's commands are in the catalogue (`CommandCatalogue.roomCommands`) and the one parser
/// checks them for the bridge (`Request.parse(_:serving: .bridge)`); the daemon does not know them.
final class RoomCatalogueTests: XCTestCase {
    func parse(_ s: String, _ listener: CommandCatalogue.Listener) -> Result<Request, RequestError> {
        Request.parse(Array(s.utf8), serving: listener)
    }

    func testTheDaemonDoesNotKnowTheRoomsCommands() {
        for spec in CommandCatalogue.roomCommands {
            guard case .failure(let e) = parse(#"{"cmd":"\#(spec.name)","id":1}"#, .daemon) else {
                return XCTFail("\(spec.name) parsed for the daemon")
            }
            XCTAssertEqual(e.error.code, .unknownCommand)
            XCTAssertNil(CommandCatalogue.spec(spec.name))
            XCTAssertFalse(CommandCatalogue.names.contains(spec.name), "help and docs/protocol.md list the daemon's")
        }
    }

    func testTheBridgeParsesThemWithTheirArguments() throws {
        let start = try parse(#"{"cmd":"room.start","id":"a","round_s":30}"#, .bridge).get()
        XCTAssertEqual(start.command.name, "room.start")
        XCTAssertEqual(start.command.number("round_s"), 30)
        XCTAssertEqual(start.id, "a")
        XCTAssertNoThrow(try parse(#"{"cmd":"room.state"}"#, .bridge).get())
        XCTAssertNoThrow(try parse(#"{"cmd":"status"}"#, .bridge).get(), "and the daemon's")
        func code(_ s: String) -> ProtocolError.Code? {
            if case .failure(let e) = parse(s, .bridge) { return e.error.code }
            return nil
        }
        XCTAssertEqual(code(#"{"cmd":"room.start","round_s":4}"#), .invalidRoundLength)
        XCTAssertEqual(code(#"{"cmd":"room.restart","round_s":3601}"#), .invalidRoundLength)
        XCTAssertEqual(code(#"{"cmd":"room.start","round_s":"x"}"#), .badArgument)
        XCTAssertEqual(code(#"{"cmd":"room.stop","pad":1}"#), .badArgument)
        XCTAssertEqual(code(#"{"cmd":"room.fly"}"#), .unknownCommand)
    }

    func testOneRangeForEveryRoundLength() {
        for name in ["room.start", "room.restart"] {
            guard case .number(let r) = CommandCatalogue.spec(name, for: .bridge)?.argument("round_s")?.kind else {
                return XCTFail(name)
            }
            XCTAssertEqual(r, CommandCatalogue.roundSecondsRange)
        }
        guard case .number(let r) = CommandCatalogue.spec("game.start")?.argument("round_s")?.kind else {
            return XCTFail()
        }
        XCTAssertEqual(r, CommandCatalogue.roundSecondsRange)
        XCTAssertEqual(CommandCatalogue.roundSecondsText, "5…3600")
    }

    func testTheRoomsDeclarationsAreConsistent() {
        let known = Set(ProtocolError.Code.all.map(\.code))
        let names = CommandCatalogue.Listener.bridge.commands.map(\.name)
        XCTAssertEqual(Set(names).count, names.count, "a room command named like a daemon command")
        for spec in CommandCatalogue.roomCommands {
            XCTAssertTrue(spec.name.hasPrefix("room."))
            for code in spec.errors { XCTAssertTrue(known.contains(code), "\(spec.name): \(code.rawValue)") }
        }
    }
}

/// docs/mqtt.md's table of the room's commands is the catalogue's.
final class RoomCatalogueDocTests: XCTestCase {
    func testRoomTableIsTheCatalogue() throws {
        let text = try String(contentsOfFile: "\(repositoryRoot)/docs/mqtt.md", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try XCTUnwrap(
            lines.firstIndex(of: "### Room commands"), "docs/mqtt.md has no \"### Room commands\"")
        let rows = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        XCTAssertEqual(
            rows.joined(separator: "\n"), CommandCatalogue.roomMarkdownTable,
            "docs/mqtt.md's room table differs from the catalogue; the table:\n\(CommandCatalogue.roomMarkdownTable)")
    }
}
