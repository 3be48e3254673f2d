// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltProtocol
import XCTest

/// docs/protocol.md's command and error tables are the catalogue's: a command or code added to
/// `CommandCatalogue` / `ProtocolError.Code` without its row, or a row without its command,
/// fails here (and prints the row to paste).
final class CatalogueDocTests: XCTestCase {
    /// The table following `heading` in the document, as its lines.
    func table(after heading: String) throws -> [String] {
        let text = try String(contentsOfFile: "\(repositoryRoot)/docs/protocol.md", encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try XCTUnwrap(lines.firstIndex(of: heading), "docs/protocol.md has no \"\(heading)\"")
        let rows = lines[(start + 1)...].drop { !$0.hasPrefix("|") }.prefix { $0.hasPrefix("|") }
        return Array(rows)
    }

    func assertSame(_ documented: [String], _ generated: String, _ what: String) {
        let want = generated.split(separator: "\n").map(String.init)
        for row in want where !documented.contains(row) {
            XCTFail("docs/protocol.md's \(what) lacks (or differs from) the catalogue's row:\n\(row)")
        }
        for row in documented where !want.contains(row) {
            XCTFail("docs/protocol.md's \(what) has a row the catalogue does not:\n\(row)")
        }
        XCTAssertEqual(documented, want, "\(what): same rows in the same order; the whole table:\n\(generated)")
    }

    func testCommandTableIsTheCatalogue() throws {
        assertSame(try table(after: "## Command catalogue"), CommandCatalogue.markdownTable, "command table")
    }

    func testErrorTableIsTheCodeList() throws {
        assertSame(try table(after: "## Errors"), CommandCatalogue.errorTable, "error table")
    }

    /// Every code a command declares is a documented code, and no command is declared twice.
    func testCatalogueIsConsistent() {
        let known = Set(ProtocolError.Code.all.map(\.code))
        for spec in CommandCatalogue.commands {
            for code in spec.errors {
                XCTAssertTrue(known.contains(code), "\(spec.name): \(code.rawValue) is not in ProtocolError.Code.all")
            }
            XCTAssertEqual(
                Set(spec.arguments.map(\.name)).count, spec.arguments.count, "\(spec.name) declares an argument twice")
        }
        XCTAssertEqual(Set(CommandCatalogue.names).count, CommandCatalogue.names.count)
        XCTAssertEqual(Set(known).count, ProtocolError.Code.all.count)
    }

    /// An id is a number or a string of at most 128 bytes (null counts as none); anything else
    /// is refused before the command is looked at.
    func testRequestIDs() {
        func idOutcome(_ id: String) -> Result<JSONValue?, ProtocolError> {
            switch Request.parse(Array(#"{"cmd":"ping","id":\#(id)}"#.utf8)) {
            case .success(let r): return .success(r.id)
            case .failure(let e): return .failure(e.error)
            }
        }
        XCTAssertEqual(try idOutcome("7").get(), .int(7))
        XCTAssertEqual(try idOutcome(#""a""#).get(), .string("a"))
        XCTAssertEqual(try idOutcome("null").get(), .null)
        for bad in ["true", "false", "[1]", #"{"a":1}"#, "\"" + String(repeating: "x", count: 129) + "\""] {
            guard case .failure(let e) = idOutcome(bad) else { return XCTFail("id \(bad) was accepted") }
            XCTAssertEqual(e.code, .badArgument, bad)
        }
    }

    /// The parser follows the catalogue: a declared argument of the wrong type, one out of
    /// bounds and an undeclared field are each refused, for every command.
    func testParserChecksEveryDeclaredArgument() {
        for spec in CommandCatalogue.commands {
            func refused(_ extra: String) -> ProtocolError? {
                if case .failure(let e) = Request.parse(Array(#"{"cmd":"\#(spec.name)"\#(extra)}"#.utf8)) {
                    return e.error
                }
                return nil
            }
            XCTAssertNil(refused(""), "\(spec.name) with no arguments")
            XCTAssertEqual(refused(#","no_such_field":1"#)?.code, .badArgument, spec.name)
            for a in spec.arguments {
                let wrongType: String
                var outOfBounds: String?
                switch a.kind {
                case .number(let r), .wholeNumber(let r): wrongType = #""x""#; outOfBounds = "\(r.upperBound + 1)"
                case .bool: wrongType = "1"
                case .string(let max):
                    wrongType = "1"; outOfBounds = "\"" + String(repeating: "a", count: max + 1) + "\""
                case .strings(_, let allowed, _):
                    wrongType = "\"x\""; outOfBounds = allowed == nil ? nil : #"["no-such-value"]"#
                case .object(let max):
                    wrongType = "[]"; outOfBounds = #"{"a":""# + String(repeating: "a", count: max) + #""}"#
                }
                XCTAssertEqual(
                    refused(#","\#(a.name)":\#(wrongType)"#)?.code, .badArgument, "\(spec.name).\(a.name) wrong type")
                if let o = outOfBounds {
                    let code = refused(#","\#(a.name)":\#(o)"#)?.code
                    XCTAssertEqual(code, a.outOfRange, "\(spec.name).\(a.name) out of bounds")
                    // A code of its own is one the command's documented errors list.
                    if a.outOfRange != .badArgument { XCTAssertTrue(spec.errors.contains(a.outOfRange), spec.name) }
                }
            }
        }
    }
}
