# SPDX-License-Identifier: Apache-2.0
"""The blocking client: one socket, no threads. Use it from one thread.

    import tiltd
    with tiltd.Client() as c:          # /run/tiltd/tiltd.sock, or $TILTD_SOCKET
        print(c.status()["game"]["state"])
        for line in c.lines():
            print(line)
"""

from __future__ import annotations

import socket
import time
from socket import socket as _Socket
from typing import Any, Iterator, Optional

from ._core import Commands, Reconnect, RequestId
from .errors import ConnectionLost, TiltdError, Timeout, connect_error
from .lines import Hello, Line, Reply

__all__ = ["Client"]


class Client(Commands[Reply]):
    """A blocking connection to tiltd.

    ``socket``: the socket path (default ``$TILTD_SOCKET``, else /run/tiltd/tiltd.sock).
    ``reconnect``: when the daemon goes away, ``lines()`` reconnects by itself (backoff 0.1 s
    doubling to 5 s, giving up after ``reconnect_timeout`` s), restores the ``watch`` settings and
    goes on with the new daemon's ``hello``; a command in flight raises :class:`ConnectionLost`
    and the next command reconnects first. ``connect_timeout`` bounds a connect and its hello,
    ``reply_timeout`` each command's wait for its reply. ``keepalive_s``: after that long
    without a line the client pings the daemon, and a daemon that then stays silent as long
    again is taken as gone (a stopped process keeps its socket open). ``queue_lines``: events
    kept while a command waits for its reply (past that the oldest go, see :class:`Gap`).
    """

    def __init__(self, socket: Optional[str] = None, *, reconnect: bool = True,
                 connect_timeout: float = 10.0, reply_timeout: float = 10.0,
                 reconnect_timeout: float = 60.0, keepalive_s: float = 15.0, queue_lines: int = 1024) -> None:
        self._configure(socket, reconnect, connect_timeout, reply_timeout, reconnect_timeout, keepalive_s,
                        queue_lines, time.monotonic())
        self._sock: Optional[_Socket] = None

    # ---- connection --------------------------------------------------------------------------
    @property
    def connected(self) -> bool:
        """Whether a connection is open."""
        return self._sock is not None

    def connect(self) -> Hello:
        """Open the socket and read the daemon's hello (also the first line of ``lines()``).
        Raises :class:`SocketMissing`, :class:`PermissionDenied`, :class:`ConnectError` or
        :class:`Timeout`."""
        self.close()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.connect_timeout)
        try:
            sock.connect(self.path)
        except OSError as e:
            sock.close()
            if isinstance(e, socket.timeout):
                raise Timeout(f"connecting to {self.path} took over {self.connect_timeout} s") from None
            raise connect_error(self.path, e) from None
        self._sock = sock
        self._alive.received(time.monotonic())
        again = self._session.start_connection()
        if again:
            self._send_bytes(again)
        deadline = time.monotonic() + self.connect_timeout
        try:
            while self._session.hello is None:
                self._read(deadline, what="the daemon's hello")
        except Timeout:
            self.close()
            raise
        return self._session.hello

    def close(self) -> None:
        """Close the connection (replies still awaited are lost). Safe to call twice."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None
            self._session.new_connection()

    def __enter__(self) -> "Client":
        if self._sock is None:
            self.connect()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _reconnect(self) -> Hello:
        """Connect again with backoff (``Reconnect``); raises the last error when
        ``reconnect_timeout`` is spent. Permission errors are raised at once."""
        schedule = Reconnect(self.reconnect_timeout)
        while True:
            try:
                return self.connect()
            except TiltdError as e:
                delay = schedule.delay_after(e)
            time.sleep(delay)  # the backoff itself: nothing to wait on but time

    def _ensure_connected(self) -> None:
        if self._sock is None:
            if not self.reconnect and self._session.hello is not None:
                raise ConnectionLost(f"the connection to {self.path} is closed")
            if self._session.hello is None:
                self.connect()  # the first connection: its errors are the caller's at once
            else:
                self._reconnect()

    # ---- bytes -------------------------------------------------------------------------------
    def _lost(self, why: str) -> ConnectionLost:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._session.new_connection()
        return ConnectionLost(f"lost the connection to {self.path}: {why}")

    def _send_bytes(self, data: bytes) -> None:
        assert self._sock is not None
        try:
            self._sock.settimeout(self.reply_timeout)
            self._sock.sendall(data)
        except OSError as e:
            raise self._lost(f"sending: {e}") from None

    def _read(self, deadline: Optional[float], what: str) -> None:
        """Read once from the socket into the session, waiting at most until ``deadline``
        (None: as long as the keep-alive finds the daemon alive). Raises Timeout at the
        deadline and ConnectionLost when the daemon is gone."""
        if self._sock is None:
            raise ConnectionLost(f"not connected to {self.path}")
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            raise Timeout(f"waited too long for {what}")
        if self._alive.ping_due(now):
            self._send_bytes(self._session.request("ping", {}, internal=True)[1])
        wake = self._alive.wake_at() if deadline is None else min(self._alive.wake_at(), deadline)
        self._sock.settimeout(max(wake - now, 0.001))
        try:
            data = self._sock.recv(65536)
        except socket.timeout:
            if self._alive.dead(time.monotonic()):
                raise self._lost(f"no answer to a keep-alive ping in {self.keepalive_s:g} s") from None
            return
        except OSError as e:
            raise self._lost(str(e)) from None
        if not data:
            raise self._lost("the daemon closed it")
        self._alive.received(time.monotonic())
        self._session.feed(data)

    # ---- commands ----------------------------------------------------------------------------
    def send(self, cmd: str, **args: Any) -> RequestId:
        """Send a command without waiting; returns its id for :meth:`reply`. Lets several
        commands be in flight at once (their replies may come in another order)."""
        self._ensure_connected()
        rid, data = self._session.request(cmd, args)
        self._send_bytes(data)
        return rid

    def reply(self, rid: RequestId, timeout: Optional[float] = None) -> Reply:
        """Wait for the reply to ``rid`` (at most ``timeout``, default ``reply_timeout``).
        Events that arrive meanwhile are kept for ``lines()``. Raises :class:`CommandError` when
        the daemon refused the command, :class:`Timeout`, or :class:`ConnectionLost`."""
        deadline = time.monotonic() + (self.reply_timeout if timeout is None else timeout)
        try:
            while True:
                reply = self._session.take_reply(rid)
                if reply is not None:
                    return reply
                self._read(deadline, what=f"the reply to request {rid}")
        except (Timeout, ConnectionLost):
            self._session.forget(rid)
            raise

    def command(self, cmd: str, *, timeout: Optional[float] = None, **args: Any) -> Reply:
        """Send ``cmd`` with ``args`` and wait for its reply (see :meth:`reply`)."""
        return self.reply(self.send(cmd, **args), timeout)

    # ---- events ------------------------------------------------------------------------------
    def next_line(self, timeout: Optional[float] = None) -> Line:
        """The next line that is not a reply to this client's commands: hello, attitude, game, …
        Waits at most ``timeout`` s (None: until one comes; the keep-alive still notices a
        daemon that is gone). Reconnects when the connection is lost and ``reconnect`` is set."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            line = self._session.pop_event()
            if line is not None:
                return line
            try:
                self._ensure_connected()
                self._read(deadline, what="the next line")
            except ConnectionLost:
                if not self.reconnect:
                    raise

    def lines(self, timeout: Optional[float] = None) -> Iterator[Line]:
        """Every line in order, for ever (``timeout``: the longest wait for one line). After a
        reconnect the stream goes on with the new daemon's hello."""
        while True:
            yield self.next_line(timeout)
