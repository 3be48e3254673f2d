// SPDX-License-Identifier: Apache-2.0
import BrowserSupport
import Foundation
import TestSupport
import TiltCore
import XCTest

/// The players' screen end to end: the real daemon replaying a recording, the real `tiltd web`,
/// and a real headless Chromium showing the game screen and the live view.
final class WebBrowserTests: XCTestCase {
    private var rig: WebRig?
    private var chromium: Chromium?

    override func setUpWithError() throws {
        try WebRig.requireChromium()
    }

    override func tearDown() {
        if (testRun?.hasSucceeded ?? true) == false, let rig { print(rig.logs) }
        chromium?.stop()
        rig?.stop()
    }

    func testARoundOnTheGameScreenPairingReconnectAndTheLiveView() async throws {
        let rig = try WebRig()
        self.rig = rig
        try rig.startDaemon()
        try rig.startWeb()
        let chromium = try Chromium()
        self.chromium = chromium
        let devTools = try await DevTools.connect(chromium.browserURL)

        // A phone held up in portrait, and a desktop showing the live view.
        let game = try await devTools.openPage(rig.url + "/", width: 412, height: 860, mobile: true)
        let live = try await devTools.openPage(rig.url + "/live", width: 1280, height: 1180)
        try await game.waitFor("document.getElementById('banner').textContent === 'connected'", timeout: 15)
        try await game.waitFor("model.state !== null", timeout: 10)

        // Not paired: the command is refused by tiltd web and never reaches the daemon.
        let refused = try await game.evaluate("socket.send('game.start', {}).then((r) => r)")
        XCTAssertEqual(refused["ok"], .bool(false), "\(refused)")
        XCTAssertEqual(refused["error"]?["code"], .string("not_paired"), "\(refused)")
        let hidden = try await game.evaluate("document.getElementById('commands').hidden")
        XCTAssertEqual(hidden, .bool(true))
        let watcher = try LineClient(path: rig.socketPath)
        _ = try watcher.next("hello")
        let status = try watcher.request(#"{"cmd":"status","id":1}"#, id: 1)
        XCTAssertEqual(status["game"]?["state"], .string("idle"), "the refused start must not have started a round")

        // A wrong code is refused; the right one pairs (HttpOnly cookie) and shows the buttons.
        let wrong = try await game.evaluate("socket.pair('000-000').then(() => 'paired', (e) => e.message)")
        XCTAssertTrue(wrong.stringValue?.contains("wrong pairing code") == true, "\(wrong)")
        try await game.evaluate(
            "document.getElementById('pair-code').value = '\(WebRig.pairingCode)'; document.getElementById('pair-form').requestSubmit(); true"
        )
        try await game.waitFor("!document.getElementById('commands').hidden && socket.paired", timeout: 10)
        let cookie = try await game.evaluate("document.cookie")
        XCTAssertEqual(cookie, .string(""), "the session cookie must be HttpOnly")

        // Start a 20 s round from the page, as a player would.
        _ = try watcher.request(#"{"cmd":"watch","id":2,"classes":["game"],"attitude_hz":0}"#, id: 2)
        try await game.evaluate(
            """
            const sel = document.getElementById('round-choice'); const o = document.createElement('option');
            o.value = o.textContent = '20'; sel.appendChild(o); sel.value = '20';
            document.getElementById('start').click(); true
            """)

        var promptLatencies: [Double] = []
        var sawScoreChange = false
        var decisions: [(kind: String, prompt: String)] = []
        var shots = 0
        while true {
            let line = try await offThread { try watcher.next("game", timeout: 40) }
            let seen = wallMillis()
            guard let kind = line["kind"]?.stringValue, let seq = line["seq"]?.intValue else { continue }
            if kind == "prompt" || kind == "correct" || kind == "skip" || kind == "round_ended" {
                // The page's own record of when it painted this line, and what it showed then.
                let entry = try await game.waitFor("tiltdTrace.find((e) => e.seq === \(seq))", timeout: 5)
                let painted = entry["painted"]?.doubleValue ?? .infinity
                if kind == "prompt" {
                    let prompt = line["prompt"]?.stringValue ?? ""
                    XCTAssertEqual(entry["prompt"]?.stringValue, prompt, "the prompt on screen")
                    promptLatencies.append(painted - seen)
                    XCTAssertLessThan(
                        painted - seen, 1000, "prompt \"\(prompt)\" painted \(painted - seen) ms after its game line")
                    if shots == 0 {
                        try await game.screenshot(to: "\(screenshotDir)/game-portrait.png")
                        try await game.setViewport(width: 860, height: 412, mobile: true)
                        try await game.waitFor(
                            "document.getElementById('prompt').scrollWidth <= document.getElementById('stage').clientWidth",
                            timeout: 3)
                        try await game.screenshot(to: "\(screenshotDir)/game-landscape.png")
                        try await game.setViewport(width: 412, height: 860, mobile: true)
                        shots += 1
                    }
                } else if kind == "correct" || kind == "skip" {
                    let score = line["score"]?.intValue ?? -1
                    XCTAssertEqual(entry["score"]?.stringValue, String(score), "the score on screen after \(kind)")
                    if kind == "correct" { sawScoreChange = true }
                    decisions.append((kind, line["prompt"]?.stringValue ?? ""))
                } else {
                    break
                }
            }
        }
        XCTAssertFalse(promptLatencies.isEmpty, "no prompt in the round")
        XCTAssertTrue(sawScoreChange, "no correct decision in a 20 s round of nods: \(decisions)")
        print(
            "web browser test: prompt latency (painted − test client saw the line), ms: \(promptLatencies.map { String(format: "%.1f", $0) })"
        )

        // The summary lists the round: every answered prompt under its column.
        try await game.waitFor("!document.getElementById('summary').hidden", timeout: 5)
        let correctList = try await game.evaluate(
            "[...document.querySelectorAll('#summary-correct li')].map((li) => li.textContent)")
        let skippedList = try await game.evaluate(
            "[...document.querySelectorAll('#summary-skipped li')].map((li) => li.textContent)")
        XCTAssertEqual(
            correctList.arrayValue?.compactMap(\.stringValue), decisions.filter { $0.kind == "correct" }.map(\.prompt))
        XCTAssertEqual(
            skippedList.arrayValue?.compactMap(\.stringValue), decisions.filter { $0.kind == "skip" }.map(\.prompt))
        try await game.screenshot(to: "\(screenshotDir)/game-summary.png")

        // The live view drew attitude all along, and the round's decisions on its plot.
        let attitudes = try await live.evaluate("tiltdTrace.filter((e) => e.cls === 'attitude').length")
        XCTAssertGreaterThan(attitudes.intValue ?? 0, 100, "attitude lines painted on the live view")
        try await live.waitFor("decisions.length === \(decisions.count)", timeout: 5)
        // The map around the fix: the walk's places (names with distances) and the quest cells.
        try await live.waitFor(
            "document.querySelectorAll('#map text').length > 3 && document.querySelectorAll('#map rect').length > 4",
            timeout: 10)
        // The compass: no magnetometer, walking with a course: the GPS course, which is true
        // (the walk is from 2024, before WMM2025's years: no declination, so no magnetic heading).
        // The needle shows the latest line's true heading, as the page drew it in a frame.
        try await live.waitFor(
            "(() => { const c = document.getElementById('compass'), n = document.getElementById('needle'); "
                + "return c.dataset.source === 'course' && c.dataset.north === 'true' && n !== null "
                + "&& Number(c.dataset.heading) === latest.true_heading_deg "
                + "&& n.getAttribute('transform') === `rotate(${latest.true_heading_deg})` "
                + "&& document.getElementById('heading-true').textContent === `${latest.true_heading_deg.toFixed(1)}°`; })()",
            timeout: 15)
        let texts = try await live.evaluate(
            "[document.getElementById('heading-mag').textContent, document.getElementById('heading-source').textContent]"
        )
        XCTAssertEqual(texts, ["–", "course"], "no magnetic heading without a declination")
        try await live.screenshot(to: "\(screenshotDir)/live.png")
        // A magnetometer's line, drawn as the page draws every line: both norths, a disturbed field.
        let drawn = try await live.evaluate(
            "(() => { drawCompass({heading_deg: 61.3, true_heading_deg: 66.1, heading_source: 'mag', mag_disturbed: true}); "
                + "const c = document.getElementById('compass'); return [c.dataset.north, c.dataset.heading, "
                + "document.getElementById('needle').getAttribute('transform'), document.querySelector('#needle path').getAttribute('fill'), "
                + "document.getElementById('heading-mag').textContent, document.getElementById('heading-source').textContent]; })()"
        )
        XCTAssertEqual(drawn, ["true", "66.1", "rotate(66.1)", "#f08c2e", "61.3°", "mag (disturbed)"])

        // The daemon dies: the page says so, then recovers when it is back.
        rig.daemon?.stop(signal: SIGKILL)
        try await game.waitFor("document.getElementById('banner').textContent.includes('reconnecting')", timeout: 10)
        try await game.screenshot(to: "\(screenshotDir)/game-reconnecting.png")
        try rig.startDaemon()
        try await game.waitFor("document.getElementById('banner').textContent === 'connected'", timeout: 20)
        // The new daemon's hello reached the page: its state is idle again, buttons still there.
        try await game.waitFor(
            "model.state && model.state.state === 'idle' && !document.getElementById('commands').hidden", timeout: 10)
        print("screenshots in \(screenshotDir)")
    }
}
