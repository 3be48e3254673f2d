# SPDX-License-Identifier: Apache-2.0
"""BROAD trials: loading, decimation to lower rates and the dataset's inclination metric.

Written for tiltd's accuracy benchmark (bench/accuracy/run). The metric is the dataset's own
(README in the datasets folder): for each scored sample q_err = q_est ⊗ q_ref⁻¹, inclination error
= 2·acos(√(w² + z²)) of q_err; RMSE in degrees over samples with movement = 1 whose reference is finite.
"""
import gzip
import os
import numpy as np


def load(path):
    """Returns dict t (s), acc (N,3) m/s², gyr (N,3) rad/s, quat (N,4) wxyz ref, movement (N,)."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        header = f.readline().strip().split(",")
        data = np.loadtxt(f, delimiter=",")
    col = {name: i for i, name in enumerate(header)}
    pick = lambda names: data[:, [col[n] for n in names]]
    return {
        "t": data[:, col["t"]],
        "acc": pick(["ax", "ay", "az"]),
        "gyr": pick(["gx", "gy", "gz"]),
        "quat": pick(["qw", "qx", "qy", "qz"]),
        "movement": data[:, col["movement"]],
    }


def decimate(trial, n):
    """Every n-th row (rows 0, n, 2n, …), each with its own timestamp, readings and ground truth:
    the stream a sensor at 1/n of the rate delivers (the dataset README's protocol for lower
    rates), and what `tiltd estimate --rate-divisor n` reads."""
    if n == 1:
        return trial
    return {k: v[::n] for k, v in trial.items()}


def quat_mul(a, b):
    aw, ax, ay, az = a.T
    bw, bx, by, bz = b.T
    return np.stack([aw * bw - ax * bx - ay * by - az * bz,
                     aw * bx + ax * bw + ay * bz - az * by,
                     aw * by - ax * bz + ay * bw + az * bx,
                     aw * bz + ax * by - ay * bx + az * bw], axis=1)


def inclination_rmse(q_est, trial):
    """The dataset metric, degrees."""
    q_ref = trial["quat"]
    conj = q_ref * np.array([1, -1, -1, -1])
    err = quat_mul(q_est, conj)
    err /= np.linalg.norm(err, axis=1, keepdims=True)
    incl = 2 * np.arccos(np.clip(np.sqrt(err[:, 0] ** 2 + err[:, 3] ** 2), 0, 1))
    ok = (trial["movement"] == 1) & np.all(np.isfinite(q_ref), axis=1) & np.all(np.isfinite(q_est), axis=1)
    return float(np.degrees(np.sqrt(np.mean(incl[ok] ** 2))))


def load_with_mag(path, mag_dir):
    """load() plus "mag" (N,3) µT from the trial's broad-mag file (<trial>.mag.csv.gz in mag_dir,
    one row per row, same t)."""
    trial = load(path)
    name = os.path.basename(path).split(".")[0]
    with gzip.open(os.path.join(mag_dir, f"{name}.mag.csv.gz"), "rt") as f:
        f.readline()
        m = np.loadtxt(f, delimiter=",")
    if len(m) != len(trial["t"]) or np.max(np.abs(m[:, 0] - trial["t"])) > 1e-6:
        raise SystemExit(f"{name}: the broad-mag rows do not match the trial's rows")
    trial["mag"] = m[:, 1:4]
    return trial


def errors_rmse(q_est, trial):
    """The dataset metric with heading: (heading, inclination, total) RMSE in degrees. q_err =
    q_est ⊗ q_ref⁻¹; heading = its rotation about the global vertical (2·atan(|z|/|w|)),
    inclination = 2·acos(√(w² + z²)), total = its whole angle (2·acos|w|)."""
    q_ref = trial["quat"]
    err = quat_mul(q_est, q_ref * np.array([1, -1, -1, -1]))
    err /= np.linalg.norm(err, axis=1, keepdims=True)
    w, z = np.abs(err[:, 0]), np.abs(err[:, 3])
    heading = 2 * np.arctan2(z, w)
    incl = 2 * np.arccos(np.clip(np.sqrt(err[:, 0] ** 2 + err[:, 3] ** 2), 0, 1))
    total = 2 * np.arccos(np.clip(w, 0, 1))
    ok = (trial["movement"] == 1) & np.all(np.isfinite(q_ref), axis=1) & np.all(np.isfinite(q_est), axis=1)
    return tuple(float(np.degrees(np.sqrt(np.mean(e[ok] ** 2)))) for e in (heading, incl, total))


def rate(trial):
    return 1.0 / float(np.median(np.diff(trial["t"])))
