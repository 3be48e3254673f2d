# SPDX-License-Identifier: Apache-2.0
"""The comparison filters, each run from its PyPI package on the same rows as tiltd (every N-th row at lower rates).
Every function returns (N,4) quaternions, scalar first, rotating sensor vectors into a z-up frame."""
import numpy as np


def run_vqf(trial):
    from vqf import VQF
    gyr = np.ascontiguousarray(trial["gyr"])
    acc = np.ascontiguousarray(trial["acc"])
    out = VQF(1.0 / _rate(trial)).updateBatch(gyr, acc)
    return out["quat6D"]


def run_madgwick(trial, beta=0.1):
    from ahrs.filters import Madgwick
    f = Madgwick(gyr=trial["gyr"], acc=trial["acc"], frequency=_rate(trial), gain=beta)
    return f.Q


def run_mahony(trial, kp=0.74, ki=0.0012):
    from ahrs.filters import Mahony
    f = Mahony(gyr=trial["gyr"], acc=trial["acc"], frequency=_rate(trial), k_P=kp, k_I=ki)
    return f.Q


def run_fusion(trial, gain=0.5, rejection=10.0, timeout_s=5.0):
    """xio Fusion (imufusion ≥ 1.3 API: AhrsSettings with sample_rate; rejection_timeout taken as
    seconds). Older imufusion took the timeout in samples, so its figures differ somewhat."""
    import imufusion
    rate = _rate(trial)
    ahrs = imufusion.Ahrs()
    s = imufusion.AhrsSettings()
    s.convention = imufusion.CONVENTION_NWU
    s.gain = gain
    s.gyroscope_range = 2000
    s.acceleration_rejection = rejection
    s.magnetic_rejection = 0
    s.rejection_timeout = timeout_s
    s.sample_rate = rate
    ahrs.set_settings(s)
    gyr_dps = np.degrees(trial["gyr"])
    acc_g = trial["acc"] / 9.80665
    out = np.empty((len(gyr_dps), 4))
    for i in range(len(gyr_dps)):
        ahrs.update_no_magnetometer(gyr_dps[i], acc_g[i])
        out[i] = ahrs.get_quaternion()
    return out


def _rate(trial):
    return 1.0 / float(np.median(np.diff(trial["t"])))
