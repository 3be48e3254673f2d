# SPDX-License-Identifier: Apache-2.0
"""Lines as one readable line of text each, for ``python3 -m tiltd watch`` and ``play``."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

from .lines import (Attitude, Credit, Fix, Game, Gap, Hello, Line, Place, Quest, Reply, Sample, Status,
                    parse_line)

__all__ = ["describe", "describe_source", "describe_status_reply"]


def _num(value: Any, fmt: str = "g", unit: str = "") -> str:
    return "?" if value is None else f"{value:{fmt}}{unit}"


def _secs(ms: Optional[int]) -> str:
    return "?" if ms is None else f"{ms / 1000:.1f} s"


def describe_source(s: Dict[str, Any]) -> str:
    """One source of a hello or status reply: 'imu streaming (replay head.csv, 60 Hz): …'."""
    where = ", ".join(x for x in (s.get("device"), s.get("rate_hz") and f"{s['rate_hz']:g} Hz") if x)
    text = f"{s.get('source')} {s.get('state')}" + (f" ({where})" if where else "")
    return text + (f": {s['message']}" if s.get("message") else "")


def _game(g: Game) -> str:
    left = f"{_secs(g.remaining_ms)} left, score {g.score}"
    if g.kind == "round_started":
        return f"round {g.round} started: {_num(g.round_s)} s, deck {g.deck} ({g.deck_size} prompts)"
    if g.kind == "prompt":
        return f'prompt "{g.prompt}" ({left})'
    if g.is_decision:
        how = f" by {g.gesture}" if g.gesture else f", tilt {_num(g.tilt_deg, '.0f')}°"
        kind = (g.kind or "").upper()
        return f'{kind} "{g.prompt}" after {_secs(g.decision_ms)}{how} ({left})'
    if g.kind in ("round_ended", "stopped"):
        r = g.result or {}
        return (f"round {g.round} {'ended' if g.kind == 'round_ended' else 'stopped'} ({r.get('reason')}): "
                f"score {g.score}, {len(r.get('correct') or [])} correct, {len(r.get('skipped') or [])} skipped")
    if g.kind == "shared":
        return f"shared round in room {g.get('room')}: {g.state}, score {g.score}"
    extra = f" (tilt {_num(g.tilt_deg, '.0f')}°)" if g.tilt_deg is not None else ""
    return f"{g.kind}{extra}" + (f": {g.reason}" if g.reason else "")


def describe(line: Line) -> str:
    """One line, readably: 'game: CORRECT "falafel" after 4.9 s, tilt 38° (24.6 s left, score 1)'."""
    c = line.line_class
    if isinstance(line, Hello):
        who = line.client or {}
        sources = "; ".join(describe_source(s) for s in line.sources or [])
        return (f"hello: tiltd {line.version} (protocol {line.protocol}), you are client {who.get('id')} "
                f"(uid {who.get('uid')}, {'trusted' if line.trusted else 'not trusted'}); {sources}; "
                f"game {(line.game or {}).get('state')}")
    if isinstance(line, Status):
        return f"status: {describe_source(line.raw)}"
    if isinstance(line, Attitude):
        rest = "  at rest" if line.at_rest else ""
        heading = ""
        if line.heading_source is not None:
            shown = [f"{_num(d, '.1f')}° {north}" for d, north in
                     ((line.heading_deg, "magnetic"), (line.true_heading_deg, "true")) if d is not None]
            heading = (f"  heading {' '.join(shown) or '-'} ({line.heading_source}"
                       + (", field disturbed" if line.mag_disturbed else "") + ")")
        return (f"attitude: roll {_num(line.roll_deg, '7.2f')}°  pitch {_num(line.pitch_deg, '7.2f')}°  "
                f"yaw {_num(line.yaw_deg, '7.2f')}°{rest}{heading}")
    if isinstance(line, Sample):
        return f"sample: accel {line.accel} gyro {line.gyro}"
    if isinstance(line, Game):
        return f"game: {_game(line)}"
    if isinstance(line, Fix):
        if line.lat is None:
            return f"fix: mode {line.mode} (no position)"
        return (f"fix: {line.mode}D {line.lat:.6f}, {line.lon:.6f}"
                + (f" ±{line.eph_m:g} m" if line.eph_m is not None else "")
                + (f", {line.speed_mps:g} m/s" if line.speed_mps is not None else ""))
    if isinstance(line, Place):
        what = line.name or line.fence
        return f"place: {line.event} {what or ''}".rstrip() + (
            f" ({line.distance_m:g} m)" if line.distance_m is not None else "")
    if isinstance(line, Quest):
        return f"quest: {line.event} {line.cell_name} ({line.xp} xp, {line.visits} visits)"
    if isinstance(line, Credit):
        at = f" at {line.name}" if line.name else ""
        return f"credit: {line.event} {line.amount}{at}, balance {line.balance}"
    if isinstance(line, Gap):
        return f"gap: {line.dropped} lines lost" + (" (this client's queue)" if line.local else "")
    if isinstance(line, Reply):
        return f"reply: {line.cmd} {'ok' if line.ok else 'refused: ' + str(line.error_code)}"
    return f"{c}: {line.to_json()}"


def describe_status_reply(r: Reply) -> List[str]:
    """The ``status`` reply as a few lines of text (``python3 -m tiltd status``)."""
    game = r.extra.get("game") or {}
    out = [f"tiltd {r.extra.get('version')}: {r.extra.get('clients')} client(s), "
           f"{r.extra.get('samples')} samples at {_num(r.extra.get('sample_rate_hz'))} Hz, "
           f"{r.extra.get('dropped_lines')} lines dropped"]
    out += [f"  {describe_source(s)}" for s in r.extra.get("sources") or []]
    if game.get("state") == "idle":
        last = game.get("last_round") or {}
        out.append("  game: idle" + (f" (last round {last['round']}: score {last.get('score')})" if last else ""))
    else:
        out.append(f"  game: round {game.get('round')} {game.get('state')}, score {game.get('score')}, "
                   f"{_secs(game.get('remaining_ms'))} left, prompt {game.get('prompt')!r}")
    fix = r.extra.get("fix")
    if fix:
        out.append("  " + describe(parse_line({"class": "fix", **fix})))
    out.append(f"  places: {r.extra.get('places')}, inside: {', '.join(map(str, r.extra.get('inside') or [])) or 'none'}"
               + (", snoozing" if r.extra.get("snoozing") else ""))
    return out
