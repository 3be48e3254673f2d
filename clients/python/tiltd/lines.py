# SPDX-License-Identifier: Apache-2.0
"""The lines the daemon sends, one dataclass per line class (docs/protocol.md, "Events").

Every class keeps what it does not know: fields a newer daemon adds land in ``extra``, and a
line of a class this module has never heard of is parsed as a plain :class:`Line`, so a client
written against protocol 1 keeps working when the daemon grows. ``raw`` is always the whole
object as received.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, Dict, FrozenSet, List, Optional, Tuple, Type, Union

__all__ = [
    "Line", "Hello", "Status", "Attitude", "Sample", "Game", "Fix", "Place", "Quest", "Credit",
    "Reply", "Gap", "parse_line", "LINE_CLASSES",
]


@dataclass
class Line:
    """A line of any class. Subclasses add the documented fields of their class.

    ``line_class`` is the line's ``class`` (a Python keyword, hence the name), ``seq`` the
    daemon's line counter, ``t_ns`` the sample or GPS time it belongs to (absent → None).
    """

    line_class: str
    seq: Optional[int] = None
    t_ns: Optional[int] = None
    extra: Dict[str, Any] = field(default_factory=dict, repr=False)
    raw: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    CLASS: ClassVar[str] = ""

    def get(self, name: str, default: Any = None) -> Any:
        """Any field of the line by its wire name, known or not (``line.get("class")``)."""
        return self.raw.get(name, default)

    def to_json(self) -> str:
        """The line as compact JSON, as the daemon sent it (field order kept)."""
        return json.dumps(self.raw, ensure_ascii=False, separators=(",", ":"))


@dataclass
class Hello(Line):
    """The first line of every connection: versions, who you are, sources, game state, fix."""

    CLASS: ClassVar[str] = "hello"
    version: Optional[str] = None
    protocol: Optional[int] = None
    client: Optional[Dict[str, Any]] = None
    sources: Optional[List[Dict[str, Any]]] = None
    game: Optional[Dict[str, Any]] = None
    fix: Optional[Dict[str, Any]] = None
    watch: Optional[Dict[str, Any]] = None

    @property
    def trusted(self) -> bool:
        """Whether the daemon lets this connection send commands that change state."""
        return bool((self.client or {}).get("trusted"))


@dataclass
class Status(Line):
    """A source (``imu``, ``magnetometer``, ``gps``), the store, the game or the config changed
    state."""

    CLASS: ClassVar[str] = "status"
    source: Optional[str] = None
    state: Optional[str] = None
    message: Optional[str] = None
    device: Optional[str] = None
    rate_hz: Optional[float] = None
    retry_in_s: Optional[float] = None
    step_ns: Optional[int] = None
    gyroscope: Optional[bool] = None


@dataclass
class Attitude(Line):
    """Orientation: quaternion ``q`` = [w, x, y, z] (sensor → z-up world) and Euler angles; and
    the heading, where the wearer faces (degrees clockwise from north, 0–360).

    ``heading_source`` is ``"mag"`` (the magnetometer), ``"course"`` (the GPS course while moving)
    or ``"none"``; None from a daemon that predates headings. ``heading_deg`` is from magnetic
    north, ``true_heading_deg`` from true north (the World Magnetic Model's declination at the
    latest fix); either is None when unknown. ``mag_disturbed`` is None without a magnetometer.
    """

    CLASS: ClassVar[str] = "attitude"
    q: Optional[List[float]] = None
    roll_deg: Optional[float] = None
    pitch_deg: Optional[float] = None
    yaw_deg: Optional[float] = None
    at_rest: Optional[bool] = None
    gyro_bias: Optional[List[float]] = None
    heading_deg: Optional[float] = None
    true_heading_deg: Optional[float] = None
    heading_source: Optional[str] = None
    mag_disturbed: Optional[bool] = None


@dataclass
class Sample(Line):
    """A calibrated IMU sample (m/s², rad/s); only after ``watch(samples=True)``."""

    CLASS: ClassVar[str] = "sample"
    accel: Optional[List[float]] = None
    gyro: Optional[List[float]] = None


# Kinds that end a round, and the two decisions (docs/protocol.md, "game").
ROUND_END_KINDS = ("round_ended", "stopped", "reset")
DECISION_KINDS = ("correct", "skip")


@dataclass
class Game(Line):
    """A change of the game: ``kind`` says which (``prompt``, ``correct``, ``round_ended``, …)."""

    CLASS: ClassVar[str] = "game"
    kind: Optional[str] = None
    round: Optional[int] = None
    state: Optional[str] = None
    remaining_ms: Optional[int] = None
    score: Optional[int] = None
    prompt: Optional[str] = None
    round_s: Optional[float] = None
    deck: Optional[str] = None
    deck_size: Optional[int] = None
    tilt_deg: Optional[float] = None
    decision_ms: Optional[int] = None
    gesture: Optional[str] = None
    reason: Optional[str] = None
    result: Optional[Dict[str, Any]] = None
    #: The head frame in use (``source``: ``calibrated``, ``learned``, …), on ``head_frame`` lines.
    orientation: Optional[Dict[str, Any]] = None

    @property
    def is_decision(self) -> bool:
        """A prompt was answered: ``kind`` is ``correct`` or ``skip``."""
        return self.kind in DECISION_KINDS

    @property
    def ends_round(self) -> bool:
        """The round is over: ended by its clock or deck, stopped, or reset."""
        return self.kind in ROUND_END_KINDS


@dataclass
class Fix(Line):
    """A GPS report; ``mode`` 0 unknown, 1 no fix, 2 2D, 3 3D."""

    CLASS: ClassVar[str] = "fix"
    mode: Optional[int] = None
    time_ns: Optional[int] = None
    lat: Optional[float] = None
    lon: Optional[float] = None
    alt_m: Optional[float] = None
    speed_mps: Optional[float] = None
    track_deg: Optional[float] = None
    eph_m: Optional[float] = None
    epv_m: Optional[float] = None
    clock_offset_s: Optional[float] = None


@dataclass
class Place(Line):
    """A geofence event (``enter``, ``exit``, ``dwell``) or a snooze notice (``snoozed``, ``woke``)."""

    CLASS: ClassVar[str] = "place"
    event: Optional[str] = None
    fence: Optional[str] = None
    name: Optional[str] = None
    category: Optional[str] = None
    distance_m: Optional[float] = None
    entered_ns: Optional[int] = None
    dwell_s: Optional[float] = None
    until_moved_m: Optional[float] = None  # snoozed
    moved_m: Optional[float] = None  # woke
    snoozed_ns: Optional[int] = None  # woke
    lat: Optional[float] = None  # snoozed: where
    lon: Optional[float] = None


@dataclass
class Quest(Line):
    """A quest cell became ``available`` or was ``completed``."""

    CLASS: ClassVar[str] = "quest"
    event: Optional[str] = None
    cell: Optional[int] = None
    cell_name: Optional[str] = None
    lat: Optional[float] = None
    lon: Optional[float] = None
    visits: Optional[int] = None
    xp: Optional[int] = None
    cooldown_until_ns: Optional[int] = None


@dataclass
class Credit(Line):
    """A credit was ``earned`` (a dwell at a place) or ``redeemed``; ``balance`` after it."""

    CLASS: ClassVar[str] = "credit"
    event: Optional[str] = None
    fence: Optional[str] = None
    name: Optional[str] = None
    amount: Optional[int] = None
    request_id: Optional[str] = None
    balance: Optional[int] = None


@dataclass
class Reply(Line):
    """The answer to one command. The command's result fields are in ``extra``; ``reply["x"]``
    reads one. A refusal has ``ok`` false and ``error`` = {"code", "message"}."""

    CLASS: ClassVar[str] = "reply"
    id: Union[int, str, None] = None
    cmd: Optional[str] = None
    ok: Optional[bool] = None
    error: Optional[Dict[str, Any]] = None

    def __getitem__(self, name: str) -> Any:
        return self.extra[name]

    def __contains__(self, name: str) -> bool:
        return name in self.extra

    @property
    def error_code(self) -> Optional[str]:
        """The refusal's code (``round_in_progress``, ``forbidden``, …), or None."""
        return (self.error or {}).get("code")


@dataclass
class Gap(Line):
    """This client fell behind and lost ``dropped`` lines (its oldest queued ones).

    ``local`` is True when the lines were dropped by this client's own queue (events nobody
    read while waiting for replies), not by the daemon's.
    """

    CLASS: ClassVar[str] = "gap"
    dropped: Optional[int] = None
    local: bool = False


_LINE_TYPES: Tuple[Type[Line], ...] = (Hello, Status, Attitude, Sample, Game, Fix, Place, Quest, Credit, Reply, Gap)
LINE_CLASSES: Dict[str, Type[Line]] = {c.CLASS: c for c in _LINE_TYPES}
# The wire names each dataclass takes from the object (everything but our own bookkeeping).
_OWN = {"line_class", "extra", "raw", "local"}
_FIELDS: Dict[Type[Line], FrozenSet[str]] = {
    c: frozenset(f.name for f in dataclasses.fields(c) if f.name not in _OWN)
    for c in list(LINE_CLASSES.values()) + [Line]
}


def parse_line(line: Union[str, bytes, Dict[str, Any]]) -> Line:
    """Parse one line (text, bytes or an already decoded object) into its dataclass.

    Raises ValueError for a line that is not a JSON object with a string ``class``.
    """
    obj = json.loads(line) if isinstance(line, (str, bytes, bytearray)) else line
    if not isinstance(obj, dict) or not isinstance(obj.get("class"), str):
        raise ValueError(f"not a tiltd line (a JSON object with a class): {str(line)[:200]}")
    cls = LINE_CLASSES.get(obj["class"], Line)
    known = _FIELDS[cls]
    kwargs = {k: v for k, v in obj.items() if k in known}
    extra = {k: v for k, v in obj.items() if k not in known and k != "class"}
    return cls(line_class=obj["class"], extra=extra, raw=obj, **kwargs)
