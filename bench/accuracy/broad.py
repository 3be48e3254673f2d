"""BROAD trials: loading, decimation to lower rates and the dataset's inclination metric.

Written for tiltd's accuracy benchmark (bench/accuracy/run). The metric is the dataset's own
(README in the datasets folder): for each scored sample q_err = q_est ⊗ q_ref⁻¹, inclination error
= 2·acos(√(w² + z²)) of q_err; RMSE in degrees over samples with movement = 1 whose reference is finite.
"""
import gzip
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


def rate(trial):
    return 1.0 / float(np.median(np.diff(trial["t"])))
