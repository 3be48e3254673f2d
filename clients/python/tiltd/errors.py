# SPDX-License-Identifier: Apache-2.0
"""Exceptions of the tiltd client. All derive from :class:`TiltdError`."""

from __future__ import annotations

import errno
import grp
import os
import stat
from typing import Optional, Tuple

from .lines import Reply

__all__ = [
    "TiltdError", "ConnectError", "SocketMissing", "PermissionDenied", "ConnectionLost",
    "Timeout", "CommandError", "connect_error",
]

# The group the Debian package and tiltd.socket give the socket (docs: `usermod -aG tiltd`).
DEFAULT_GROUP = "tiltd"


class TiltdError(Exception):
    """Base class of every error this package raises."""


class ConnectError(TiltdError):
    """The socket could not be opened. ``path`` is the socket, ``errno`` the system's code."""

    def __init__(self, message: str, path: str, errno_: Optional[int] = None) -> None:
        super().__init__(message)
        self.path = path
        self.errno = errno_


class SocketMissing(ConnectError):
    """No socket at the path, or nothing listens on it: tiltd is not running there."""


class PermissionDenied(ConnectError):
    """The socket exists but this user may not open it. ``group`` is the group to join."""

    def __init__(self, message: str, path: str, errno_: Optional[int], group: str) -> None:
        super().__init__(message, path, errno_)
        self.group = group


class ConnectionLost(TiltdError):
    """The daemon closed the connection (it stopped or restarted). A command in flight may or
    may not have run; send it again only if it is safe to repeat."""


class Timeout(TiltdError, TimeoutError):
    """A bounded wait ran out: a reply, a line, or reconnecting took too long."""


class CommandError(TiltdError):
    """The daemon refused a command: ``code`` (``round_in_progress``, ``forbidden``, …) and
    ``message`` are its error; ``reply`` the whole reply; ``cmd`` the command."""

    def __init__(self, reply: Reply, cmd: str) -> None:
        self.reply = reply
        self.cmd = cmd
        self.code: str = reply.error_code or "unknown"
        self.message: str = (reply.error or {}).get("message", "")
        super().__init__(f"{cmd}: {self.code}: {self.message}")


def connect_error(path: str, err: OSError) -> ConnectError:
    """The typed error for a failed connect to ``path``, with a message a user can act on."""
    code = err.errno
    if code in (errno.ENOENT, errno.ENOTDIR):
        return SocketMissing(f"no tiltd socket at {path} (is tiltd running? "
                             "`systemctl status tiltd`; another path: --socket or TILTD_SOCKET)", path, code)
    if code == errno.ECONNREFUSED:
        return SocketMissing(f"nothing listens on {path}: tiltd is not running there "
                             "(`systemctl status tiltd`)", path, code)
    if code in (errno.EACCES, errno.EPERM):
        group, detail, group_may_write = _socket_group(path)
        if not group_may_write:
            return PermissionDenied(
                f"permission denied opening {path}{detail}: its mode lets no group in; the daemon's "
                "[socket] mode and group decide who may (docs/config.md)", path, code, group)
        return PermissionDenied(
            f"permission denied opening {path}{detail}: join group {group} "
            f"(sudo usermod -aG {group} $USER), then log in again", path, code, group)
    return ConnectError(f"cannot connect to {path}: {os.strerror(code) if code else err}", path, code)


def _socket_group(path: str) -> Tuple[str, str, bool]:
    """The socket file's group, a '(group …, mode …)' note, and whether that group may connect
    (connecting needs write permission); the packaged default when the file cannot be examined
    (its directory is closed to us)."""
    try:
        st = os.stat(path)
    except OSError:
        return DEFAULT_GROUP, "", True
    try:
        group = grp.getgrgid(st.st_gid).gr_name
    except KeyError:
        group = str(st.st_gid)
    mode = stat.S_IMODE(st.st_mode)
    return group, f" (group {group}, mode {mode:04o})", bool(mode & stat.S_IWGRP)
