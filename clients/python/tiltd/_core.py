# SPDX-License-Identifier: Apache-2.0
"""What the blocking and the asyncio client share, with no I/O: the socket path, framing, request
ids, matching replies to requests, the bounded queue of events, the reconnect schedule, and the
command helpers. The two clients only move bytes and wait.
"""

from __future__ import annotations

import json
import os
from collections import deque
from typing import Any, Deque, Dict, FrozenSet, Generic, Iterator, List, Optional, Set, Tuple, TypeVar, Union

from .errors import CommandError, ConnectError, ConnectionLost, PermissionDenied, TiltdError, Timeout
from .lines import Gap, Hello, Line, Reply, parse_line

DEFAULT_SOCKET = "/run/tiltd/tiltd.sock"
# Classes the daemon sends whatever a client watches (docs/protocol.md, "watch").
ALWAYS_SENT = frozenset({"hello", "reply", "gap"})

RequestId = Union[int, str]


def socket_path(path: Optional[str] = None) -> str:
    """The socket to use: ``path`` if given, else ``$TILTD_SOCKET``, else /run/tiltd/tiltd.sock."""
    return path or os.environ.get("TILTD_SOCKET") or DEFAULT_SOCKET


def backoff_delays(total_s: float, first_s: float = 0.1, cap_s: float = 5.0) -> Iterator[float]:
    """Waits between reconnect attempts: ``first_s`` doubling up to ``cap_s``, together never
    more than ``total_s``; the iterator ends when the time is used up (the caller gives up)."""
    left, delay = total_s, first_s
    while left > 0:
        step = min(delay, left)
        yield step
        left -= step
        delay = min(delay * 2, cap_s)


class Reconnect:
    """The reconnect schedule both clients follow: attempts with ``backoff_delays`` between them
    until ``timeout_s`` is spent. A permission error ends it at once (waiting does not fix it),
    as does any error that is not about reaching the daemon."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self._delays = backoff_delays(timeout_s)

    def delay_after(self, error: TiltdError) -> float:
        """The wait before the next attempt after ``error``; raises the error to give up with."""
        if isinstance(error, PermissionDenied) or not isinstance(error, (ConnectError, ConnectionLost, Timeout)):
            raise error
        delay = next(self._delays, None)
        if delay is None:
            if isinstance(error, (ConnectionLost, Timeout)):
                raise type(error)(f"gave up reconnecting after {self.timeout_s:g} s: {error}") from None
            raise error
        return delay


class KeepAlive:
    """When to ping a quiet daemon, and when to give it up. A daemon that is killed closes its
    socket, but a stopped or hung one keeps it open and says nothing: after ``interval_s``
    without a line the client sends a ``ping``, and if nothing at all arrives for another
    ``interval_s`` the connection is taken as lost. So no wait for a line is unbounded."""

    def __init__(self, interval_s: float, now: float) -> None:
        self.interval_s = interval_s
        self.received(now)

    def received(self, now: float) -> None:
        """Something arrived: the daemon is alive."""
        self.last_rx = now
        self.ping_sent: Optional[float] = None

    def ping_due(self, now: float) -> bool:
        """Whether to send a ping now (True once per quiet spell)."""
        if self.ping_sent is None and now - self.last_rx >= self.interval_s:
            self.ping_sent = now
            return True
        return False

    def wake_at(self) -> float:
        """When to look again if nothing arrives: the next ping, or the ping's deadline."""
        return (self.last_rx if self.ping_sent is None else self.ping_sent) + self.interval_s

    def dead(self, now: float) -> bool:
        """The ping went unanswered (nothing arrived) for ``interval_s``."""
        return self.ping_sent is not None and now >= self.ping_sent + self.interval_s


class Session:
    """One client's protocol state across its connections.

    ``feed`` takes bytes from the socket and sorts the lines: a reply someone waits for is kept
    under its id until taken; replies the client sent for itself (keep-alive pings, the watch
    re-sent after a reconnect) are consumed here; everything else goes to the event queue, which
    holds at most ``queue_lines`` lines — past that the oldest are dropped and the reader gets a
    local :class:`Gap` first, as the daemon does for a slow client. Without the bound a program
    that only sends commands would keep every attitude line it never reads.
    """

    def __init__(self, queue_lines: int = 1024) -> None:
        self.queue_lines = queue_lines
        self.hello: Optional[Hello] = None
        # The watch settings in force, as the daemon's last watch reply echoed them; sent again
        # after a reconnect, since a new connection starts with the default stream.
        self.watch_settings: Optional[Dict[str, Any]] = None
        self._buffer = bytearray()
        self._next_id = 1
        self._awaited: Dict[RequestId, str] = {}  # id → command name, until its reply is taken
        self._internal: Set[RequestId] = set()
        self._replies: Dict[RequestId, Reply] = {}
        self._events: Deque[Line] = deque()
        self._dropped = 0
        # Between a reconnect and the reply to the re-sent watch the daemon still sends the
        # default stream; lines of classes not watched are dropped meanwhile.
        self._resubscribing: Optional[FrozenSet[str]] = None

    # ---- requests ----------------------------------------------------------------------------
    def request(self, cmd: str, args: Dict[str, Any], internal: bool = False) -> Tuple[RequestId, bytes]:
        """A new request: its id and the bytes to send. Arguments that are None are left out."""
        rid = self._next_id
        self._next_id += 1
        body: Dict[str, Any] = {"cmd": cmd, "id": rid}
        body.update({k: v for k, v in args.items() if v is not None})
        if internal:
            self._internal.add(rid)
        else:
            self._awaited[rid] = cmd
        return rid, (json.dumps(body, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    def take_reply(self, rid: RequestId) -> Optional[Reply]:
        """The reply to ``rid`` if it has arrived (then forgotten), else None. Raises
        :class:`CommandError` when the daemon refused the command."""
        reply = self._replies.pop(rid, None)
        if reply is None:
            return None
        cmd = self._awaited.pop(rid, None) or reply.cmd or "?"
        if reply.ok is False:
            raise CommandError(reply, cmd)
        return reply

    def forget(self, rid: RequestId) -> None:
        """Nobody waits for ``rid`` any more (a timeout): its reply, if it comes, is dropped."""
        self._awaited.pop(rid, None)
        self._replies.pop(rid, None)

    def awaited(self) -> List[RequestId]:
        """Ids sent whose replies have not been taken."""
        return list(self._awaited)

    def start_connection(self) -> Optional[bytes]:
        """A connection was opened: its hello is awaited (``hello`` is None until it comes), and
        the bytes to send first are returned (``resubscribe``), or None."""
        self.hello = None
        return self.resubscribe()

    def resubscribe(self) -> Optional[bytes]:
        """After a reconnect: the watch request that restores this client's settings, or None."""
        if not self.watch_settings:
            return None
        classes = set(self.watch_settings.get("classes") or ())
        self._resubscribing = frozenset(classes | ALWAYS_SENT)
        return self.request("watch", self.watch_settings, internal=True)[1]

    # ---- incoming ----------------------------------------------------------------------------
    def new_connection(self) -> List[RequestId]:
        """A connection ended: the partial line is dropped, and the ids still awaited are
        returned (their replies will never come) and forgotten."""
        self._buffer.clear()
        self._internal.clear()
        self._resubscribing = None
        lost = [rid for rid in self._awaited if rid not in self._replies]
        for rid in lost:
            del self._awaited[rid]
        return lost

    def feed(self, data: bytes) -> None:
        """Bytes from the socket. Raises TiltdError on a line that is not a tiltd line."""
        self._buffer += data
        while True:
            end = self._buffer.find(b"\n")
            if end < 0:
                return
            raw = bytes(self._buffer[:end]).rstrip(b"\r")
            del self._buffer[: end + 1]
            if raw.strip():
                try:
                    line = parse_line(raw)
                except ValueError as e:  # also bad UTF-8 and bad JSON
                    raise TiltdError(f"the daemon sent a line this client cannot read: {e}") from None
                self._sort(line)

    def _sort(self, line: Line) -> None:
        if isinstance(line, Hello):
            self.hello = line
        if isinstance(line, Reply) and line.id is not None:
            if line.cmd == "watch" and line.ok and (line.id in self._awaited or line.id in self._internal):
                self.watch_settings = line.extra.get("watch")
                # Lines queued before the daemon applied the watch follow the old settings; drop
                # those of classes no longer watched, so that after watch() returns the stream is
                # what was asked for.
                wanted = set((self.watch_settings or {}).get("classes") or ()) | ALWAYS_SENT
                self._events = deque(e for e in self._events if e.line_class in wanted)
            if line.id in self._internal:
                self._internal.discard(line.id)
                if line.cmd == "watch":
                    self._resubscribing = None
                return
            if line.id in self._awaited:
                self._replies[line.id] = line
                return
        if self._resubscribing is not None and line.line_class not in self._resubscribing:
            return
        if len(self._events) >= self.queue_lines:
            self._events.popleft()
            self._dropped += 1
        self._events.append(line)

    def pop_event(self) -> Optional[Line]:
        """The next event in order, a local Gap first if some were dropped; None when empty."""
        if self._dropped:
            gap = Gap(line_class="gap", dropped=self._dropped, local=True,
                      raw={"class": "gap", "dropped": self._dropped, "local": True})
            self._dropped = 0
            return gap
        return self._events.popleft() if self._events else None

    def has_event(self) -> bool:
        """Whether ``pop_event`` would return a line."""
        return bool(self._events) or self._dropped > 0


# What a command method returns: a Reply (Client), an awaitable of one (AsyncClient).
R = TypeVar("R")


class Commands(Generic[R]):
    """The commands of docs/protocol.md as methods. Each sends the command with a fresh id and
    returns its :class:`Reply` (on :class:`AsyncClient`: an awaitable of it), raising
    :class:`CommandError` when the daemon refuses it. Arguments left as None are not sent, so
    the daemon's defaults apply. Events a command causes come after its reply, in ``lines()``.
    """

    def _configure(self, socket: Optional[str], reconnect: bool, connect_timeout: float, reply_timeout: float,
                   reconnect_timeout: float, keepalive_s: float, queue_lines: int, now: float) -> None:
        """The settings both clients take (see :class:`tiltd.Client`) and their protocol state."""
        self.path = socket_path(socket)
        self.reconnect = reconnect
        self.connect_timeout = connect_timeout
        self.reply_timeout = reply_timeout
        self.reconnect_timeout = reconnect_timeout
        self.keepalive_s = keepalive_s
        self._session = Session(queue_lines)
        self._alive = KeepAlive(keepalive_s, now)

    @property
    def hello(self) -> Optional[Hello]:
        """The latest connection's hello (sources, game state, fix, watch), or None."""
        return self._session.hello

    def command(self, cmd: str, *, timeout: Optional[float] = None, **args: Any) -> R:  # pragma: no cover
        raise NotImplementedError

    def ping(self) -> R:
        """Is the daemon alive: reply ``pong``."""
        return self.command("ping")

    def help(self, command: Optional[str] = None) -> R:
        """The command catalogue (``commands``), or one command's entry."""
        return self.command("help", command=command)

    def status(self) -> R:
        """The daemon's state: ``version``, ``sources``, ``game``, ``fix``, ``places``, …"""
        return self.command("status")

    def stats(self) -> R:
        """Counters since the daemon started (``uptime_s``, ``samples``, ``decisions``, …)."""
        return self.command("stats")

    def watch(self, classes: Optional[List[str]] = None, attitude_hz: Optional[float] = None,
              samples: Optional[bool] = None) -> R:
        """Change what this client receives; omitted settings keep their value. The reply's
        ``watch`` is what is in force; it is restored by itself after a reconnect. Lines of
        classes no longer watched that arrived before the reply are dropped from ``lines()``."""
        return self.command("watch", classes=classes, attitude_hz=attitude_hz, samples=samples)

    def start_round(self, round_s: Optional[float] = None, deck: Optional[str] = None,
                    gestures: Optional[str] = None) -> R:
        """``game.start``: start a round (``deck`` "nearby" or a deck file; ``gestures`` "tilt"
        or "nod"). Needs a trusted connection."""
        return self.command("game.start", round_s=round_s, deck=deck, gestures=gestures)

    def stop_round(self) -> R:
        """``game.stop``: end the running round early (it is stored)."""
        return self.command("game.stop")

    def reset_game(self) -> R:
        """``game.reset``: drop any running round (not stored), the neutral pose, last_round."""
        return self.command("game.reset")

    def capture_neutral(self) -> R:
        """``game.neutral``: take the current head pose as neutral; reply ``captured``."""
        return self.command("game.neutral")

    def history(self, n: Optional[int] = None) -> R:
        """The last ``n`` finished rounds (``rounds``), newest first."""
        return self.command("history", n=n)

    def snooze(self, distance_m: Optional[float] = None) -> R:
        """Stop fix and place events until the wearer has moved ``distance_m``."""
        return self.command("snooze", distance_m=distance_m)

    def credits(self) -> R:
        """The credit ``balance`` and the credits earned per place (``places``)."""
        return self.command("credits")

    def redeem(self, amount: Optional[int] = None, request_id: Optional[str] = None) -> R:
        """``credits.redeem``: spend credits, once per ``request_id`` (safe to retry)."""
        return self.command("credits.redeem", amount=amount, request_id=request_id)

    def complete_quest(self, cell: Optional[str] = None) -> R:
        """``quest.complete``: complete the quest of the wearer's cell."""
        return self.command("quest.complete", cell=cell)

    def reload(self) -> R:
        """Re-read the daemon's config file; all of it applies, or nothing."""
        return self.command("reload")
