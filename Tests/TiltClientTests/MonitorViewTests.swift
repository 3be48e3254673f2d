// SPDX-License-Identifier: Apache-2.0
import Foundation
import TiltCore
import TiltProtocol
import XCTest

@testable import TiltClient

/// `tiltd monitor`'s state and screen, from fixed daemon lines (no terminal, no socket).
final class MonitorViewTests: XCTestCase {
    /// The game's default thresholds, as `tiltd monitor` passes them (`TiltGame.Rules`).
    static let gameDefaults = (low: TiltGame.Rules().lowThresholdDeg, high: TiltGame.Rules().highThresholdDeg)

    /// A daemon session as the monitor sees it: hello (with custom thresholds), a status reply,
    /// attitude, a game decision, a fix and a gap.
    func sessionState() -> MonitorState {
        var s = MonitorState(socketPath: "/run/tiltd/tiltd.sock", defaultThresholdsDeg: Self.gameDefaults)
        s.didConnect()
        let lines = [
            #"{"class":"hello","seq":0,"t_ns":1000000000,"version":"0.3.0","protocol":1,"sources":[{"source":"imu","state":"streaming","message":"replaying head.csv"}],"game":{"state":"idle","t_ns":null,"round":null,"remaining_ms":null,"score":0,"prompt":null,"config":{"mode":"absolute","low_threshold_deg":60,"high_threshold_deg":120,"low_side":"correct"}}}"#,
            #"{"class":"reply","seq":1,"id":1,"cmd":"watch","ok":true}"#,
            #"{"class":"reply","seq":2,"id":2,"cmd":"status","ok":true,"version":"0.3.0","samples":600,"sample_rate_hz":59.9,"clients":2,"dropped_lines":7}"#,
            #"{"class":"game","seq":3,"t_ns":5000000000,"kind":"correct","round":3,"state":"waiting_for_neutral","remaining_ms":42000,"score":2,"prompt":"Giraffe","tilt_deg":45.2,"decision_ms":812}"#,
            #"{"class":"attitude","seq":4,"t_ns":5500000000,"q":[0.7071,0.7071,0,0],"roll_deg":90.04,"pitch_deg":-0.31,"yaw_deg":12.5,"at_rest":true,"gyro_bias":[0.0012,-0.0003,0.0001]}"#,
            #"{"class":"fix","seq":5,"t_ns":5500000000,"mode":3,"lat":48.85837,"lon":2.294481,"speed_mps":1.25,"track_deg":90}"#,
            #"{"class":"gap","seq":6,"dropped":17}"#,
        ]
        for l in lines { s.apply(line: Array(l.utf8)) }
        return s
    }

    func testStateTakesEveryClassItShows() {
        let s = sessionState()
        XCTAssertEqual(s.daemonVersion, "0.3.0")
        XCTAssertEqual(s.lowThresholdDeg, 60)
        XCTAssertEqual(s.highThresholdDeg, 120)
        XCTAssertEqual(s.attitude?.rollDeg, 90.04)
        XCTAssertEqual(s.attitude?.atRest, true)
        XCTAssertEqual(s.attitude?.gyroBias, [0.0012, -0.0003, 0.0001])
        XCTAssertEqual(s.game.state, "waiting_for_neutral")
        XCTAssertEqual(s.game.round, 3)
        XCTAssertEqual(s.game.score, 2)
        XCTAssertEqual(s.game.prompt, "Giraffe")
        XCTAssertEqual(s.game.lastKind, "correct")
        XCTAssertEqual(
            s.fix, MonitorState.FixReading(mode: 3, lat: 48.85837, lon: 2.294481, speedMps: 1.25, trackDeg: 90))
        XCTAssertEqual(s.sampleRateHz, 59.9)
        XCTAssertEqual(s.clients, 2)
        XCTAssertEqual(s.droppedLinesAllClients, 7)
        XCTAssertEqual(s.gapDropped, 17)
        XCTAssertEqual(s.gapEvents, 1)
        XCTAssertEqual(s.sources, [.init(source: "imu", state: "streaming", message: "replaying head.csv")])
        XCTAssertEqual(s.badLines, 0)
    }

    func testTimeLeftCountsDownBySampleTime() {
        var s = sessionState()
        // 42 s left at t = 5 s; the attitude is at 5.5 s.
        XCTAssertEqual(s.gameTimeLeftMs, 41_500)
        s.apply(
            line: Array(
                #"{"class":"attitude","t_ns":50000000000,"q":[1,0,0,0],"roll_deg":90,"pitch_deg":0,"yaw_deg":0}"#.utf8))
        XCTAssertEqual(s.gameTimeLeftMs, 0, "never negative")
        s.apply(
            line: Array(
                #"{"class":"game","t_ns":50000000000,"kind":"round_ended","round":3,"state":"idle","remaining_ms":null,"score":2,"prompt":null}"#
                    .utf8))
        XCTAssertNil(s.gameTimeLeftMs, "no time left outside a round")
        XCTAssertEqual(s.game.lastKind, "round_ended")
    }

    func testGaugeDrawsThresholdsAndReading() {
        // 40 columns: 38 cells of 180/38 deg; 63 deg -> cell 13, 117 -> cell 24, 90 -> cell 19.
        let g = MonitorView.gauge(absRoll: 90, low: 63, high: 117, width: 40)
        XCTAssertEqual(
            g,
            [
                "|roll| 90.0 deg",
                "[#############|#####O    |             ]",
                " 0            63         117        180",
                "    correct     neutral       skip",
            ])
        // Nodded down past the low threshold: the fill stops before it, the threshold stays drawn.
        let down = MonitorView.gauge(absRoll: 25, low: 63, high: 117, width: 40)
        XCTAssertEqual(down[1], "[#####O       |          |             ]")
        // Unknown reading: thresholds only.
        XCTAssertEqual(
            MonitorView.gauge(absRoll: nil, low: 63, high: 117, width: 40)[1],
            "[             |          |             ]")
        // Out of range and on a threshold: clamped, the marker wins.
        XCTAssertEqual(MonitorView.gauge(absRoll: 500, low: 63, high: 117, width: 40)[1].last(2), "O]")
        XCTAssertEqual(
            MonitorView.gauge(absRoll: 63, low: 63, high: 117, width: 40)[1], "[#############O          |             ]"
        )
        // Swapped sides: the zone names follow.
        XCTAssertEqual(
            MonitorView.gauge(absRoll: 90, low: 63, high: 117, lowSide: "skip", width: 40)[3],
            "     skip       neutral      correct")
    }

    func testScreenShowsEverything() {
        let lines = MonitorView.screen(sessionState(), width: 100, height: 30)
        let text = lines.joined(separator: "\n")
        XCTAssertEqual(lines[0], "tiltd monitor  /run/tiltd/tiltd.sock")
        XCTAssertEqual(lines[1], "connected (tiltd 0.3.0)   q: quit")
        XCTAssertTrue(lines.contains("roll  +90.0 deg   pitch   -0.3 deg   yaw  +12.5 deg   t 5.500 s"), text)
        XCTAssertTrue(lines.contains("at rest: yes   gyro bias: [+0.00120, -0.00030, +0.00010] rad/s"), text)
        XCTAssertTrue(lines.contains("|roll| 90.0 deg"), text)
        // The thresholds from hello (60/120), not the defaults.
        let scale = try! XCTUnwrap(lines.first { $0.hasPrefix(" 0 ") })
        XCTAssertTrue(scale.contains(" 60 ") && scale.contains(" 120 ") && !scale.contains("63"), scale)
        XCTAssertTrue(lines.contains("game: waiting_for_neutral   round 3   score 2   time left 41.5 s"), text)
        XCTAssertTrue(lines.contains("  prompt: \"Giraffe\"   last: correct (tilt 45.2 deg)"), text)
        XCTAssertTrue(lines.contains("fix: mode 3 (3D)   48.858370, 2.294481   speed 1.3 m/s   track 90 deg"), text)
        XCTAssertTrue(lines.contains("rate: 59.9 Hz   clients 2"), text)
        XCTAssertTrue(lines.contains("dropped: 17 lines to this monitor (1 gap events), 7 to all clients"), text)
        XCTAssertTrue(lines.contains("sources: imu streaming: replaying head.csv"), text)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 100 })
        XCTAssertLessThanOrEqual(lines.count, 30)
    }

    func testScreenFitsSmallTerminals() {
        let lines = MonitorView.screen(sessionState(), width: 50, height: 10)
        XCTAssertEqual(lines.count, 10)
        XCTAssertTrue(lines.allSatisfy { $0.count <= 50 }, lines.joined(separator: "\n"))
    }

    func testDisconnectedKeepsTheLastReadings() {
        var s = sessionState()
        s.didDisconnect(reason: "no socket at /run/tiltd/tiltd.sock")
        let lines = MonitorView.screen(s, width: 100, height: 30)
        XCTAssertEqual(lines[1], "disconnected, retrying... (no socket at /run/tiltd/tiltd.sock)   q: quit")
        XCTAssertTrue(lines.contains("|roll| 90.0 deg"))
        XCTAssertEqual(MonitorView.summary(s), "disconnected, retrying... (no socket at /run/tiltd/tiltd.sock)")
        s.didConnect()
        XCTAssertEqual(s.connections, 2)
        XCTAssertNil(s.disconnectReason)
    }

    /// A daemon that restarted without GPS and with no round: its hello replaces what the
    /// previous one said (fix, sources, the last decision, the thresholds).
    func testANewDaemonsHelloReplacesTheOldReadings() {
        var s = sessionState()
        s.apply(line: Array(#"{"class":"status","seq":7,"source":"gps","state":"streaming","message":"gpsd"}"#.utf8))
        s.didDisconnect(reason: "the daemon closed the connection")
        s.didConnect()
        s.apply(
            line: Array(
                #"{"class":"hello","seq":1,"version":"0.3.1","protocol":1,"sources":[{"source":"imu","state":"starting","message":"opening"}],"game":{"state":"idle","round":null,"score":0,"prompt":null,"config":{"low_threshold_deg":63,"high_threshold_deg":117}},"last_round":null}"#
                    .utf8))
        XCTAssertEqual(s.daemonVersion, "0.3.1")
        XCTAssertEqual(s.sources, [.init(source: "imu", state: "starting", message: "opening")])
        XCTAssertNil(s.fix, "the new daemon reported no fix")
        XCTAssertNil(s.attitude, "no attitude from the new daemon yet")
        XCTAssertEqual(s.game.state, "idle")
        XCTAssertNil(s.game.lastKind, "the last decision was the old daemon's")
        XCTAssertEqual(s.game.score, 0)
        XCTAssertEqual(s.lowThresholdDeg, 63)
        XCTAssertNil(s.sampleRateHz)
        XCTAssertEqual(s.gapDropped, 17, "what the monitor counted itself stays")
        XCTAssertEqual(s.connections, 2)
    }

    func testSummaryLine() {
        XCTAssertEqual(
            MonitorView.summary(sessionState()),
            "roll=90.0 pitch=-0.3 yaw=12.5 at_rest=yes gyro_bias=0.00120,-0.00030,0.00010 thresholds=60,120 "
                + "game=waiting_for_neutral round=3 score=2 left=41.5s prompt=\"Giraffe\" fix=48.858370,2.294481 rate=59.9Hz dropped=17 dropped_all=7"
        )
        var empty = MonitorState(socketPath: "/s", defaultThresholdsDeg: Self.gameDefaults)
        empty.didConnect()
        XCTAssertEqual(
            MonitorView.summary(empty), "roll=- thresholds=63,117 game=idle score=0 fix=none rate=? dropped=0")
    }

    func testDaemonTextCannotSendEscapes() {
        var s = sessionState()
        s.apply(
            line: Array(
                #"{"class":"game","t_ns":6000000000,"kind":"prompt","round":3,"state":"prompt","remaining_ms":41000,"score":2,"prompt":"A\u001b[2JB\u0007"}"#
                    .utf8))
        XCTAssertEqual(s.game.prompt, "A\u{1B}[2JB\u{07}")
        let text = MonitorView.screen(s, width: 100, height: 30).joined() + MonitorView.summary(s)
        XCTAssertFalse(text.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F })
        XCTAssertTrue(text.contains("\"A?[2JB?\""))
    }

    func testBadLinesAndNonsenseThresholdsAreIgnored() {
        var s = sessionState()
        s.apply(line: Array("not json".utf8))
        s.apply(line: Array("[1,2]".utf8))
        XCTAssertEqual(s.badLines, 2)
        // Thresholds out of order or out of range keep the last good pair.
        s.apply(
            line: Array(
                #"{"class":"reply","cmd":"status","ok":true,"sample_rate_hz":59.9,"game":{"state":"idle","config":{"low_threshold_deg":150,"high_threshold_deg":20}}}"#
                    .utf8))
        s.apply(
            line: Array(
                #"{"class":"reply","cmd":"status","ok":true,"sample_rate_hz":59.9,"game":{"state":"idle","config":{"low_threshold_deg":-5,"high_threshold_deg":400}}}"#
                    .utf8))
        XCTAssertEqual(s.lowThresholdDeg, 60)
        XCTAssertEqual(s.highThresholdDeg, 120)
        // An attitude without angles changes nothing; an error reply is not a status.
        s.apply(line: Array(#"{"class":"attitude","roll_deg":"x"}"#.utf8))
        s.apply(line: Array(#"{"class":"reply","cmd":"status","ok":false,"sample_rate_hz":1}"#.utf8))
        XCTAssertEqual(s.attitude?.rollDeg, 90.04)
        XCTAssertEqual(s.sampleRateHz, 59.9)
    }

    func testNumberFormatting() {
        XCTAssertEqual(MonitorView.fixed(-0.04, 1), "0.0")
        XCTAssertEqual(MonitorView.fixed(-0.06, 1), "-0.1")
        XCTAssertEqual(MonitorView.fixed(179.96, 1), "180.0")
        XCTAssertEqual(MonitorView.fixed(0.00012, 5), "0.00012")
        XCTAssertEqual(MonitorView.fixed(.nan, 1), "nan")
        XCTAssertEqual(MonitorView.fixed(1e300, 1), "1e+300")
        XCTAssertEqual(MonitorView.angle(-5), "  -5.0 deg")
    }

    /// Every protocol fuzz input (Tests/TiltCoreTests/Fixtures/fuzz), read as a daemon line,
    /// leaves a state that renders: the monitor survives whatever it is sent.
    func testProtocolFuzzInputsRender() throws {
        let dir = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("TiltCoreTests/Fixtures/fuzz")
        let files = try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
        XCTAssertFalse(files.isEmpty)
        for f in files {
            var s = sessionState()
            s.apply(line: Array(try Data(contentsOf: dir.appendingPathComponent(f))))
            let lines = MonitorView.screen(s, width: 80, height: 24)
            XCTAssertTrue(lines.allSatisfy { $0.count <= 80 }, f)
            XCTAssertFalse(MonitorView.summary(s).isEmpty, f)
        }
    }

    /// The heading line: magnetic and true, the compass point, the source, a disturbed field; an
    /// older daemon's lines say it does not send one.
    func testHeadingLineShowsSourceAndTrueNorth() {
        var s = sessionState()
        func screen() -> [String] { MonitorView.screen(s, width: 100, height: 30) }
        XCTAssertTrue(screen().contains("heading: ? (the daemon does not send it)"), screen().joined(separator: "\n"))
        func attitude(_ heading: String) {
            s.apply(
                line: Array(
                    (#"{"class":"attitude","t_ns":6000000000,"q":[1,0,0,0],"roll_deg":90,"pitch_deg":0,"yaw_deg":-61.2,"at_rest":false"#
                        + heading + "}").utf8))
        }
        attitude(#","heading_deg":61.3,"true_heading_deg":66.1,"heading_source":"mag","mag_disturbed":false"#)
        XCTAssertEqual(s.attitude?.headingDeg, 61.3)
        XCTAssertEqual(s.attitude?.trueHeadingDeg, 66.1)
        XCTAssertEqual(s.attitude?.headingSource, "mag")
        XCTAssertEqual(s.attitude?.magDisturbed, false)
        XCTAssertTrue(
            screen().contains("heading: 61.3 deg magnetic   66.1 deg true (ENE)   source: mag"),
            screen().joined(separator: "\n"))
        XCTAssertTrue(
            MonitorView.summary(s).contains("heading=61.3 true_heading=66.1 heading_source=mag"), MonitorView.summary(s)
        )
        attitude(#","heading_deg":61.3,"heading_source":"mag","mag_disturbed":true"#)
        XCTAssertTrue(
            screen().contains("heading: 61.3 deg magnetic (ENE)   source: mag   field disturbed: held on the gyro"),
            screen().joined(separator: "\n"))
        XCTAssertTrue(MonitorView.summary(s).contains("mag_disturbed=yes"), MonitorView.summary(s))
        attitude(#","true_heading_deg":80,"heading_source":"course""#)
        XCTAssertTrue(
            screen().contains("heading: 80.0 deg true (E)   source: course"), screen().joined(separator: "\n"))
        attitude(#","heading_source":"none""#)
        XCTAssertTrue(screen().contains("heading: ---   source: none"), screen().joined(separator: "\n"))
        XCTAssertTrue(MonitorView.summary(s).contains("heading=- heading_source=none"), MonitorView.summary(s))
        XCTAssertEqual(MonitorView.compassPoint(359), "N")
        XCTAssertEqual(MonitorView.compassPoint(191.25), "SSW")
    }

    /// The head frame in use and whether the game suspects it: from the state's `orientation`,
    /// the `head_frame` line, and `orientation_suspect` / `orientation_ok`.
    func testGameLineShowsTheHeadFrameAndASuspectOne() {
        var s = sessionState()
        func gameLine() -> String {
            MonitorView.screen(s, width: 100, height: 30).first { $0.hasPrefix("game:") } ?? ""
        }
        XCTAssertFalse(gameLine().contains("head frame"), gameLine())
        s.apply(
            line: Array(
                #"{"class":"game","t_ns":6000000000,"kind":"head_frame","state":"idle","score":0,"orientation":{"source":"learned","forward":[0,0,-1],"up":[0,1,0]}}"#
                    .utf8))
        XCTAssertEqual(s.game.headFrame, "learned")
        XCTAssertTrue(gameLine().hasSuffix("head frame learned"), gameLine())
        XCTAssertTrue(MonitorView.summary(s).contains("head_frame=learned"), MonitorView.summary(s))
        s.apply(line: Array(#"{"class":"game","t_ns":7000000000,"kind":"orientation_suspect","state":"idle"}"#.utf8))
        XCTAssertTrue(gameLine().hasSuffix("head frame learned (suspect)"), gameLine())
        XCTAssertTrue(MonitorView.summary(s).contains("head_frame=learned,suspect"), MonitorView.summary(s))
        s.apply(line: Array(#"{"class":"game","t_ns":8000000000,"kind":"orientation_ok","state":"idle"}"#.utf8))
        XCTAssertTrue(gameLine().hasSuffix("head frame learned"), gameLine())
    }
}

extension String {
    fileprivate func last(_ n: Int) -> String { String(suffix(n)) }
}
