# SPDX-License-Identifier: Apache-2.0
"""``python3 -m tiltd``, the docs' example run as written, and the package build."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from tests.daemon import CLIENT_DIR, REPO, Daemon, round_replay, started
from tests.test_client import WAIT_S

ENV = dict(os.environ, PYTHONPATH=str(CLIENT_DIR), PYTHONDONTWRITEBYTECODE="1")


def tiltd_cli(*args, env=None, prefix=(), python=sys.executable):
    """Run ``python3 -m tiltd ARGS`` (bounded); returns the CompletedProcess."""
    return subprocess.run([*prefix, python, "-m", "tiltd", *args], capture_output=True, text=True,
                          timeout=2 * WAIT_S, env=env or ENV, cwd="/")


class CommandLineTests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        # Open to everyone, so that the permission tests can connect as another user.
        cls.daemon = started(Daemon(socket_mode="0666"))

    @classmethod
    def tearDownClass(cls):
        cls.daemon.cleanup()

    def test_watch_readable_and_json(self):
        r = tiltd_cli("watch", "--socket", self.daemon.socket, "-n", "3", "--classes", "status", "--attitude-hz", "5")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.splitlines()
        self.assertEqual(len(out), 3)
        self.assertTrue(out[0].startswith("hello: tiltd "), out)
        self.assertTrue(all(re.match(r"(attitude: roll|status: )", x) for x in out[1:]), out)
        r = tiltd_cli("watch", "-n", "2", "--json", "--classes", "status", "--attitude-hz", "5",
                      env=dict(ENV, TILTD_SOCKET=self.daemon.socket))
        self.assertEqual(r.returncode, 0, r.stderr)
        first, second = map(json.loads, r.stdout.splitlines())
        self.assertEqual(first["class"], "hello")
        self.assertIn(second["class"], ("attitude", "status"))

    def test_status(self):
        r = tiltd_cli("status", "--socket", self.daemon.socket)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertRegex(r.stdout, r"^tiltd \d+\.\d+\.\d+: \d+ client")
        self.assertIn("imu ", r.stdout)
        r = tiltd_cli("status", "--json", "--socket", self.daemon.socket)
        self.assertEqual(json.loads(r.stdout)["cmd"], "status")

    def test_refused_command_exit_1(self):
        r = tiltd_cli("play", "--round-s", "1", "--socket", self.daemon.socket)
        self.assertEqual(r.returncode, 1)
        self.assertIn("invalid_round_length", r.stderr)

    def test_socket_missing_exit_3(self):
        missing = os.path.join(self.daemon.dir, "elsewhere.sock")
        r = tiltd_cli("status", "--socket", missing)
        self.assertEqual(r.returncode, 3)
        self.assertIn(f"no tiltd socket at {missing}", r.stderr)

    def test_bad_usage_exit_2(self):
        self.assertEqual(tiltd_cli("fly").returncode, 2)

    def test_permission_denied_and_forbidden_exit_4(self):
        if os.geteuid() != 0:
            if os.environ.get("CI") == "true":
                self.fail("needs root to run the client as another user (CI runs as root)")
            self.skipTest("needs root to run the client as another user")
        nobody = dict(prefix=("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"),
                      # An interpreter that user can run (not one in root's home).
                      python="/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable)
        # A copy of the package that user can read, wherever this checkout is.
        readable = tempfile.mkdtemp(prefix="tiltd-py-pkg-")
        self.addCleanup(shutil.rmtree, readable)
        os.chmod(readable, 0o755)
        shutil.copytree(CLIENT_DIR / "tiltd", os.path.join(readable, "tiltd"))
        env = dict(ENV, PYTHONPATH=readable)
        # The daemon's directory is closed to others (mkdtemp: 0700): the socket cannot be opened.
        r = tiltd_cli("status", "--socket", self.daemon.socket, env=env, **nobody)
        self.assertEqual(r.returncode, 4, r.stderr)
        self.assertIn(f"permission denied opening {self.daemon.socket}", r.stderr)
        self.assertIn("usermod -aG tiltd", r.stderr)
        # Opened up, an untrusted user may watch but not start a round.
        os.chmod(self.daemon.dir, 0o755)
        try:
            self.assertEqual(tiltd_cli("status", "--socket", self.daemon.socket, env=env, **nobody).returncode, 0)
            r = tiltd_cli("play", "--socket", self.daemon.socket, env=env, **nobody)
            self.assertEqual(r.returncode, 4, r.stderr)
            self.assertIn("trusted_gids", r.stderr)
        finally:
            os.chmod(self.daemon.dir, 0o700)


class PlayTests(unittest.TestCase):
    def test_play_prints_prompts_and_decisions_until_the_end(self):
        d = round_replay()
        self.addCleanup(d.cleanup)
        r = tiltd_cli("play", "--socket", d.socket)
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.splitlines()
        self.assertRegex(out[0], r"^round 1 started")
        self.assertTrue(any(x.startswith("game: prompt ") for x in out), out)
        self.assertTrue(any(x.startswith("game: CORRECT ") for x in out), out)
        self.assertTrue(any(x.startswith("game: SKIP ") for x in out), out)
        self.assertRegex(out[-1], r"^game: round 1 ended \(timeout\): score \d+")

    def test_the_docs_python_example_runs_as_written(self):
        doc = (REPO / "docs" / "clients.md").read_text()
        example = re.search(r"## A round in ten lines.*?```python\n(.*?)```", doc, re.S).group(1)
        self.assertLessEqual(len([x for x in example.splitlines() if x.strip()]), 10)
        d = round_replay()
        self.addCleanup(d.cleanup)
        r = subprocess.run([sys.executable, "-c", example], capture_output=True, text=True, timeout=2 * WAIT_S,
                           env=dict(ENV, TILTD_SOCKET=d.socket), cwd="/")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.splitlines()
        self.assertRegex(out[0], r"^(correct|skip) .+ after \d+ ms$")
        self.assertRegex(out[-1], r"^score \d+$")


class BuildTests(unittest.TestCase):
    def test_version_exits_0_with_the_version(self):
        import tiltd
        for args in (["--version"], ["watch", "--version"]):
            r = tiltd_cli(*args)
            self.assertEqual((r.returncode, r.stdout.strip()), (0, f"tiltd {tiltd.__version__}"), r.stderr)

    def test_the_package_is_typed_strictly(self):
        """``mypy --strict`` finds nothing in the package (py.typed promises its types)."""
        for python in [sys.executable] + [p for p in ("/usr/bin/python3",) if os.path.exists(p)]:
            if subprocess.run([python, "-c", "import mypy"], capture_output=True).returncode == 0:
                break
        else:
            message = "mypy is not installed (apt install python3-mypy, as scripts/install-deps --test does)"
            if os.environ.get("CI") == "true":
                self.fail(message)
            self.skipTest(message)
        with tempfile.TemporaryDirectory() as cache:
            r = subprocess.run([python, "-m", "mypy", "--strict", "--cache-dir", cache, "tiltd"],
                               capture_output=True, text=True, timeout=600, cwd=CLIENT_DIR)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)

    def test_the_wheel_holds_the_package_and_its_metadata(self):
        """The wheel setuptools builds (as pip would, from a copy of the source): the package,
        py.typed, the version, the licence and the console script."""
        import tiltd
        builders = [sys.executable] + [p for p in ("/usr/bin/python3",) if os.path.exists(p) and p != sys.executable]
        failures = []
        with tempfile.TemporaryDirectory() as tmp:
            src, out = os.path.join(tmp, "src"), os.path.join(tmp, "out")
            shutil.copytree(CLIENT_DIR, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
            os.mkdir(out)
            for python in builders:
                r = subprocess.run([python, "-c", "import sys; from setuptools import build_meta; "
                                    "print(build_meta.build_wheel(sys.argv[1]))", out],
                                   capture_output=True, text=True, timeout=300, cwd=src,
                                   env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1"))
                if r.returncode == 0:
                    break
                failures.append(f"{python}: {r.stderr.strip().splitlines()[-1:]}")
            else:
                self.fail("no Python here builds the wheel (apt install python3-setuptools python3-wheel): "
                          + "; ".join(failures))
            wheel = r.stdout.strip().splitlines()[-1]
            with zipfile.ZipFile(os.path.join(out, wheel)) as z:
                names = z.namelist()
                info = f"tiltd-{tiltd.__version__}.dist-info"
                metadata = z.read(f"{info}/METADATA").decode()
                entry_points = z.read(f"{info}/entry_points.txt").decode()
        self.assertEqual(wheel, f"tiltd-{tiltd.__version__}-py3-none-any.whl")
        for name in ("tiltd/__main__.py", "tiltd/client.py", "tiltd/py.typed", f"{info}/RECORD"):
            self.assertIn(name, names)
        self.assertTrue([n for n in names if n.startswith(f"{info}/") and n.endswith("LICENSE")], names)
        self.assertIn(f"\nVersion: {tiltd.__version__}\n", metadata)
        self.assertIn("\nLicense: Apache-2.0\n", metadata)
        self.assertRegex(entry_points, r"(?m)^tiltd-watch = tiltd\.cli:watch_main$")
        self.assertFalse([n for n in names if "test" in n or "pycache" in n])
