# SPDX-License-Identifier: Apache-2.0
"""tiltd's accuracy on the BROAD trials next to VQF, Madgwick, Mahony and xio Fusion.

Usage (normally through bench/accuracy/run):
  accuracy.py --tiltd PATH [--datasets DIR] [--divisors 1 5] [--only tiltd] [--reuse] [--param k=v ...]

For every trial and divisor N: `tiltd estimate --in TRIAL --out EST.csv --rate-divisor N` (every N-th
row), then exactly those rows through the other filters (from their PyPI packages), every estimate
scored against the ground truth of the row it was computed at with the dataset's inclination metric
(broad.py). Prints one table per divisor and the means.
"""
import argparse
import concurrent.futures as cf
import json
import os
import subprocess
import sys
import time

import numpy as np

import broad
import others

FILTERS = ["vqf", "madgwick", "mahony", "fusion"]
WINDOW_UNTOLD = "tiltd, window untold"
RUNNERS = {"vqf": others.run_vqf, "madgwick": others.run_madgwick,
           "mahony": others.run_mahony, "fusion": others.run_fusion}


def score_others(path, divisor):
    trial = broad.decimate(broad.load(path), divisor)
    return {name: broad.inclination_rmse(RUNNERS[name](trial), trial) for name in FILTERS}


def score_tiltd(tiltd, path, divisor, outdir, params, tag=""):
    name = os.path.basename(path).split(".")[0]
    est_path = os.path.join(outdir, f"{name}.d{divisor}{tag}.est.csv")
    cmd = [tiltd, "estimate", "--in", path, "--out", est_path, "--rate-divisor", str(divisor)]
    for p in params:
        cmd += ["--param", p]
    subprocess.run(cmd, check=True)
    est = np.loadtxt(est_path, delimiter=",", skiprows=1)
    trial = broad.decimate(broad.load(path), divisor)
    if len(est) != len(trial["t"]) or np.max(np.abs(est[:, 0] - trial["t"])) > 1e-6:
        raise SystemExit(f"{est_path}: rows/times do not match the decimated input")
    return broad.inclination_rmse(est[:, 1:5], trial)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--tiltd", required=True)
    ap.add_argument("--datasets", default=os.environ.get("TILTD_DATASETS") and
                    os.path.join(os.environ["TILTD_DATASETS"], "broad") or
                    os.path.normpath(os.path.join(here, "..", "..", "..", "shared", "datasets", "broad")))
    ap.add_argument("--divisors", type=int, nargs="+", default=[1, 5])
    ap.add_argument("--only", choices=["tiltd"], help="skip the other filters")
    ap.add_argument("--reuse", action="store_true", help="reuse cached scores of the other filters")
    ap.add_argument("--param", action="append", default=[], help="tiltd estimator override NAME=VALUE")
    ap.add_argument("--trials", nargs="*", help="substrings selecting trials")
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()

    outdir = os.path.join(here, "..", "out", "accuracy")
    os.makedirs(outdir, exist_ok=True)
    paths = sorted(os.path.join(args.datasets, f) for f in os.listdir(args.datasets) if f.endswith((".csv", ".csv.gz")))
    if args.trials:
        paths = [p for p in paths if any(s in os.path.basename(p) for s in args.trials)]
    if not paths:
        raise SystemExit(f"no trials in {args.datasets}")
    cache_path = os.path.join(outdir, "others-decimated.json")
    cache = json.load(open(cache_path)) if (args.reuse and os.path.exists(cache_path)) else {}

    started = time.time()
    results = {}
    with cf.ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = {}
        for d in args.divisors:
            for p in paths:
                key = f"{os.path.basename(p)}|{d}"
                futures[pool.submit(score_tiltd, args.tiltd, p, d, outdir, args.param)] = (key, "tiltd")
                if d > 1:
                    # The same rows with tiltd not told that each rate sample averages only 1/d of
                    # the period (the default for a sensor whose output rate is its sample rate).
                    futures[pool.submit(score_tiltd, args.tiltd, p, d, outdir, args.param + ["rateWindow=1"],
                                        "w1")] = (key, WINDOW_UNTOLD)
                if args.only is None and key not in cache:
                    futures[pool.submit(score_others, p, d)] = (key, "others")
        for f in cf.as_completed(futures):
            key, what = futures[f]
            r = f.result()
            if what != "others":
                results.setdefault(key, {})[what] = r
            else:
                cache[key] = r
                # Saved as it goes: the other filters are the slow part of a run.
                json.dump(cache, open(cache_path, "w"), indent=1)

    for d in args.divisors:
        cols = ["tiltd"] + ([WINDOW_UNTOLD] if d > 1 else []) + ([] if args.only else FILTERS)
        rate = 2000.0 / 7.0 / d
        print(f"\nInclination RMSE (deg), divisor {d} ({rate:.1f} Hz)")
        print("| trial | " + " | ".join(cols) + " |")
        print("|---|" + "---|" * len(cols))
        sums = {c: [] for c in cols}
        for p in paths:
            key = f"{os.path.basename(p)}|{d}"
            row = dict(results[key])
            row.update(cache.get(key, {}))
            for c in cols:
                sums[c].append(row[c])
            name = os.path.basename(p).split(".")[0]
            print(f"| {name} | " + " | ".join(f"{row[c]:.2f}" for c in cols) + " |")
        print("| **mean** | " + " | ".join(f"**{np.mean(sums[c]):.3f}**" for c in cols) + " |")
        # Alternate trials as two halves: a change that helps only some trials shows up here.
        for half, label in ((0, "1st, 3rd, …"), (1, "2nd, 4th, …")):
            print(f"| mean of trials {label} | " + " | ".join(f"{np.mean(sums[c][half::2]):.3f}" for c in cols) + " |")
        if args.only is None:
            worse = [os.path.basename(p).split(".")[0] for p, a, b in zip(paths, sums["tiltd"], sums["madgwick"]) if a >= b]
            print(f"tiltd vs VQF mean: {np.mean(sums['tiltd']) - np.mean(sums['vqf']):+.3f} deg "
                  f"({(np.mean(sums['tiltd']) / np.mean(sums['vqf']) - 1) * 100:+.0f} %); "
                  f"trials where tiltd ≥ Madgwick: {worse or 'none'}")
    print(f"\n({time.time() - started:.0f} s)", file=sys.stderr)


if __name__ == "__main__":
    main()
