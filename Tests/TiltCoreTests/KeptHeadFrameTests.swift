// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol
import XCTest

@testable import TiltCore

/// The head frame learned from wear, kept across restarts: the daemon restores it at start
/// (`TiltGame.restoreLearnedFrame`) so nods are read about the right axis before this run's
/// learner has seen any walking or looks.
final class KeptHeadFrameTests: XCTestCase {
    /// A board mounted off the convention: up is the sensor's −x, forward its +z.
    let kept = HeadFrame(up: Vector3(-1, 0, 0), forward: Vector3(0, 0, 1), source: .learned)!

    /// Feeds `seconds` of a still head at 100 Hz, upright in `kept`'s frame.
    func feedStill(_ game: inout TiltGame, from t0: Nanoseconds, seconds: Double) -> [GameEvent] {
        var events: [GameEvent] = []
        // The attitude whose up (the sensor axis against gravity) is the kept up: −x.
        let q = Quaternion(axis: Vector3(0, 1, 0), angle: .pi / 2)
        for i in 0..<Int(seconds * 100) {
            let t = t0 + Nanoseconds(i) * 10_000_000
            events += game.update(
                Attitude(t: t, q: q, atRest: true, gyroBias: .zero), rate: Vector3(0.001, 0, 0),
                accel: kept.up * 9.81)
        }
        return events
    }

    func testARestoredFrameIsUsedAndNotWithdrawnByALearnerThatHasSeenNothing() throws {
        var game = try TiltGame(seed: 1)
        game.learnsHeadFrame = true
        let restored = game.restoreLearnedFrame(kept)
        XCTAssertEqual(restored.last?.kind, .headFrame)
        XCTAssertEqual(game.headFrame.source, .learned)
        XCTAssertLessThan(game.headFrame.rotationDegrees(to: kept), 0.01)
        // Ten seconds in which the learner learns nothing (no walking, no looks): before, a
        // learner without a frame withdrew the learned one at the next sample.
        let events = feedStill(&game, from: 1_000_000_000, seconds: 10)
        XCTAssertFalse(events.contains { $0.kind == .headFrame }, "\(events.map(\.kind))")
        XCTAssertLessThan(game.headFrame.rotationDegrees(to: kept), 0.01)
        XCTAssertTrue(game.learnedFrameRestored)
    }

    func testACalibratedFrameOrLearningOffIgnoresTheKeptOne() throws {
        var calibrated = try TiltGame(seed: 1)
        calibrated.learnsHeadFrame = true
        calibrated.setHeadFrame(HeadFrame(up: Vector3(0, 1, 0), forward: Vector3(0, 0, -1), source: .calibrated))
        XCTAssertTrue(calibrated.restoreLearnedFrame(kept).isEmpty)
        XCTAssertEqual(calibrated.headFrame.source, .calibrated)

        var off = try TiltGame(seed: 1)
        XCTAssertTrue(off.restoreLearnedFrame(kept).isEmpty, "learning is off by default in a bare game")
        XCTAssertEqual(off.headFrame.source, .assumed)
    }

    func testTurningLearningOffDropsTheRestoredFrame() throws {
        var game = try TiltGame(seed: 1)
        game.learnsHeadFrame = true
        _ = game.restoreLearnedFrame(kept)
        let events = game.setLearnsHeadFrame(false)
        XCTAssertEqual(events.last?.kind, .headFrame)
        XCTAssertEqual(game.headFrame.source, .assumed)
        XCTAssertFalse(game.learnedFrameRestored)
    }

    func testTheKeptFormRoundTripsAndADamagedOneIsRefused() throws {
        let text = JSONValue.object(kept.stateJSON).jsonText
        let back = try XCTUnwrap(HeadFrame(stateJSON: try JSONParser.parse(text), source: .learned))
        XCTAssertLessThan(back.rotationDegrees(to: kept), 1e-9)
        for damaged in [
            #"{}"#, #"{"up":[1,0],"forward":[0,0,1]}"#, #"{"up":[1,0,0],"forward":[1,0,0]}"#, #"[1,2,3]"#,
            #"{"up":["a",0,0],"forward":[0,0,1]}"#,
        ] {
            XCTAssertNil(HeadFrame(stateJSON: try JSONParser.parse(damaged), source: .learned), damaged)
        }
    }
}
