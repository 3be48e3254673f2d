# SPDX-License-Identifier: Apache-2.0
"""The blocking client against the real daemon (a replay of config/demo/head.csv)."""

import signal
import threading
import time
import unittest

import tiltd
from tests.daemon import DEMO, Daemon, LiveDaemonTest, live_replay, round_replay, started

WAIT_S = 15  # the longest any single wait in these tests may take


def play_round(c: tiltd.Client):
    """Start a round and collect its game lines up to its end: (reply, lines)."""
    c.watch(classes=["game"], attitude_hz=0)
    reply = c.start_round()
    lines = []
    while not (lines and lines[-1].ends_round):
        line = c.next_line(timeout=WAIT_S)
        if isinstance(line, tiltd.Game):  # (before the watch applied, other classes came too)
            lines.append(line)
    return reply, lines


def check_round(test: unittest.TestCase, reply: tiltd.Reply, lines) -> None:
    """What every full round of the demo recording shows."""
    test.assertEqual(lines[0].kind, "round_started")  # the event the command caused follows its reply
    test.assertEqual(lines[0].round, reply["round"])
    kinds = [g.kind for g in lines]
    test.assertIn("prompt", kinds)
    test.assertIn("correct", kinds)  # the demo's head nods down …
    test.assertIn("skip", kinds)  # … and tilts up
    test.assertEqual(lines[-1].kind, "round_ended")
    test.assertEqual(lines[-1].result["reason"], "timeout")
    test.assertEqual(lines[-1].score, kinds.count("correct"))


class ClientTests(LiveDaemonTest):
    def client(self, **kw) -> tiltd.Client:
        c = tiltd.Client(self.daemon.socket, **kw)
        self.addCleanup(c.close)
        return c

    def test_hello_is_parsed_and_first(self):
        c = self.client()
        hello = c.connect()
        self.assertIsInstance(hello, tiltd.Hello)
        self.assertEqual(hello.protocol, 1)
        self.assertTrue(hello.trusted)
        self.assertEqual({s["source"] for s in hello.sources}, {"imu"})
        self.assertIn(hello.game["state"], ("idle", "waiting_for_neutral", "prompt"))
        self.assertIn("attitude", hello.watch["classes"])
        self.assertIs(c.next_line(timeout=WAIT_S), hello)

    def test_status(self):
        with self.client() as c:
            r = c.status()
        self.assertTrue(r.ok)
        self.assertEqual(r.cmd, "status")
        self.assertEqual(r["version"], c.hello.version)
        self.assertIn("game", r)
        self.assertEqual(r["sources"][0]["source"], "imu")

    def test_watch_filters_classes_and_rate(self):
        with self.client() as c:
            r = c.watch(classes=["status"], attitude_hz=2)
            self.assertEqual(r["watch"], {"classes": ["status", "attitude"], "attitude_hz": 2, "samples": False})
            attitudes = []
            while len(attitudes) < 3:
                line = c.next_line(timeout=WAIT_S)
                self.assertIn(line.line_class, ("hello", "status", "attitude"))
                if isinstance(line, tiltd.Attitude):
                    attitudes.append(line)
            self.assertAlmostEqual(sum(q * q for q in attitudes[-1].q), 1, places=3)
            # 2 Hz on the grid of sample times: half a second apart (the first may be off-grid).
            self.assertAlmostEqual((attitudes[2].t_ns - attitudes[1].t_ns) / 1e9, 0.5, delta=0.05)
            c.watch(classes=["status"], attitude_hz=0, samples=True)
            line = c.next_line(timeout=WAIT_S)
            while not isinstance(line, tiltd.Sample):
                self.assertNotIsInstance(line, tiltd.Game)
                line = c.next_line(timeout=WAIT_S)
            self.assertEqual(len(line.accel), 3)

    def test_refused_command_raises_and_the_connection_lives(self):
        with self.client() as c:
            with self.assertRaises(tiltd.CommandError) as e:
                c.stop_round()
            self.assertEqual(e.exception.code, "not_running")
            self.assertEqual(e.exception.message, "no round is running")
            self.assertEqual(e.exception.cmd, "game.stop")
            with self.assertRaises(tiltd.CommandError) as e:
                c.start_round(round_s=1)
            self.assertEqual(e.exception.code, "invalid_round_length")
            with self.assertRaises(tiltd.CommandError) as e:
                c.command("fly")
            self.assertEqual((e.exception.code, e.exception.reply.cmd), ("unknown_command", None))
            self.assertTrue(c.ping()["pong"])

    def test_two_commands_in_flight_matched_by_id(self):
        with self.client() as c:
            # credits waits for the store, so the ping sent after it may be answered first.
            credits = c.send("credits")
            ping = c.send("ping")
            self.assertNotEqual(credits, ping)
            p = c.reply(ping)
            r = c.reply(credits)
            self.assertEqual((p.id, p.cmd, r.id, r.cmd), (ping, "ping", credits, "credits"))
            self.assertEqual(r["balance"], 0)

    def test_socket_missing(self):
        with self.assertRaises(tiltd.SocketMissing) as e:
            tiltd.Client(self.daemon.dir + "/nothing.sock").connect()
        self.assertIn("nothing.sock", str(e.exception))


class RoundTests(unittest.TestCase):
    def test_a_round_played_to_its_end(self):
        d = round_replay()
        self.addCleanup(d.cleanup)
        with tiltd.Client(d.socket) as c:
            reply, lines = play_round(c)
            check_round(self, reply, lines)
            last = c.history(n=1)["rounds"][0]
            self.assertEqual(last, lines[-1].result)


class PlacesTests(unittest.TestCase):
    def test_fix_place_quest_and_credit_lines_and_a_redeem(self):
        # The demo's GPX walk, 400× faster: a café stop of 10 minutes earns a credit in ~3 s.
        d = started(Daemon(["--gpx", str(DEMO / "walk.gpx"), "--gpx-speed", "400"],
                           config=f'[places]\nfile = "{DEMO}/places.geojson"\ncredit_categories = ["cafe"]\n'))
        self.addCleanup(d.cleanup)
        with tiltd.Client(d.socket) as c:
            c.watch(classes=["fix", "place", "quest", "credit"], attitude_hz=0)
            seen = {}
            for line in c.lines(timeout=WAIT_S):
                seen.setdefault(type(line), line)
                if isinstance(line, tiltd.Credit):
                    break
            fix, place, quest, credit = (seen[t] for t in (tiltd.Fix, tiltd.Place, tiltd.Quest, tiltd.Credit))
            self.assertEqual(fix.mode, 3)
            self.assertAlmostEqual(fix.lat, 52.5, delta=0.1)
            self.assertEqual(fix.t_ns, fix.time_ns)
            self.assertEqual((place.event, place.category), ("enter", "bakery"))
            self.assertEqual(quest.event, "available")
            self.assertEqual((credit.event, credit.name, credit.amount, credit.balance), ("earned", "Café Kompass", 1, 1))
            with self.assertRaises(tiltd.CommandError) as e:
                c.redeem(amount=5)
            self.assertEqual(e.exception.code, "insufficient_credits")
            r = c.redeem(amount=1, request_id="test-1")
            self.assertEqual((r["redeemed"], r["balance"]), (1, 0))
            # The credit event the redeem caused follows its reply.
            line = c.next_line(timeout=WAIT_S)
            while not isinstance(line, tiltd.Credit):
                line = c.next_line(timeout=WAIT_S)
            self.assertEqual((line.event, line.request_id, line.balance), ("redeemed", "test-1", 0))


class ReconnectTests(unittest.TestCase):
    def setUp(self):
        self.daemon = live_replay()
        self.addCleanup(self.daemon.cleanup)

    def test_reconnects_after_the_daemon_restarts_and_keeps_its_watch(self):
        c = tiltd.Client(self.daemon.socket, reconnect_timeout=WAIT_S)
        self.addCleanup(c.close)
        first = c.connect()
        self.assertIs(c.next_line(timeout=WAIT_S), first)
        settings = c.watch(classes=["game", "status"], attitude_hz=1)["watch"]
        self.daemon.stop()
        # The daemon comes back while the client is finding out it left: its first attempts
        # find no socket and back off.
        restart = threading.Thread(target=self.daemon.start)
        restart.start()
        self.addCleanup(restart.join, WAIT_S)
        line = c.next_line(timeout=WAIT_S)
        while not isinstance(line, tiltd.Hello):
            line = c.next_line(timeout=WAIT_S)
        self.assertIsNot(line, first)
        self.assertIs(c.hello, line)
        self.assertEqual(c.watch()["watch"], settings)  # no arguments: echoes what is in force

    def test_a_command_in_flight_when_the_daemon_stops_raises_connection_lost(self):
        c = tiltd.Client(self.daemon.socket, reconnect=False)
        self.addCleanup(c.close)
        c.connect()
        rid = c.send("ping")
        self.daemon.stop()
        # The ping may have been answered before the stop; then the next read finds the end.
        try:
            c.reply(rid, timeout=WAIT_S)
            c.next_line(timeout=WAIT_S)
            while True:
                c.next_line(timeout=WAIT_S)
        except tiltd.ConnectionLost:
            pass
        with self.assertRaises(tiltd.ConnectionLost):
            c.ping()

    def test_a_stopped_daemon_is_noticed_by_the_keepalive(self):
        # 1 s: the connect and the watch before the stop must not be taken for a dead daemon on
        # a busy machine (0.3 s was, once, in a test run beside four builds).
        c = tiltd.Client(self.daemon.socket, reconnect=False, keepalive_s=1.0)
        self.addCleanup(c.close)
        c.connect()
        c.watch(classes=[], attitude_hz=0)  # a quiet stream: only the keep-alive's ping answers
        self.assertIsInstance(c.next_line(timeout=WAIT_S), tiltd.Hello)
        self.daemon.proc.send_signal(signal.SIGSTOP)  # its socket stays open, nothing answers
        self.addCleanup(self.daemon.proc.send_signal, signal.SIGCONT)
        started = time.monotonic()
        with self.assertRaisesRegex(tiltd.ConnectionLost, "keep-alive"):
            while True:  # (lines sent before the watch applied come first)
                c.next_line(timeout=WAIT_S)
        self.assertLess(time.monotonic() - started, 5)  # noticed after 2 keep-alive intervals

    def test_gives_up_reconnecting_in_bounded_time(self):
        c = tiltd.Client(self.daemon.socket, reconnect_timeout=0.5)
        self.addCleanup(c.close)
        c.connect()
        self.daemon.stop()
        started = time.monotonic()
        with self.assertRaises(tiltd.SocketMissing):
            while True:
                c.next_line(timeout=WAIT_S)
        self.assertLess(time.monotonic() - started, 5)
