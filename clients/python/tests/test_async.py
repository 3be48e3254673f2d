# SPDX-License-Identifier: Apache-2.0
"""The asyncio client against the real daemon: the same essentials as the blocking one."""

import asyncio
import signal
import threading
import unittest

import tiltd
from tests.daemon import LiveDaemonTest, live_replay, round_replay
from tests.test_client import WAIT_S, check_round


def run(coro):
    """Run a test coroutine, bounded as a whole."""
    return asyncio.run(asyncio.wait_for(coro, 4 * WAIT_S))


class AsyncClientTests(LiveDaemonTest):
    def test_hello_status_and_watch(self):
        async def body():
            async with tiltd.AsyncClient(self.daemon.socket) as c:
                self.assertIsInstance(c.hello, tiltd.Hello)
                self.assertIs(await c.next_line(timeout=WAIT_S), c.hello)
                self.assertEqual((await c.status())["version"], c.hello.version)
                r = await c.watch(classes=["status"], attitude_hz=5)
                self.assertEqual(r["watch"]["classes"], ["status", "attitude"])
                seen = []
                async for line in c.lines(timeout=WAIT_S):
                    self.assertIn(line.line_class, ("status", "attitude"))
                    seen.append(line)
                    if len(seen) == 3:
                        break
        run(body())

    def test_refusal_raises_and_commands_in_flight_are_matched_by_id(self):
        async def body():
            async with tiltd.AsyncClient(self.daemon.socket) as c:
                with self.assertRaises(tiltd.CommandError) as e:
                    await c.stop_round()
                self.assertEqual(e.exception.code, "not_running")
                credits, ping, stats = await asyncio.gather(c.credits(), c.ping(), c.stats())
                self.assertEqual((credits.cmd, ping.cmd, stats.cmd), ("credits", "ping", "stats"))
                self.assertEqual(credits["balance"], 0)
                self.assertTrue(ping["pong"])
        run(body())

    def test_a_round_played_to_its_end_while_another_task_asks(self):
        d = round_replay()
        self.addCleanup(d.cleanup)

        async def body():
            async with tiltd.AsyncClient(d.socket) as c:
                await c.watch(classes=["game"], attitude_hz=0)
                reply = await c.start_round()
                lines = []
                async for line in c.lines(timeout=WAIT_S):
                    if isinstance(line, tiltd.Game):
                        lines.append(line)
                        if line.is_decision:  # commands from the same client meanwhile
                            self.assertTrue((await c.ping())["pong"])
                        if line.ends_round:
                            break
                check_round(self, reply, lines)
        run(body())

    def test_reconnects_after_the_daemon_restarts(self):
        d = live_replay()
        self.addCleanup(d.cleanup)

        async def body():
            async with tiltd.AsyncClient(d.socket, reconnect_timeout=WAIT_S) as c:
                first = await c.next_line(timeout=WAIT_S)
                settings = (await c.watch(classes=["status"], attitude_hz=1))["watch"]
                d.stop()
                restart = threading.Thread(target=d.start)
                restart.start()
                self.addCleanup(restart.join, WAIT_S)
                line = await c.next_line(timeout=WAIT_S)
                while not isinstance(line, tiltd.Hello):
                    line = await c.next_line(timeout=WAIT_S)
                self.assertIsNot(line, first)
                self.assertEqual((await c.watch())["watch"], settings)
        run(body())

    def test_a_stopped_daemon_is_noticed_by_the_keepalive(self):
        d = live_replay()
        self.addCleanup(d.cleanup)

        async def body():
            async with tiltd.AsyncClient(d.socket, reconnect=False, keepalive_s=0.3) as c:
                await c.watch(classes=[], attitude_hz=0)
                self.assertIsInstance(await c.next_line(timeout=WAIT_S), tiltd.Hello)
                d.proc.send_signal(signal.SIGSTOP)
                self.addCleanup(d.proc.send_signal, signal.SIGCONT)
                with self.assertRaisesRegex(tiltd.ConnectionLost, "keep-alive"):
                    while True:  # (lines sent before the watch applied come first)
                        await c.next_line(timeout=WAIT_S)
        run(body())

    def test_gives_up_in_bounded_time(self):
        d = live_replay()
        self.addCleanup(d.cleanup)

        async def body():
            async with tiltd.AsyncClient(d.socket, reconnect_timeout=0.5) as c:
                d.stop()
                with self.assertRaises(tiltd.SocketMissing):
                    async for _ in c.lines(timeout=WAIT_S):
                        pass
                with self.assertRaises(tiltd.SocketMissing):
                    await c.ping()
        run(body())
