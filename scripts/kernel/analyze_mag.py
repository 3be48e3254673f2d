# SPDX-License-Identifier: Apache-2.0
"""The magnetometer's checks of scripts/kernel/analyze (issue 29): its values read through sysfs
(magvalues), tiltd's heading fusing it (the cases IMU+MAG), and `tiltd calibrate mag` against the
real driver (magcal). Test tooling only."""
import os
import re

from analyze_common import RECOVERY_S, SAMPLE_MATCH, fmt, kv_file, recording, wrap

# The heading of tiltd fusing a real magnetometer driver against `tiltd run --replay` of the same
# recording with its magnetometer columns, after 2 s. The replay feeds the field with every row
# (120 Hz), a polled driver at its own rate (LIS3MDL: under 10 x,y,z reads/s here); the heading
# rests on the gyroscope between them. Measured 0.23-0.30° (27 Nov 2026, docs/hardware.md).
MAX_HEADING_ERROR_DEG = 1.5
# The magnetic yaw against the recording's own (the demo head's yaw against magnetic east, which
# starts 120° from where a gyro-only yaw starts). The estimator pulls its heading towards the
# field with a 9 s time constant (docs/fusion.md) while the gyro's bias, unlearnt while the head
# never rests, turns it 0.46°/s: it trails by up to about bias × 9 s ≈ 4°. Measured 2.1–4.8° on
# LIS3MDL and HMC5883L (27 Nov 2026, docs/hardware.md); a yaw left at the gyro's zero is 120° off.
MAX_YAW_TRUTH_DEG = 10.0
# `tiltd calibrate mag` live against st_magn's LIS3MDL fed a tumble (make-demo-recording --tumble):
# the offset written against the recording's hard iron, µT (each axis). The fit itself on the
# recording (tiltd calibrate mag --replay) is within 0.05 µT, at 120 or 9 readings/s; live, the
# driver's one-shot reads of x, y and z lie ~36 ms apart while the head turns at up to 47°/s, so
# each reading mixes attitudes up to about 1.7°, ~1.4 µT of a 48 µT field, which the fit mostly
# averages out: measured 0.55 and 0.59 µT (27 Nov 2026; docs/calibration.md, "On the rig's real driver").
MAX_MAGCAL_OFFSET_ERROR_UT = 2.0
# The magnetometer's last reported rate (its streaming status's rate_hz) against the fields a
# second `tiltd calibrate mag` received over its run (issue 29: within 10 %).
MAG_RATE_TOLERANCE = 0.10
# The exit status of `tiltd calibrate mag` refusing a coverage-poor run (docs/calibration.md).
MAGCAL_POOR_EXIT = 3
# While the magnetometer is unplugged the IMU must stream on: no gap between samples above this.
MAX_IMU_GAP_S = 0.5


def magread(path):
    """magread's output: ({"scale_x": …}, [(start_ns, end_ns, axis index, raw), …])."""
    head, vals = {}, []
    if os.path.exists(path):
        for line in open(path, errors="replace"):
            w = line.split()
            if w and w[0] == "magread":
                head.update(kv.split("=", 1) for kv in w[1:] if "=" in kv)
            elif len(w) == 4 and w[2] in ("x", "y", "z"):
                vals.append((float(w[0]), float(w[1]), "xyz".index(w[2]), int(w[3])))
    return head, vals


def mag_match(vals, rec, writes, lsb_ut):
    """Share of the magnetometer values read through sysfs that are the recording's (same axis,
    within 1.5 of the chip's LSB, µT) in the row the registers held: the feeder's last write
    (feeder --mag-log: end time, row) before the read began, any written while it ran, or the
    next one (a write's end is stamped after its ioctl returns, so a write just before the read
    may be stamped just after it). Exact, however late the feeder or the reader ran."""
    import bisect
    ends = [e for e, _ in writes]
    hit = total = 0
    for start, end, axis, raw in vals:
        lo = bisect.bisect_right(ends, start) - 1
        hi = bisect.bisect_right(ends, end) + 1
        rows = [writes[k][1] for k in range(max(lo, 0), min(hi, len(writes)))]
        if lo < 0:
            rows.append(0)  # before the first timed write: feeder --once wrote row 0
        total += 1
        v = raw * lsb_ut[axis]
        hit += any(abs(rec[r][7 + axis] - v) <= 1.5 * lsb_ut[axis] for r in rows if r < len(rec))
    return hit / total if total else None


def analyze_magvalues(d, row, case, rec_mag, rec_t0):
    """A magnetometer's values read through its driver's sysfs files while the feeder plays
    (guest-init's magvalues mode; no tiltd)."""
    feeder = kv_file(os.path.join(d, "feeder.txt"))
    head, vals = magread(os.path.join(d, "magread.txt"))
    row["mag"] = case.get("mag")
    # The feeder's mag_scale_* is the chip's own LSB in gauss; magread's scale_* is what the
    # driver reports (they differ where the driver's scale is wrong: hmc5843, 100 times).
    try:
        lsb_ut = [100 * float(feeder["mag_scale_" + a]) for a in "xyz"]
        driver = [float(head["scale_" + a]) for a in "xyz"]
    except (KeyError, ValueError):
        row["checks"].append(("magnetometer values read", False))
        return row
    row["mag_lsb_ut"] = lsb_ut[0]
    row["mag_driver_factor"] = 100 * driver[0] / lsb_ut[0]
    rate = float(case.get("mag_rate") or feeder.get("mag_odr") or "nan")
    row["mag_rate"] = rate
    row["mag_rate_at_probe"] = case.get("mag_rate_at_probe")
    if len(vals) > 3:
        span = (vals[-1][1] - vals[0][0]) / 1e9
        row["delivered"] = len(vals) / 3 / span if span > 0 else float("nan")
    row["first_attitude_s"] = None
    row["error"] = None
    writes = []
    if os.path.exists(os.path.join(d, "maglog.txt")):
        writes = [(float(w[0]), int(w[1])) for w in (ln.split() for ln in open(os.path.join(d, "maglog.txt")))
                  if len(w) == 2]
    if writes and rec_mag:
        row["match"] = mag_match(vals, rec_mag, writes, lsb_ut)
    row["checks"].append(("magnetometer values = the recording's ≥ %g%%" % (100 * SAMPLE_MATCH),
                          row.get("match") is not None and row["match"] >= SAMPLE_MATCH))
    return row


def heading(msgs):
    """(t_ns, heading °) of the attitude lines: `heading_deg` where the daemon gives it (only
    magnetic ones when it says its source), else the attitude's yaw, whose zero a magnetometer
    sets (Attitude.magneticHeading)."""
    att = [m for m in msgs if m.get("class") == "attitude" and "t_ns" in m]
    if any("heading_deg" in m for m in att):
        return "heading_deg", [(m["t_ns"], m["heading_deg"]) for m in att if "heading_deg" in m
                               and m.get("heading_source", "mag") == "mag"]
    return "yaw_deg", [(m["t_ns"], m["yaw_deg"]) for m in att if "yaw_deg" in m]


def interp_angle(ref, t):
    """Linear interpolation of an angle series (sorted (t, deg)) at t, across the ±180° seam."""
    import bisect
    if not ref or t < ref[0][0] or t > ref[-1][0]:
        return None
    k = max(1, bisect.bisect_left([r[0] for r in ref], t))
    (t0, a0), (t1, a1) = ref[k - 1], ref[min(k, len(ref) - 1)]
    u = 0.0 if t1 == t0 else (t - t0) / (t1 - t0)
    return a0 + wrap(a1 - a0) * u


def heading_error(series, ref, rec_t0, t_feed, until, lags=range(-60, 61)):
    """Largest heading difference against `ref` after 2 s of the recording (and before `until`),
    at the best lag within ±0.3 s as for the attitude (or among `lags`, in 5 ms): (error, lag ms)."""
    best = (None, 0.0)
    for k in lags:
        worst, n = 0.0, 0
        for t, h in series:
            if t >= until:
                continue
            tau = rec_t0 + (t - t_feed) + k * 5e6
            if tau < rec_t0 + 2e9:
                continue
            want = interp_angle(ref, tau)
            if want is None:
                continue
            worst = max(worst, abs(wrap(h - want)))
            n += 1
        if n and (best[0] is None or worst < best[0] - 1e-9):
            best = (worst, k * 5.0)
    return best


def magnetic_truth(path):
    """(t_ns, yaw °) per row of the recording with its magnetometer: the demo head's yaw against
    magnetic east, from scripts/make-demo-recording itself (its header names the rate)."""
    import importlib.machinery
    import importlib.util
    if not os.path.exists(path):
        return []
    text = open(path).read()
    rate = re.search(r"--rate ([0-9.]+)", text)
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "make-demo-recording")
    loader = importlib.machinery.SourceFileLoader("make_demo_recording", script)
    spec = importlib.util.spec_from_loader(loader.name, loader)
    demo = importlib.util.module_from_spec(spec)
    loader.exec_module(demo)
    yaws = demo.magnetic_yaw_deg(float(rate.group(1)) if rate else 60.0)
    rows = recording(path, 1)
    return [(r[0], y) for r, y in zip(rows, yaws)]


def analyze_magcal(d, row, case, tumble):
    """`tiltd calibrate mag` run live against the driver (guest-mag.sh's run_magcal): the demo
    head refused with MAGCAL_POOR_EXIT and nothing written; the tumble calibrated, its mag_offset
    within MAX_MAGCAL_OFFSET_ERROR_UT of the recording's hard iron (named in its header)."""
    row["mag"] = "magcal"
    row["first_attitude_s"] = row["error"] = None
    poor = case.get("poor_exit")
    row["checks"].append(("coverage-poor run (nods) refused with exit status %d, nothing written" % MAGCAL_POOR_EXIT,
                          poor == str(MAGCAL_POOR_EXIT) and case.get("poor_wrote") != "yes"))
    out = open(os.path.join(d, "calibrate.txt"), errors="replace").read() \
        if os.path.exists(os.path.join(d, "calibrate.txt")) else ""
    n = re.search(r"calibration from (\d+) readings over ([0-9.]+) s \(([0-9.]+) a second\) \(([^)]*)\)", out)
    row["magcal_readings"] = int(n.group(1)) if n else None
    row["magcal_s"] = float(n.group(2)) if n else None
    row["delivered"] = float(n.group(3)) if n else None
    row["magcal_coverage"] = n.group(4) if n else None
    # The magnetometer's streaming statuses as calibrate prints them: the last rate reported.
    rates = re.findall(r"^magnetometer: .* at ([0-9.]+) Hz: (.*)$", out, re.M)
    row["reported_seq"] = [float(r) for r, _ in rates]
    row["message"] = rates[-1][1] if rates else ""
    rep, got = (row["reported_seq"] or [None])[-1], row["delivered"]
    row["checks"].append(("magnetometer's reported rate = delivered ±%g%%" % (100 * MAG_RATE_TOLERANCE),
                          rep is not None and got is not None and abs(rep - got) <= MAG_RATE_TOLERANCE * got))
    res = re.search(r"residual \(RMS of \|m_cal\| − strength\): ([0-9.]+) µT before → ([0-9.]+) µT after", out)
    row["magcal_residual"] = (float(res.group(1)), float(res.group(2))) if res else None
    hard = None
    if os.path.exists(tumble):
        m = re.search(r"hard iron \(([-0-9., ]+)\) µT", open(tumble).readline() + open(tumble).readlines()[1])
        hard = [float(v) for v in m.group(1).split(",")] if m else None
    cal = os.path.join(d, "calibration.toml")
    offset = None
    if os.path.exists(cal):
        m = re.search(r"^mag_offset = \[([^\]]*)\]", open(cal).read(), re.M)
        offset = [float(v) for v in m.group(1).split(",")] if m else None
    row["magcal_offset"] = offset
    row["magcal_hard_iron"] = hard
    err = max(abs(a - b) for a, b in zip(offset, hard)) if offset and hard else None
    row["magcal_offset_error"] = err
    row["checks"].append(("calibrated (exit 0): mag_offset within %g µT of the hard iron" % MAX_MAGCAL_OFFSET_ERROR_UT,
                          case.get("calibrate_exit") == "0" and err is not None and err <= MAX_MAGCAL_OFFSET_ERROR_UT))
    return row


def check_heading(row, msgs, times, feeder, heading_ref, rec_t0, truth):
    """tiltd fusing the magnetometer: its magnetic yaw follows the recording's (`truth`, the demo
    head's yaw against magnetic east), and its heading the replay's of the same recording (when
    this tiltd replays recording v2); with the magnetometer unplugged mid-run (magunplug), the IMU
    streams on, the magnetometer's status says it is gone and then back."""
    row["mag"] = True
    unplug = float(times.get("unplug_ns", "inf"))
    t_feed = float(feeder["start_ns"]) if "start_ns" in feeder else None
    yaw = [(m["t_ns"], m["yaw_deg"]) for m in msgs if m.get("class") == "attitude" and "yaw_deg" in m]
    if t_feed is not None and yaw and truth:
        # at lag 0: the yaw moves slowly (3°/s at most in these 11 s), the feeder's clock is the
        # recording's time line, and a best lag would only hide the slow offset this measures
        row["yaw_error"], row["yaw_lag_ms"] = heading_error(yaw, truth, rec_t0, t_feed, unplug - 0.5e9, (0,))
    e = row.get("yaw_error")
    row["checks"].append(("yaw within %g° of the recording's magnetic yaw" % MAX_YAW_TRUTH_DEG,
                          e is not None and e <= MAX_YAW_TRUTH_DEG))
    field, series = heading(msgs)
    row["heading_field"] = field
    if heading_ref is not None:
        if t_feed is not None and series and heading_ref:
            row["heading_error"], row["heading_lag_ms"] = heading_error(series, heading_ref, rec_t0, t_feed,
                                                                        unplug - 0.5e9)
        e = row.get("heading_error")
        row["checks"].append(("heading (%s) within %g° of the replay's" % (field, MAX_HEADING_ERROR_DEG),
                              e is not None and e <= MAX_HEADING_ERROR_DEG))
    if row["mode"] != "magunplug":
        return
    replug = float(times.get("replug_ns", "inf"))
    samples = sorted(m["t_ns"] for m in msgs if m.get("class") == "sample" and "t_ns" in m)
    around = [t for t in samples if unplug - 1e9 <= t <= replug + 2e9]
    gap = max((b - a for a, b in zip(around, around[1:])), default=float("inf")) / 1e9
    row["imu_gap_s"] = gap
    row["checks"].append(("IMU streams on while the magnetometer is gone (gap ≤ %g s)" % MAX_IMU_GAP_S,
                          gap <= MAX_IMU_GAP_S))
    mag_status = [m for m in msgs if m.get("class") == "status" and m.get("source") != "imu"
                  and ("mag" in str(m.get("source", "")) or "magnetometer" in str(m.get("message", "")))]
    row["mag_states"] = [m.get("state") for m in mag_status]
    gone = next((k for k, m in enumerate(mag_status) if m.get("state") in ("retrying", "no_data")), None)
    back = next((m for m in mag_status[gone:] if m.get("state") == "streaming"), None) if gone is not None else None
    row["recovery_s"] = (back["t_ns"] - replug) / 1e9 if back and "t_ns" in back else None
    rec_s = row["recovery_s"]
    row["checks"].append(("magnetometer status: gone, then streaming again ≤ %g s after it is back" % RECOVERY_S,
                          rec_s is not None and rec_s <= RECOVERY_S))


def print_mag_notes(rows):
    """The lines under the table for the cases with a magnetometer."""
    for r in rows:
        if r.get("mag") == "magcal":
            res = r.get("magcal_residual") or (None, None)
            print("  %s: tiltd calibrate mag (live): %s readings over %s s (%s); offset %s µT for hard iron %s µT: "
                  "largest axis error %s µT; residual %s → %s µT" % (
                      r["id"], fmt(r.get("magcal_readings"), "d"), fmt(r.get("magcal_s"), ".1f"),
                      r.get("magcal_coverage") or "?",
                      "(" + ", ".join("%.3f" % v for v in r["magcal_offset"]) + ")" if r.get("magcal_offset") else "none",
                      "(" + ", ".join("%g" % v for v in r["magcal_hard_iron"]) + ")" if r.get("magcal_hard_iron") else "?",
                      fmt(r.get("magcal_offset_error"), ".3f"), fmt(res[0], ".3f"), fmt(res[1], ".3f")))
        elif r.get("mag") is True:
            note = "  %s: yaw against the recording's magnetic yaw: %s°" % (r["id"], fmt(r.get("yaw_error"), ".2f"))
            if r.get("heading_error") is not None:
                note += "; heading (%s) against the replay's: %s° (best lag %s ms)" % (
                    r.get("heading_field"), fmt(r.get("heading_error"), ".2f"), fmt(r.get("heading_lag_ms"), "+.0f"))
            if r["mode"] == "magunplug":
                note += "; largest IMU gap %s s while the magnetometer was gone; back %s s after it was; its states %s" % (
                    fmt(r.get("imu_gap_s"), ".2f"), fmt(r.get("recovery_s"), ".1f"), " → ".join(st for k, st in enumerate(r.get("mag_states", []))
                                                     if k == 0 or st != r["mag_states"][k - 1]) or "none")
            print(note)
        elif r.get("mag"):
            note = "  %s: %s read through sysfs at %s Hz (%s at probe): %s x,y,z samples/s" % (
                r["id"], r["mag"], fmt(r.get("mag_rate"), "g"), r.get("mag_rate_at_probe") or "?",
                fmt(r.get("delivered"), ".1f"))
            if r.get("mag_lsb_ut"):
                note += "; LSB %s µT" % fmt(r["mag_lsb_ut"], ".4g")
                f = r.get("mag_driver_factor", 1.0)
                if abs(f - 1) > 0.01:
                    note += ", the driver's in_magn_scale gives %s times the field" % fmt(f, ".4g")
            print(note)
