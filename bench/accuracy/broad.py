"""BROAD trials: loading, block averaging and the dataset's inclination metric.

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


def block_average(trial, n):
    """Averages blocks of n samples (a trailing partial block is dropped), as `tiltd estimate
    --rate-divisor n` does. Reference quaternions: sign-aligned mean, normalised (nan if any is nan);
    movement: the block's majority."""
    if n == 1:
        return trial
    m = len(trial["t"]) // n
    def avg(x):
        return x[: m * n].reshape(m, n, *x.shape[1:]).mean(axis=1)
    q = trial["quat"][: m * n].reshape(m, n, 4).copy()
    sign = np.sign(np.sum(q * q[:, :1, :], axis=2, keepdims=True))
    sign[sign == 0] = 1
    qm = (q * sign).mean(axis=1)
    qm /= np.linalg.norm(qm, axis=1, keepdims=True)
    return {
        "t": avg(trial["t"]),
        "acc": avg(trial["acc"]),
        "gyr": avg(trial["gyr"]),
        "quat": qm,
        "movement": (avg(trial["movement"]) >= 0.5).astype(float),
    }


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
