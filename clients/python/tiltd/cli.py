# SPDX-License-Identifier: Apache-2.0
"""``python3 -m tiltd``: watch the daemon, ask its status, play a round from a terminal.

Exit codes (also in docs/clients.md and ``--help``): 0 done; 1 the daemon refused a command;
2 bad usage; 3 no daemon at the socket; 4 permission denied (the socket, or a command that
needs a trusted user); 5 the connection was lost or a wait ran out; 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import List, Optional

from . import __version__
from .client import Client
from .errors import CommandError, ConnectionLost, PermissionDenied, SocketMissing, TiltdError
from .lines import Game
from .show import describe, describe_status_reply

EXIT_REFUSED, EXIT_USAGE, EXIT_NO_DAEMON, EXIT_PERMISSION, EXIT_LOST, EXIT_INTERRUPTED = 1, 2, 3, 4, 5, 130

EPILOG = """exit codes: 0 done, 1 the daemon refused a command, 2 bad usage, 3 no daemon at the
socket, 4 permission denied (joining the socket's group, or [socket] trusted_gids, fixes it),
5 connection lost or timed out, 130 interrupted.
The socket is --socket PATH, else $TILTD_SOCKET, else /run/tiltd/tiltd.sock."""


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--socket", metavar="PATH", help="the daemon's socket (default: $TILTD_SOCKET or /run/tiltd/tiltd.sock)")
    common.add_argument("--json", action="store_true", help="print the daemon's JSON lines as they are")
    common.add_argument("--version", action="version", version=f"tiltd {__version__}")
    p = argparse.ArgumentParser(prog="python3 -m tiltd", description="A command-line client for tiltd.",
                                epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--version", action="version", version=f"tiltd {__version__}")
    sub = p.add_subparsers(dest="command", metavar="{watch,status,play}")
    sub.required = True
    w = sub.add_parser("watch", parents=[common], help="print what the daemon sends", epilog=EPILOG,
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    w.add_argument("--classes", metavar="CLASS[,CLASS…]", action="append",
                   help="only these classes (status, attitude, sample, game, fix, place, quest, credit); repeatable")
    w.add_argument("--attitude-hz", type=float, metavar="HZ", help="attitude lines per second (0: none)")
    w.add_argument("--samples", action="store_true", help="also every calibrated IMU sample")
    w.add_argument("-n", "--count", type=int, metavar="N", help="stop after N lines")
    w.add_argument("--no-reconnect", action="store_true", help="exit when the daemon goes away")
    sub.add_parser("status", parents=[common], help="the daemon's sources, game, fix and places", epilog=EPILOG,
                   formatter_class=argparse.RawDescriptionHelpFormatter)
    pl = sub.add_parser("play", parents=[common], help="start a round; print prompts and decisions until it ends",
                        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    pl.add_argument("--round-s", type=float, metavar="S", help="round length, 5–3600 s (default: the daemon's)")
    pl.add_argument("--deck", help='"nearby" or a deck file\'s name in the daemon\'s deck directory ([game] deck_dir)')
    pl.add_argument("--gestures", choices=["tilt", "nod"])
    return p


def _emit(text: str) -> None:
    print(text, flush=True)


def watch(args: argparse.Namespace) -> int:
    """Print lines until Ctrl-C (or ``--count``); reconnects unless ``--no-reconnect``."""
    classes: Optional[List[str]] = None
    if args.classes:
        classes = [c.strip() for group in args.classes for c in group.split(",") if c.strip()]
    with Client(args.socket, reconnect=not args.no_reconnect) as c:
        if classes is not None or args.attitude_hz is not None or args.samples:
            c.watch(classes=classes, attitude_hz=args.attitude_hz, samples=args.samples or None)
        for n, line in enumerate(c.lines(), 1):
            _emit(line.to_json() if args.json else describe(line))
            if args.count is not None and n >= args.count:
                return 0
    return 0


def status(args: argparse.Namespace) -> int:
    """Print the status reply."""
    with Client(args.socket, reconnect=False) as c:
        r = c.status()
    _emit(r.to_json() if args.json else "\n".join(describe_status_reply(r)))
    return 0


def play(args: argparse.Namespace) -> int:
    """Start a round and print its prompts and decisions until it ends."""
    with Client(args.socket, reconnect=False) as c:
        c.watch(classes=["game"], attitude_hz=0)
        started = c.start_round(round_s=args.round_s, deck=args.deck, gestures=args.gestures)
        our_round = started.extra.get("round")
        if not args.json:
            _emit(f"round {our_round} started (deck {started.extra.get('deck')})"
                  + (f": {started['deck_note']}" if "deck_note" in started else ""))
        # The round's clock is sample time; this bounds the wait if samples stop coming.
        deadline = time.monotonic() + (args.round_s or 3600) + 60
        try:
            while True:
                line = c.next_line(timeout=max(deadline - time.monotonic(), 0))
                if not isinstance(line, Game) or line.round not in (our_round, None):
                    continue
                if args.json:
                    _emit(line.to_json())
                elif line.kind in ("prompt", "round_ended", "stopped", "reset") or line.is_decision:
                    _emit(describe(line))
                if line.ends_round:
                    return 0
                if line.kind == "round_started" and line.round_s:
                    deadline = time.monotonic() + line.round_s + 60
        except KeyboardInterrupt:
            try:
                c.stop_round()
            except TiltdError:
                pass
            raise


def main(argv: Optional[List[str]] = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    try:
        return {"watch": watch, "status": status, "play": play}[args.command](args)
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except CommandError as e:
        if e.code == "forbidden":
            print(f"tiltd: {e.message}\n(the daemon's [socket] trusted_uids/trusted_gids decide who may; "
                  "docs/config.md)", file=sys.stderr)
            return EXIT_PERMISSION
        print(f"tiltd: the daemon refused {e.cmd}: {e.code}: {e.message}", file=sys.stderr)
        return EXIT_REFUSED
    except SocketMissing as e:
        print(f"tiltd: {e}", file=sys.stderr)
        return EXIT_NO_DAEMON
    except PermissionDenied as e:
        print(f"tiltd: {e}", file=sys.stderr)
        return EXIT_PERMISSION
    except (ConnectionLost, TiltdError) as e:
        print(f"tiltd: {e}", file=sys.stderr)
        return EXIT_LOST
    except BrokenPipeError:  # `… | head`: the reader left
        return 0


def watch_main(argv: Optional[List[str]] = None) -> int:
    """``tiltd-watch [OPTIONS]``, the console script: ``python3 -m tiltd watch [OPTIONS]``."""
    return main(["watch", *(sys.argv[1:] if argv is None else argv)])
