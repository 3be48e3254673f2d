# SPDX-License-Identifier: Apache-2.0
"""tiltd's heading (9-axis, magnetometer) on the BROAD trials next to VQF 9D causal, in one run.

Usage (normally through `bench/accuracy/run --heading`):
  heading.py --tiltd PATH [--datasets DIR] [--mag DIR] [--divisors 1 5] [--param k=v ...] [--trials S ...]

For every trial and divisor N: the trial joined row by row with its broad-mag file (mx,my,mz after
the gyro), `tiltd estimate --rate-divisor N` on it (every N-th row, own timestamps; tiltd then
writes sensor → ENU quaternions), and VQF 9D causal (`vqf.VQF(Ts).updateBatch(gyr, acc, mag)`,
defaults) on exactly those rows. Both scored against the row's ground truth with the dataset's
metric (broad.errors_rmse): heading, inclination and total RMSE, degrees, per trial and mean.
"""
import argparse
import concurrent.futures as cf
import gzip
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

import broad

MAGNET_TRIALS = ("28_", "30_", "32_", "34_")


def joined_csv(path, mag_dir, out_path):
    """Writes the trial with mx,my,mz inserted after the gyro (the layout tiltd estimate reads)."""
    name = os.path.basename(path).split(".")[0]
    with gzip.open(path, "rt") as a, gzip.open(os.path.join(mag_dir, f"{name}.mag.csv.gz"), "rt") as m, \
            open(out_path, "w") as o:
        for x, y in zip(a, m):
            p, q = x.rstrip("\n").split(","), y.rstrip("\n").split(",")
            if p[0] != q[0]:
                raise SystemExit(f"{name}: rows differ in t ({p[0]} vs {q[0]})")
            o.write(",".join(p[:7] + q[1:] + p[7:]) + "\n")


def score(tiltd, path, mag_dir, divisor, outdir, params, mag_every=1):
    name = os.path.basename(path).split(".")[0]
    trial = broad.decimate(broad.load_with_mag(path, mag_dir), divisor)
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, f"{name}.csv")
        joined_csv(path, mag_dir, src)
        est_path = os.path.join(outdir, f"{name}.d{divisor}.mag.est.csv")
        cmd = [tiltd, "estimate", "--in", src, "--out", est_path, "--rate-divisor", str(divisor), "--with-state",
               "--mag-every", str(mag_every)]
        for p in params:
            cmd += ["--param", p]
        subprocess.run(cmd, check=True)
    est = np.loadtxt(est_path, delimiter=",", skiprows=1)
    if len(est) != len(trial["t"]) or np.max(np.abs(est[:, 0] - trial["t"])) > 1e-6:
        raise SystemExit(f"{est_path}: rows/times do not match the decimated input")
    from vqf import VQF
    ts = 1.0 / broad.rate(trial)
    c = np.ascontiguousarray
    if mag_every == 1:
        vqf = VQF(ts).updateBatch(c(trial["gyr"]), c(trial["acc"]), c(trial["mag"]))["quat9D"]
    else:
        # The same slower field for VQF: its magnetometer sampling time, every mag_every-th row.
        v = VQF(ts, ts, ts * mag_every)
        vqf = np.empty((len(trial["t"]), 4))
        for i in range(len(vqf)):
            v.update(c(trial["gyr"][i]), c(trial["acc"][i]), c(trial["mag"][i]) if i % mag_every == 0 else None)
            vqf[i] = v.getQuat9D()
    moving = trial["movement"] == 1
    return {"tiltd": broad.errors_rmse(est[:, 1:5], trial), "vqf": broad.errors_rmse(vqf, trial),
            "disturbed": float(np.mean(est[moving, 9]))}


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    base = os.environ.get("TILTD_DATASETS") or os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "datasets"))
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiltd", required=True)
    ap.add_argument("--datasets", default=os.path.join(base, "broad"))
    ap.add_argument("--mag", default=os.path.join(base, "broad-mag"))
    ap.add_argument("--divisors", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--param", action="append", default=[], help="tiltd estimator override NAME=VALUE")
    ap.add_argument("--trials", nargs="*", help="substrings selecting trials")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--mag-every", type=int, default=1, help="feed the field of every M-th (kept) row only")
    args = ap.parse_args()

    outdir = os.path.join(here, "..", "out", "accuracy")
    os.makedirs(outdir, exist_ok=True)
    paths = sorted(os.path.join(args.datasets, f) for f in os.listdir(args.datasets) if f.endswith(".csv.gz"))
    if args.trials:
        paths = [p for p in paths if any(s in os.path.basename(p) for s in args.trials)]
    if not paths:
        raise SystemExit(f"no trials in {args.datasets}")
    started = time.time()
    results = {}
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(score, args.tiltd, p, args.mag, d, outdir, args.param, args.mag_every): (p, d)
                   for d in args.divisors for p in paths}
        for f in cf.as_completed(futures):
            results[futures[f]] = f.result()

    print(f"tiltd {' '.join(args.param) or '(defaults)'}; VQF 9D causal (vqf defaults); "
          f"field on every {args.mag_every}. row; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}")
    for d in args.divisors:
        rate = 2000.0 / 7.0 / d
        print(f"\nHeading / inclination / total RMSE (deg), divisor {d} ({rate:.1f} Hz)")
        print("| trial | tiltd heading | VQF heading | tiltd incl. | VQF incl. | tiltd total | VQF total | tiltd: field disturbed |")
        print("|---|---|---|---|---|---|---|---|")
        rows = []
        for p in paths:
            r = results[(p, d)]
            row = [r["tiltd"][0], r["vqf"][0], r["tiltd"][1], r["vqf"][1], r["tiltd"][2], r["vqf"][2]]
            rows.append(row)
            name = os.path.basename(p).split(".")[0]
            print(f"| {name} | " + " | ".join(f"{x:.2f}" for x in row) + f" | {r['disturbed'] * 100:.0f} % |")
        rows = np.array(rows)
        print("| **mean** | " + " | ".join(f"**{x:.3f}**" for x in rows.mean(axis=0)) + " | |")
        for half, label in ((0, "1st, 3rd, …"), (1, "2nd, 4th, …")):
            print(f"| mean of trials {label} | " + " | ".join(f"{x:.3f}" for x in rows[half::2].mean(axis=0)) + " | |")
        magnet = np.array([any(os.path.basename(p).startswith(m) for m in MAGNET_TRIALS) for p in paths])
        if magnet.any():
            print("| mean of magnet trials 28–34 | " + " | ".join(f"{x:.3f}" for x in rows[magnet].mean(axis=0)) + " | |")
        h, v = rows[:, 0].mean(), rows[:, 1].mean()
        print(f"tiltd vs VQF heading mean: {h - v:+.3f} deg ({(h / v - 1) * 100:+.0f} %)")
    print(f"\n({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
