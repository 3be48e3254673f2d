# SPDX-License-Identifier: Apache-2.0
"""What scripts/kernel/analyze and its magnetometer checks (analyze_mag.py) both read: the
guest's key=value and `name: value` files, the client's JSON lines, the recording, and angle
arithmetic. Test tooling only."""
import json
import math
import os

# Share of delivered axis values that must equal the recording's (analyze's SAMPLE_MATCH note).
SAMPLE_MATCH = 0.99
# Seconds from a device's return to streaming again.
RECOVERY_S = 5.0


def kv_file(path):
    out = {}
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            for word in line.split():
                if "=" in word:
                    k, v = word.split("=", 1)
                    out[k] = v
    return out


def kv_lines(path):
    """'name: value' lines (guest-init's sysfs_facts) of the first device in the file."""
    out = {}
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            if line.startswith("== ") and out:
                break
            k, sep, v = line.partition(": ")
            if sep:
                out.setdefault(k.strip(), v.strip())
    return out


def lines(path):
    out = []
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def wrap(d):
    return (d + 180.0) % 360.0 - 180.0


def interp(ref, t):
    """Linear interpolation of (roll, pitch) in ref (sorted by t) at t; None outside."""
    lo, hi = 0, len(ref) - 1
    if not ref or t < ref[0][0] or t > ref[-1][0]:
        return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if ref[mid][0] <= t:
            lo = mid
        else:
            hi = mid
    (t0, r0, p0), (t1, r1, p1) = ref[lo], ref[hi]
    u = 0.0 if t1 == t0 else (t - t0) / (t1 - t0)
    return r0 + wrap(r1 - r0) * u, p0 + (p1 - p0) * u


def recording(path, columns=7):
    """The recording's rows (t_ns, ax, ay, az, gx, gy, gz[, mx, my, mz]) as floats."""
    rows = []
    if os.path.exists(path):
        for line in open(path):
            if line[:1].isdigit():
                rows.append([float(v) for v in line.split(",")[:columns]])
    return rows


def attitude(msgs):
    return [(m["t_ns"], m["roll_deg"], m["pitch_deg"]) for m in msgs
            if m.get("class") == "attitude" and "t_ns" in m]


def fmt(v, spec):
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "—"
    return format(v, spec)
