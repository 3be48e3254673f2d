// SPDX-License-Identifier: Apache-2.0
import Foundation
import TestSupport
import TiltCore
import TiltPlot
import TiltRecordings
import TiltWeb
import XCTest

#if canImport(FoundationXML)
import FoundationXML
#endif

/// `tiltd plot` on the bundled demo recording: a valid SVG with the game's decisions in it.
final class PlotTests: XCTestCase {
    /// Counts elements and the decisions' kinds while checking that the SVG is well-formed XML.
    final class SVGReader: NSObject, XMLParserDelegate {
        var root: String?
        var decisions: [String] = []
        var polylines = 0
        func parser(
            _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            if root == nil { root = name }
            if name == "g", attributes["class"] == "decision", let k = attributes["data-kind"] { decisions.append(k) }
            if name == "polyline" { polylines += 1 }
        }
    }

    func read(_ svg: String) throws -> SVGReader {
        let reader = SVGReader()
        let parser = XMLParser(data: Data(svg.utf8))
        parser.delegate = reader
        XCTAssertTrue(parser.parse(), "not well-formed XML: \(parser.parserError.map { "\($0)" } ?? "?")")
        return reader
    }

    func testTheDemoRecordingsNodsAreDrawnAsDecisions() throws {
        let data = try DatasetReader.read(path: "\(repositoryRoot)/config/demo/head.csv")
        let (chart, decisions) = try RecordingPlot(game: true).chart(samples: data.samples, title: "head.csv & <demo>")
        let svg = try read(chart.render())
        XCTAssertEqual(svg.root, "svg")
        XCTAssertEqual(svg.polylines, 3 + 3 + 3 + 1, "accel, gyro, attitude, tilt series")
        XCTAssertEqual(svg.decisions, decisions.map(\.kind), "every decision drawn, in order")
        // The recording (scripts/make-demo-recording) nods down at 5 s, tilts up at 9.4 s, nods
        // twice from 15.8 s, tilts up at 21.8 s and nods once more after the walk; the 80 ms jerk
        // at 13.6 s must not count.
        let kinds = decisions.map(\.kind)
        XCTAssertEqual(kinds.filter { $0 == "correct" }.count, 4, "\(decisions)")
        XCTAssertEqual(kinds.filter { $0 == "skip" }.count, 2, "\(decisions)")
        XCTAssertEqual(kinds.first, "correct")
        if let first = decisions.first { XCTAssertEqual(first.t, 5.6, accuracy: 1.0) }
        XCTAssertFalse(decisions.contains { (13.4...14.5).contains($0.t) }, "the jerk was counted: \(decisions)")
        for d in decisions where d.kind == "correct" { XCTAssertLessThan(d.tiltDeg, 63) }
        for d in decisions where d.kind == "skip" { XCTAssertGreaterThan(d.tiltDeg, 117) }
    }

    func testWithoutTheGameThereIsNoGamePanel() throws {
        let data = try DatasetReader.read(path: "\(repositoryRoot)/config/demo/head.csv")
        let (chart, decisions) = try RecordingPlot(game: false).chart(samples: data.samples, title: "head")
        XCTAssertTrue(decisions.isEmpty)
        let svg = try read(chart.render())
        XCTAssertEqual(svg.polylines, 9)
        XCTAssertTrue(svg.decisions.isEmpty)
    }

    func testTheCommandWritesTheFile() throws {
        let dir = makeTempDir("plot")
        defer { try? FileManager.default.removeItem(atPath: dir) }
        FileManager.default.createFile(atPath: "\(dir)/empty.toml", contents: Data())
        let (status, out) = try runTiltd([
            "plot", "--in", "\(repositoryRoot)/config/demo/head.csv", "--game",
            "--config", "\(dir)/empty.toml", "--out", "\(dir)/head.svg",
        ])
        XCTAssertEqual(status, 0, out)
        XCTAssertTrue(out.contains("4 correct and 2 skip decisions"), out)
        let svg = try read(try String(contentsOfFile: "\(dir)/head.svg", encoding: .utf8))
        XCTAssertEqual(svg.decisions.count, 6)

        let (bad, err) = try runTiltd([
            "plot", "--in", "\(dir)/missing.csv", "--config", "\(dir)/empty.toml", "--out", "\(dir)/x.svg",
        ])
        XCTAssertNotEqual(bad, 0)
        XCTAssertTrue(err.contains("missing.csv"), err)
        XCTAssertFalse(FileManager.default.fileExists(atPath: "\(dir)/x.svg"))
    }
}
