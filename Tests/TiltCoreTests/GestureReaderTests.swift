// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import XCTest

@testable import TiltCore

/// `GestureReader`: nods counted from their first swing either way round, and, with no head
/// frame known, nods and shakes read about up and the horizontal instead of the convention's
/// axes (a board whose ear-to-ear axis is its z, as on the everyday set's glasses).
final class GestureReaderTests: XCTestCase {
    /// Plays 9 s at 100 Hz: a worn head's sway, and from 2 s a gesture of `rate(s)` (sensor
    /// frame, rad/s, `s` seconds into it) for `seconds`; gravity along `up` (sensor frame).
    static func round(
        _ game: inout TiltGame, up: Vector3, q: Quaternion, seconds: Double, _ rate: (Double) -> Vector3
    ) throws -> [GameEvent] {
        var events = try game.start(at: 1_000_000_000, gestures: .nod, deck: GamePlay.deck())
        for i in 0..<900 {
            let s = Double(i) / 100
            var w = ActivityTests.jitter(s, dps: 1)
            if s >= 2, s < 2 + seconds { w = rate(s - 2) }
            let a = Attitude(t: 1_000_000_000 + Nanoseconds(i) * 10_000_000, q: q, atRest: false, gyroBias: .zero)
            events += game.update(a, rate: w, accel: up * 9.81)
        }
        return events
    }

    /// `cycles` down-ups (or up-downs) of 0.4 s at `dps` about `axis`.
    static func nod(_ axis: Vector3, dps: Double, upFirst: Bool = false) -> (Double) -> Vector3 {
        { s in axis * ((upFirst ? -1 : 1) * dps * .pi / 180 * sin(2 * .pi * s / 0.4)) }
    }

    func testANodBegunUpwardAnswersFromItsSecondCycle() throws {
        // An up-down-up-down: its first cycle used to be skipped (a nod had to start down), so a
        // nod of two, begun upward, gave one cycle and, with two asked, no answer.
        var game = try TiltGame(configuration: .absoluteMode)
        let q = Quaternion(roll: .pi / 2, pitch: 0, yaw: 0)
        let events = try Self.round(
            &game, up: Vector3(0, 1, 0), q: q, seconds: 0.8,
            Self.nod(HeadFrame.assumed.left, dps: 120, upFirst: true))
        XCTAssertEqual(GamePlay.decisions(events), ["correct"], "\(GamePlay.kinds(events))")
    }

    func testWithNoFrameKnownANodAboutTheBoardsZIsANod() throws {
        // Glasses with the board's z ear-to-ear and −x up (the everyday set's D2 users 1–4): the
        // convention (+y up, +z back) would read this nod as a sideways lean and the shake about
        // x as nothing it knows.
        let q = Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)
        let up = TiltMeter.upInSensor(q)
        XCTAssertLessThan((up - Vector3(-1, 0, 0)).norm, 1e-9)
        var learning = try TiltGame(seed: 1)
        learning.learnsHeadFrame = true
        let nod = try Self.round(&learning, up: up, q: q, seconds: 0.8, Self.nod(Vector3(0, 0, 1), dps: 120))
        XCTAssertTrue(learning.readsGesturesWithoutFrame)
        XCTAssertEqual(GamePlay.decisions(nod), ["correct"], "\(GamePlay.kinds(nod))")
        var shaking = try TiltGame(seed: 1)
        shaking.learnsHeadFrame = true
        let shake = try Self.round(&shaking, up: up, q: q, seconds: 1.0, Self.nod(up, dps: 150))
        XCTAssertEqual(GamePlay.decisions(shake), ["skip"], "\(GamePlay.kinds(shake))")
        // With `[game] head_frame = "assumed"` (learning off) the convention is what the wearer
        // chose: the same nod about z is a lean, no answer.
        var assumed = try TiltGame(seed: 1)
        let lean = try Self.round(&assumed, up: up, q: q, seconds: 0.8, Self.nod(Vector3(0, 0, 1), dps: 120))
        XCTAssertFalse(assumed.readsGesturesWithoutFrame)
        XCTAssertEqual(GamePlay.decisions(lean), [], "\(GamePlay.kinds(lean))")
    }
}
