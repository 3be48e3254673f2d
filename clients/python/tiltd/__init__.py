# SPDX-License-Identifier: Apache-2.0
"""A client for tiltd, the IMU tilt-game and places daemon (standard library only).

``Client`` is blocking, ``AsyncClient`` is for asyncio; both speak the JSON-lines protocol of
docs/protocol.md on the daemon's Unix socket, match replies to commands by id, and reconnect
when the daemon restarts. Every line arrives as a dataclass of its class (``Attitude``,
``Game``, …). ``python3 -m tiltd`` is a command-line client (watch, status, play).
See docs/clients.md.
"""

from ._core import DEFAULT_SOCKET, socket_path
from .aio import AsyncClient
from .client import Client
from .errors import (CommandError, ConnectError, ConnectionLost, PermissionDenied, SocketMissing,
                     TiltdError, Timeout)
from .lines import (Attitude, Credit, Fix, Gap, Game, Hello, Line, Place, Quest, Reply, Sample,
                    Status, parse_line)

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "DEFAULT_SOCKET", "socket_path",
    "TiltdError", "ConnectError", "SocketMissing", "PermissionDenied", "ConnectionLost", "Timeout",
    "CommandError",
    "Line", "Hello", "Status", "Attitude", "Sample", "Game", "Fix", "Place", "Quest", "Credit",
    "Reply", "Gap", "parse_line",
]
