# SPDX-License-Identifier: Apache-2.0
"""The asyncio client: the same API as :class:`tiltd.Client`, with ``await``.

    import asyncio, tiltd

    async def main():
        async with tiltd.AsyncClient() as c:
            await c.start_round(round_s=30)
            async for line in c.lines():
                print(line)

    asyncio.run(main())

A task reads the socket all the time and sorts what arrives (replies to the commands waiting
for them, events to ``lines()``), so one task may iterate ``lines()`` while others send
commands. The same task reconnects with backoff when the daemon goes away.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Optional, TypeVar

from ._core import Commands, Reconnect, RequestId
from .errors import ConnectionLost, TiltdError, Timeout, connect_error
from .lines import Hello, Line, Reply

__all__ = ["AsyncClient"]
T = TypeVar("T")


class AsyncClient(Commands[Awaitable[Reply]]):
    """An asyncio connection to tiltd. The arguments mean what they mean for
    :class:`tiltd.Client`; the command methods (``status()``, ``start_round()``, …) are
    coroutines here. Use it from one event loop."""

    def __init__(self, socket: Optional[str] = None, *, reconnect: bool = True,
                 connect_timeout: float = 10.0, reply_timeout: float = 10.0,
                 reconnect_timeout: float = 60.0, keepalive_s: float = 15.0, queue_lines: int = 1024) -> None:
        self._configure(socket, reconnect, connect_timeout, reply_timeout, reconnect_timeout, keepalive_s,
                        queue_lines, time.monotonic())
        self._reader: Optional[asyncio.StreamReader] = None
        self._writer: Optional[asyncio.StreamWriter] = None
        self._task: Optional[asyncio.Task[None]] = None
        # Made in connect(): on Python 3.9 an asyncio primitive binds to the loop it is made in.
        self._cond: Optional[asyncio.Condition] = None
        # Why the client stopped for good (reconnecting gave up, closed); raised to every waiter.
        self._failure: Optional[TiltdError] = None
        # Requests in flight when a connection was lost: their waiters raise ConnectionLost.
        self._lost: Dict[RequestId, ConnectionLost] = {}

    @property
    def connected(self) -> bool:
        """Whether a connection is open."""
        return self._writer is not None

    # ---- connection --------------------------------------------------------------------------
    async def connect(self) -> Hello:
        """Open the socket, read the hello (also the first line of ``lines()``) and start the
        reading task. Raises :class:`SocketMissing`, :class:`PermissionDenied`,
        :class:`ConnectError` or :class:`Timeout`."""
        await self.close()
        self._cond = asyncio.Condition()
        self._failure = None
        await self._open()
        self._task = asyncio.ensure_future(self._run())
        assert self._session.hello is not None
        return self._session.hello

    async def close(self) -> None:
        """Stop reading and close the connection; waiters get :class:`ConnectionLost`."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        self._drop_connection()
        if self._cond is not None:
            self._failure = ConnectionLost(f"the client closed its connection to {self.path}")
            await self._notify()

    async def __aenter__(self) -> "AsyncClient":
        if self._writer is None:
            await self.connect()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def _open(self) -> None:
        """Connect and read up to the hello; the reading task takes over from there."""
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(self.path),
                                                    self.connect_timeout)
        except asyncio.TimeoutError:
            raise Timeout(f"connecting to {self.path} took over {self.connect_timeout} s") from None
        except OSError as e:
            raise connect_error(self.path, e) from None
        again = self._session.start_connection()
        if again:
            writer.write(again)
        deadline = time.monotonic() + self.connect_timeout
        try:
            while self._session.hello is None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Timeout(f"no hello from {self.path} in {self.connect_timeout} s")
                try:
                    data = await asyncio.wait_for(reader.read(65536), left)
                except asyncio.TimeoutError:
                    continue
                except OSError as e:
                    raise ConnectionLost(f"lost the connection to {self.path}: {e}") from None
                if not data:
                    raise ConnectionLost(f"{self.path} closed the connection before its hello")
                self._session.feed(data)
        except BaseException:
            writer.close()
            self._session.new_connection()
            raise
        self._reader, self._writer = reader, writer
        self._alive.received(time.monotonic())
        await self._notify()

    def _drop_connection(self) -> None:
        if self._writer is not None:
            self._writer.close()
        self._reader = self._writer = None
        for rid in self._session.new_connection():
            self._lost[rid] = ConnectionLost(f"lost the connection to {self.path} before the reply")

    async def _notify(self) -> None:
        assert self._cond is not None
        async with self._cond:
            self._cond.notify_all()

    async def _run(self) -> None:
        """The reading task. Whatever ends it is passed to every waiter, so none waits for a
        task that is gone."""
        try:
            await self._read_and_reconnect()
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a bug here must not leave waiters hanging until their timeouts
            self._drop_connection()
            self._failure = TiltdError(f"the client's reading task failed: {e!r}")
            await self._notify()

    async def _read_and_reconnect(self) -> None:
        """Read until the connection is lost, then reconnect or give up."""
        while True:
            try:
                await self._read_until_lost()
            except ConnectionLost as e:
                lost: TiltdError = e
            except TiltdError as e:  # a line that is not a tiltd line: not worth reconnecting for
                lost = e
                self.reconnect = False
            self._drop_connection()
            await self._notify()
            if not self.reconnect:
                self._failure = lost
                await self._notify()
                return
            try:
                await self._reconnect()
            except TiltdError as e:
                self._failure = e
                await self._notify()
                return

    async def _read_until_lost(self) -> None:
        assert self._reader is not None and self._writer is not None
        while True:
            now = time.monotonic()
            if self._alive.ping_due(now):
                self._writer.write(self._session.request("ping", {}, internal=True)[1])
            try:
                data = await asyncio.wait_for(self._reader.read(65536), max(self._alive.wake_at() - now, 0.001))
            except asyncio.TimeoutError:
                if self._alive.dead(time.monotonic()):
                    raise ConnectionLost(f"no answer to a keep-alive ping in {self.keepalive_s:g} s") from None
                continue
            except OSError as e:
                raise ConnectionLost(f"lost the connection to {self.path}: {e}") from None
            if not data:
                raise ConnectionLost(f"lost the connection to {self.path}: the daemon closed it")
            self._alive.received(time.monotonic())
            self._session.feed(data)
            await self._notify()

    async def _reconnect(self) -> None:
        """Connect again with backoff (``Reconnect``, as :class:`tiltd.Client`)."""
        schedule = Reconnect(self.reconnect_timeout)
        while True:
            try:
                return await self._open()
            except TiltdError as e:
                delay = schedule.delay_after(e)
            await asyncio.sleep(delay)  # the backoff itself

    async def _wait(self, ready: Callable[[], Optional[T]], timeout: Optional[float], what: str) -> T:
        """Wait until ``ready()`` returns something, at most ``timeout`` s (None: no limit; the
        keep-alive still bounds a silent daemon). Raises the client's failure, or Timeout."""
        if self._cond is None:
            await self.connect()
        assert self._cond is not None
        deadline = None if timeout is None else time.monotonic() + timeout
        async with self._cond:
            while True:
                value = ready()
                if value is not None:
                    return value
                if self._failure is not None:
                    raise self._failure
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise Timeout(f"waited too long for {what}")
                try:
                    await asyncio.wait_for(self._cond.wait(), left)
                except asyncio.TimeoutError:
                    raise Timeout(f"waited too long for {what}") from None

    # ---- commands ----------------------------------------------------------------------------
    async def send(self, cmd: str, **args: Any) -> RequestId:
        """Send a command without waiting for its reply; returns its id for :meth:`reply`.
        While the client reconnects it waits for the connection (at most ``reconnect_timeout``)."""
        writer = await self._wait(lambda: self._writer, self.reconnect_timeout + self.connect_timeout,
                                  "a connection to the daemon")
        rid, data = self._session.request(cmd, args)
        try:
            writer.write(data)
            await writer.drain()
        except OSError as e:
            self._session.forget(rid)
            raise ConnectionLost(f"lost the connection to {self.path}: {e}") from None
        return rid

    async def reply(self, rid: RequestId, timeout: Optional[float] = None) -> Reply:
        """Wait for the reply to ``rid`` (at most ``timeout``, default ``reply_timeout``).
        Raises :class:`CommandError`, :class:`Timeout` or :class:`ConnectionLost`."""
        def ready() -> Optional[Reply]:
            if rid in self._lost:
                raise self._lost.pop(rid)
            return self._session.take_reply(rid)

        try:
            return await self._wait(ready, self.reply_timeout if timeout is None else timeout,
                                    f"the reply to request {rid}")
        except (Timeout, ConnectionLost):
            self._session.forget(rid)
            raise

    async def command(self, cmd: str, *, timeout: Optional[float] = None, **args: Any) -> Reply:
        """Send ``cmd`` with ``args`` and wait for its reply (see :meth:`reply`)."""
        return await self.reply(await self.send(cmd, **args), timeout)

    # ---- events ------------------------------------------------------------------------------
    async def next_line(self, timeout: Optional[float] = None) -> Line:
        """The next line that is not a reply to this client's commands (see
        :meth:`tiltd.Client.next_line`)."""
        return await self._wait(self._session.pop_event, timeout, "the next line")

    async def lines(self, timeout: Optional[float] = None) -> AsyncIterator[Line]:
        """Every line in order, for ever; after a reconnect the new daemon's hello comes next."""
        while True:
            yield await self.next_line(timeout)
