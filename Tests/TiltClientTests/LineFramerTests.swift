// SPDX-License-Identifier: Apache-2.0
import TiltProtocol
import XCTest

/// The package's one line framer, fed in awkward chunks.
final class LineFramerTests: XCTestCase {
    private func frame(_ chunks: [String], max: Int = 10) -> (pieces: [String], remainder: String) {
        var f = LineFramer(maxLineBytes: max)
        var out: [String] = []
        for c in chunks {
            f.feed(Array(c.utf8)) { p in
                switch p {
                case .line(let b): out.append(String(decoding: b, as: UTF8.self))
                case .tooLong: out.append("<too long>")
                }
                return true
            }
        }
        return (out, String(decoding: f.remainder, as: UTF8.self))
    }

    func testLinesSplitAcrossChunksAndCRLFEndings() {
        let r = frame(["ab", "c\nde\r", "\n\nf"])
        XCTAssertEqual(r.pieces, ["abc", "de", ""])
        XCTAssertEqual(r.remainder, "f")
    }

    func testAnOverLongLineIsReportedOnceAndSkippedToItsNewline() {
        // Reported as soon as the pending part passes the bound, before its newline arrives.
        let r = frame(["0123456", "789012", "345", "67\nok\n"])
        XCTAssertEqual(r.pieces, ["<too long>", "ok"])
        XCTAssertEqual(r.remainder, "")
    }

    func testAnOverLongLineInOneChunkIsReportedAndTheNextLineIsWhole() {
        XCTAssertEqual(frame(["0123456789abc\nok\n"]).pieces, ["<too long>", "ok"])
        // Exactly at the bound is accepted; the CR does not count.
        XCTAssertEqual(frame(["0123456789\r\n"]).pieces, ["0123456789"])
    }

    func testStoppingDropsTheRestOfTheChunk() {
        var f = LineFramer(maxLineBytes: 100)
        var seen: [String] = []
        f.feed(Array("a\nb\nc\n".utf8)) { p in
            if case .line(let b) = p { seen.append(String(decoding: b, as: UTF8.self)) }
            return seen.count < 2
        }
        XCTAssertEqual(seen, ["a", "b"])
    }
}
