# SPDX-License-Identifier: Apache-2.0
"""Starts the real tiltd binary for the tests: a replay of config/demo/head.csv (optionally the
GPX walk too), with its socket, store and config in a temporary directory.

``$TILTD_BIN`` names the binary (default: .build/debug/tiltd of this repository); it is built
with ``swift build --product tiltd`` only when missing.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
from pathlib import Path
from typing import List, Optional

REPO = Path(__file__).resolve().parents[3]
DEMO = REPO / "config" / "demo"
CLIENT_DIR = REPO / "clients" / "python"
START_TIMEOUT_S = 60.0


def tiltd_binary() -> str:
    """The daemon under test, built once if it is missing."""
    binary = os.environ.get("TILTD_BIN") or str(REPO / ".build" / "debug" / "tiltd")
    if not os.access(binary, os.X_OK):
        if os.environ.get("TILTD_BIN"):
            raise unittest.SkipTest(f"TILTD_BIN={binary} is not an executable")
        swift = shutil.which("swift") or "/opt/swift/usr/bin/swift"
        subprocess.run([swift, "build", "--product", "tiltd"], cwd=REPO, check=True, timeout=3600)
    return binary


class Daemon:
    """One tiltd process. ``replay`` are the extra ``tiltd run`` arguments (speed, hold, GPX);
    ``config`` extra TOML appended to the generated config; ``socket_mode`` the socket file's."""

    def __init__(self, replay: Optional[List[str]] = None, config: str = "", socket_mode: str = "0660"):
        self.dir = tempfile.mkdtemp(prefix="tiltd-py-")
        self.socket = os.path.join(self.dir, "tiltd.sock")
        self.config = os.path.join(self.dir, "tiltd.toml")
        self.log = os.path.join(self.dir, "daemon.log")
        self.replay = replay or []
        with open(self.config, "w") as f:
            f.write(f'[socket]\npath = "{self.socket}"\nmode = "{socket_mode}"\n[store]\npath = "{self.dir}/tiltd.sqlite"\n'
                    f'[log]\nlevel = "warning"\n{config}')
        self.proc: Optional[subprocess.Popen] = None

    def start(self) -> "Daemon":
        """Start it and wait (bounded) until its socket accepts connections."""
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [tiltd_binary(), "run", "--config", self.config, "--replay", str(DEMO / "head.csv"), *self.replay],
                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        deadline = time.monotonic() + START_TIMEOUT_S
        # Nothing in the standard library blocks until another process listens on a path: try
        # to connect every 20 ms. (The socket file can exist a moment before the daemon listens:
        # ECONNREFUSED.)
        while not self._accepts():
            if self.proc.poll() is not None:
                raise RuntimeError(f"tiltd exited ({self.proc.returncode}) before opening its socket:\n{self.tail()}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"tiltd did not open {self.socket} in {START_TIMEOUT_S} s:\n{self.tail()}")
            time.sleep(0.02)
        return self

    def _accepts(self) -> bool:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            try:
                s.connect(self.socket)
                return True
            except (FileNotFoundError, ConnectionRefusedError):
                return False

    def wait_streaming(self) -> "Daemon":
        """Wait (bounded) until the IMU streams and a first sample has arrived (a line with a
        t_ns): before that game.start is refused as unavailable."""
        import tiltd  # here, so that importing this module does not need the package
        with tiltd.Client(self.socket, reconnect=False) as c:
            line = c.hello
            states = {s["source"]: s["state"] for s in c.hello.sources}
            while states.get("imu") != "streaming" or line.t_ns is None:
                line = c.next_line(timeout=START_TIMEOUT_S)
                if isinstance(line, tiltd.Status):
                    states[line.source] = line.state
        return self

    def stop(self) -> None:
        """Stop it (SIGTERM, then SIGKILL after 10 s)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None

    def cleanup(self) -> None:
        """Stop it and remove its directory."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def tail(self, n: int = 20) -> str:
        """The end of its log, for failure messages."""
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return "(no log)"


def started(d: Daemon, streaming: bool = False) -> Daemon:
    """``d`` started (and streaming); its directory removed if it could not be."""
    try:
        d.start()
        return d.wait_streaming() if streaming else d
    except BaseException:
        d.cleanup()
        raise


def live_replay() -> Daemon:
    """A daemon replaying the head recording in real time (55 s of attitude at 60 Hz)."""
    return started(Daemon())


def round_replay(round_s: int = 30) -> Daemon:
    """A daemon that holds its replay until a round starts, then plays the recording as fast as
    it can: a whole round of the demo's nods and tilts takes well under a second."""
    return started(Daemon(["--fast", "--hold-until-round"], config=f"[game]\nround_s = {round_s}\n"), True)


class LiveDaemonTest(unittest.TestCase):
    """Tests that share one daemon replaying the head recording in real time: ``self.daemon``."""

    @classmethod
    def setUpClass(cls):
        cls.daemon = live_replay()

    @classmethod
    def tearDownClass(cls):
        cls.daemon.cleanup()
