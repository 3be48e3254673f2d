// SPDX-License-Identifier: Apache-2.0
import TiltPlatform
import TiltProtocol
import XCTest

@testable import TiltCore

/// Rounds: timer, deck exhaustion, no repeats, commands, snapshot, JSON.
final class GameRoundTests: XCTestCase {
    /// Step trace at 100 Hz: prompt at 0.2 s, correct at 1.15 s, prompt at 1.85 s, skip at
    /// 2.65 s (entered 2.50 s), prompt at 3.35 s, a tilt entered at 4.90 s that would be
    /// confirmed at 5.05 s; the trace runs to 6 s.
    static func timedMotion() -> HeadMotion {
        var m = HeadMotion()
        m.hold(0.995)
        m.move(nod: 45, over: 0); m.hold(0.5)
        m.move(nod: 0, over: 0); m.hold(1.0)
        m.move(nod: -45, over: 0); m.hold(0.5)
        m.move(nod: 0, over: 0); m.hold(1.9)
        m.move(nod: 45, over: 0); m.hold(1.105)
        return m
    }

    func testTheTimerEndsTheRoundAtTheFirstSampleAtOrAfterTheDeadline() throws {
        let traced = HeadTrace(rateHz: 100).samples(Self.timedMotion())
        let attitudes = traced.map(\.attitude)
        let (game, events) = try GamePlay.run(traced, roundSeconds: 5)
        XCTAssertEqual(
            GamePlay.kinds(events),
            [
                "round_started", "neutral", "prompt", "correct", "neutral", "prompt",
                "skip", "neutral", "prompt", "round_ended",
            ])
        XCTAssertEqual(
            events.map(\.t).map { Double($0 - 1_000_000_000) / 1e9 },
            [0, 0.2, 0.2, 1.15, 1.85, 1.85, 2.65, 3.35, 3.35, 5.0])
        let end = events.last!
        XCTAssertEqual(end.remaining, 0)
        XCTAssertEqual(end.state, .idle)
        let r = try XCTUnwrap(end.result)
        XCTAssertEqual(r.reason, .timeout)
        XCTAssertEqual(r.score, 1)
        XCTAssertEqual(r.endedAt, GamePlay.at(5))
        XCTAssertEqual(r.correct.map(\.decisionTime), [800_000_000])
        XCTAssertEqual(r.skipped.map(\.decisionTime), [650_000_000])
        let prompts = events.filter { $0.kind == .prompt }.map { $0.prompt! }
        XCTAssertEqual(r.correct.map(\.prompt), [prompts[0]])
        XCTAssertEqual(r.skipped.map(\.prompt), [prompts[1]])
        XCTAssertEqual(r.unanswered, prompts[2])
        XCTAssertEqual(game.phase, .idle)
        XCTAssertEqual(game.lastResult, r)
        // Remaining time counts down from the attitude timestamps.
        XCTAssertEqual(events[2].remaining, 4_800_000_000)
        XCTAssertEqual(events[6].remaining, 2_350_000_000)
    }

    func testTheTimerOnlyAdvancesWithSamples() throws {
        var game = try TiltGame(configuration: .absoluteMode, seed: 1)
        _ = try game.start(at: 0, roundSeconds: 5, deck: GamePlay.deck())
        let upright = Attitude(
            t: 4_999_999_999, q: Quaternion(roll: .pi / 2, pitch: 0, yaw: 0), atRest: true, gyroBias: .zero)
        XCTAssertFalse(game.update(upright).contains { $0.kind == .roundEnded })
        var later = upright
        later.t = 5_000_000_000
        XCTAssertEqual(GamePlay.kinds(game.update(later)), ["round_ended"])
    }

    func testTheRoundEndsWhenTheDeckIsUsedUp() throws {
        var m = HeadMotion()
        m.hold(1)
        for i in 0..<5 { m.answer(i % 2 == 0 ? 45 : -45); m.hold(1) }
        let deck = try PromptDeck(name: "three", prompts: ["a", "b", "c"])
        let (game, events) = try GamePlay.run(HeadTrace(rateHz: 100, noiseDeg: 0.5).samples(m), deck: deck)
        XCTAssertEqual(
            GamePlay.kinds(events),
            [
                "round_started", "neutral", "prompt", "correct", "neutral", "prompt",
                "skip", "neutral", "prompt", "correct", "round_ended",
            ])
        let end = events.last!
        XCTAssertEqual(end.t, events[events.count - 2].t, "ends at the last answer")
        let r = try XCTUnwrap(end.result)
        XCTAssertEqual(r.reason, .deckEmpty)
        XCTAssertEqual(r.score, 2)
        XCTAssertEqual(Set(r.prompts.map(\.prompt)), ["a", "b", "c"])
        XCTAssertNil(r.unanswered)
        XCTAssertEqual(game.phase, .idle)
    }

    func testNoPromptRepeatsWithinARoundAndEachRoundIsReshuffled() throws {
        var m = HeadMotion()
        m.hold(1)
        for i in 0..<30 { m.answer(i % 3 == 0 ? -50 : 50, hold: 0.3); m.hold(0.8) }
        let traced = HeadTrace(rateHz: 60, noiseDeg: 1).samples(m)
        let attitudes = traced.map(\.attitude)
        let deck = GamePlay.deck(20)
        var game = try TiltGame(configuration: .absoluteMode, seed: 5)
        var rounds: [[String]] = []
        for round in 0..<3 {
            let shift = Nanoseconds(round) * 100_000_000_000
            var events =
                round == 0
                ? try game.start(at: attitudes[0].t + shift, deck: deck)
                : try game.restart(at: attitudes[0].t + shift)
            for (i, var a) in attitudes.enumerated() { a.t += shift; events += game.update(a, rate: traced[i].rate) }
            let prompts = events.filter { $0.kind == .prompt }.map { $0.prompt! }
            XCTAssertEqual(prompts.count, 20)
            XCTAssertEqual(Set(prompts), Set(deck.entries), "every prompt once")
            XCTAssertEqual(events.last?.result?.reason, .deckEmpty)
            XCTAssertEqual(events.first?.round, round + 1)
            rounds.append(prompts)
        }
        XCTAssertNotEqual(rounds[0], rounds[1])
        XCTAssertNotEqual(rounds[1], rounds[2])

        // The same seed gives the same order; another seed another.
        var same = try TiltGame(configuration: .absoluteMode, seed: 5),
            other = try TiltGame(configuration: .absoluteMode, seed: 6)
        var first = try same.start(at: 0, deck: deck), firstOther = try other.start(at: 0, deck: deck)
        let upright = Attitude(
            t: 1_000_000_000, q: Quaternion(roll: .pi / 2, pitch: 0, yaw: 0), atRest: true, gyroBias: .zero)
        var held = upright
        held.t += 200_000_000  // the neutral hold
        for a in [upright, held] { first += same.update(a); firstOther += other.update(a) }
        XCTAssertEqual(first.last?.prompt, rounds[0][0])
        XCTAssertNotEqual(firstOther.last?.prompt, rounds[0][0])
    }

    func testCommandsStopRestartResetAndTheirErrors() throws {
        var game = try TiltGame(configuration: .absoluteMode, seed: 2)
        XCTAssertThrowsError(try game.stop(at: 0)) { XCTAssertEqual($0 as? GameError, .notRunning) }
        XCTAssertThrowsError(try game.restart(at: 0)) { XCTAssertEqual($0 as? GameError, .nothingToRestart) }
        for bad in [0.5, 4.9, 3601, .nan, .infinity] {
            XCTAssertThrowsError(try game.start(at: 0, roundSeconds: bad, deck: GamePlay.deck())) {
                XCTAssertEqual(($0 as? GameError)?.code, "invalid_round_length")
            }
        }
        XCTAssertEqual(game.phase, .idle)

        let traced = HeadTrace(rateHz: 100).samples(Self.timedMotion())
        let attitudes = traced.map(\.attitude)
        var events = try game.start(at: attitudes[0].t, roundSeconds: 30, deck: GamePlay.deck())
        XCTAssertEqual(events.first?.roundSeconds, 30)
        XCTAssertEqual(events.first?.deckSize, 40)
        XCTAssertThrowsError(try game.start(at: 0, deck: GamePlay.deck())) {
            XCTAssertEqual($0 as? GameError, .roundInProgress)
        }
        XCTAssertThrowsError(try game.setConfiguration(.init())) { XCTAssertEqual($0 as? GameError, .roundInProgress) }
        for a in attitudes.prefix(200) { events += game.update(a) }  // up to 1.99 s: one correct, a prompt showing
        let prompt = try XCTUnwrap(game.currentPrompt)
        let stopped = try game.stop(at: attitudes[199].t)
        XCTAssertEqual(GamePlay.kinds(stopped), ["stopped"])
        XCTAssertEqual(stopped[0].result?.reason, .stopped)
        XCTAssertEqual(stopped[0].result?.unanswered, prompt)
        XCTAssertEqual(stopped[0].result?.score, 1)
        XCTAssertEqual(stopped[0].round, 1)
        XCTAssertEqual(game.phase, .idle)
        XCTAssertNil(game.roundID)
        XCTAssertThrowsError(try game.stop(at: 0)) { XCTAssertEqual($0 as? GameError, .notRunning) }

        // Restart: same length and deck, next id; restarting a running round stops it first.
        let r2 = try game.restart(at: 3_000_000_000)
        XCTAssertEqual(GamePlay.kinds(r2), ["round_started"])
        XCTAssertEqual(r2[0].round, 2)
        XCTAssertEqual(r2[0].roundSeconds, 30)
        let r3 = try game.restart(at: 4_000_000_000)
        XCTAssertEqual(GamePlay.kinds(r3), ["stopped", "round_started"])
        XCTAssertEqual(r3.map(\.round), [2, 3])

        // Reset: idle, no last result, and the next start still counts ids up.
        let reset = game.reset(at: 5_000_000_000)
        XCTAssertEqual(GamePlay.kinds(reset), ["reset"])
        XCTAssertEqual(reset[0].state, .idle)
        XCTAssertNil(game.lastResult)
        XCTAssertEqual(try game.restart(at: 6_000_000_000).first?.round, 4)
    }

    func testDeckProblemsAreReportedAndLeaveTheGameIdle() throws {
        struct NoFix: PromptProvider {
            struct NoFixError: Error, CustomStringConvertible { var description: String { "no GPS fix yet" } }
            var deckName: String { "places-near-me" }
            func prompts() throws -> [String] { throw NoFixError() }
        }
        struct Blank: PromptProvider {
            var deckName: String { "blank" }
            func prompts() -> [String] { ["", "  ", "\n"] }
        }
        var game = try TiltGame()
        XCTAssertThrowsError(try game.start(at: 0, deck: NoFix())) {
            XCTAssertEqual($0 as? GameError, .deckUnavailable(deck: "places-near-me", reason: "no GPS fix yet"))
            XCTAssertEqual(($0 as? GameError)?.message, "deck places-near-me is unavailable: no GPS fix yet")
        }
        XCTAssertThrowsError(try game.start(at: 0, deck: Blank())) {
            XCTAssertEqual($0 as? GameError, .emptyDeck(deck: "blank"))
        }
        XCTAssertEqual(game.phase, .idle)
        XCTAssertEqual(game.nextRoundID, 1, "a refused start uses no round id")
    }

    func testConfigurationValidationNamesTheField() {
        func field(_ change: (inout TiltGame.Rules) -> Void) -> String? {
            var c = TiltGame.Rules.absoluteMode
            change(&c)
            do { try c.validate(); return nil } catch {
                if case .invalidConfiguration(let f, _) = error { return f }
                return "?"
            }
        }
        XCTAssertNil(field { _ in })
        XCTAssertEqual(field { $0.lowThresholdDeg = 120 }, "high_threshold_deg")
        XCTAssertEqual(field { $0.lowThresholdDeg = -1 }, "low_threshold_deg")
        XCTAssertEqual(field { $0.highThresholdDeg = .nan }, "high_threshold_deg")
        XCTAssertEqual(field { $0.hysteresisDeg = 27 }, "hysteresis_deg")
        XCTAssertEqual(field { $0.hysteresisDeg = -1 }, "hysteresis_deg")
        XCTAssertEqual(field { $0.holdSeconds = -0.1 }, "hold_s")
        XCTAssertEqual(field { $0.debounceSeconds = 11 }, "debounce_s")
        XCTAssertEqual(field { $0.roundSeconds = 0 }, "round_s")
        XCTAssertEqual(field { $0.backAxis = .zero }, "back_axis")
        XCTAssertThrowsError(
            try TiltGame(
                configuration: {
                    var c = TiltGame.Rules.absoluteMode; c.hysteresisDeg = 30; return c
                }()))
    }

    func testSnapshotDescribesARoundInProgressAndKeepsOneSchema() throws {
        var game = try TiltGame(configuration: .absoluteMode, seed: 3)
        let idle = game.snapshot
        XCTAssertEqual(idle["state"], "idle")
        XCTAssertEqual(idle["round"], .null)

        let traced = HeadTrace(rateHz: 100).samples(Self.timedMotion())
        let attitudes = traced.map(\.attitude)
        _ = try game.start(at: attitudes[0].t, roundSeconds: 10, deck: GamePlay.deck())
        var events: [GameEvent] = []
        for a in attitudes.prefix(200) { events += game.update(a) }  // last sample at 1.99 s
        let s = game.snapshot
        XCTAssertEqual(s.keys, idle.keys, "one schema whether idle or playing")
        XCTAssertEqual(s["state"], "prompt")
        XCTAssertEqual(s["round"], 1)
        XCTAssertEqual(s["deck"], "test")
        XCTAssertEqual(s["deck_size"], 40)
        XCTAssertEqual(s["deck_left"], 38)
        XCTAssertEqual(s["round_s"]?.doubleValue, 10)
        XCTAssertEqual(s["remaining_ms"], .int(8010))
        XCTAssertEqual(s["score"], 1)
        XCTAssertEqual(s["prompt"]?.stringValue, game.currentPrompt)
        XCTAssertEqual(s["prompt_t_ns"], .int(GamePlay.at(1.85)))
        XCTAssertEqual(s["correct"]?.arrayValue?.count, 1)
        XCTAssertEqual(s["correct"]?.arrayValue?.first?["decision_ms"], 800)
        XCTAssertEqual(s["skipped"], [])
        XCTAssertEqual(s["tilt_deg"]?.doubleValue ?? 0, 90, accuracy: 0.05)
        XCTAssertEqual(s["neutral"]?["mode"], "absolute")
        XCTAssertEqual(s["config"]?["low_threshold_deg"]?.doubleValue, 63)
        XCTAssertEqual(s["last_round"], .null)

        _ = try game.stop(at: attitudes[199].t)
        let after = game.snapshot
        XCTAssertEqual(after.keys, idle.keys)
        XCTAssertEqual(after["last_round"]?["reason"], "stopped")
        XCTAssertEqual(after["last_round"]?["score"], 1)
    }

    func testEventsEncodeAsGameLines() throws {
        let traced = HeadTrace(rateHz: 100).samples(Self.timedMotion())
        let attitudes = traced.map(\.attitude)
        let (_, events) = try GamePlay.run(traced, roundSeconds: 5)
        for (i, e) in events.enumerated() {
            let line = e.event.encode(seq: UInt64(100 + i))
            let v = try JSONParser.parse(line.dropLast())
            XCTAssertEqual(v["class"], "game")
            XCTAssertEqual(v["seq"], .int(Int64(100 + i)))
            XCTAssertEqual(v["t_ns"], .int(e.t))
            XCTAssertEqual(v["kind"]?.stringValue, e.kind.rawValue)
            // `json` is the same object with t_ns right after kind.
            XCTAssertEqual(e.json.keys, ["kind", "t_ns"] + e.fields.keys.dropFirst())
        }
        let correct = try XCTUnwrap(events.first { $0.kind == .correct })
        XCTAssertEqual(correct.fields["decision_ms"], 800)
        XCTAssertEqual(correct.fields["tilt_deg"]?.doubleValue ?? 0, 45, accuracy: 0.05)
        XCTAssertEqual(correct.fields["state"], "waiting_for_neutral")
        XCTAssertEqual(correct.fields["score"], 1)
        let end = try XCTUnwrap(events.last)
        XCTAssertEqual(end.fields["result"]?["reason"], "timeout")
        XCTAssertEqual(end.fields["result"]?["correct"]?.arrayValue?.count, 1)
    }
}
