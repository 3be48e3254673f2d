# SPDX-License-Identifier: Apache-2.0
"""Checks that bench/pipeline/cores.cpp calls the VQF and Fusion cores the way bench/accuracy calls
their Python packages: same rate, units and settings give the same quaternions.

    python check_cores.py CORES_BINARY RECORDING [N]

Runs `CORES_BINARY --dump N` and the PyPI packages `vqf` and `imufusion` (as bench/accuracy/others.py
sets them up) on the first N samples of RECORDING, and fails if any quaternion component differs by
more than 1e-6 (the dump prints 9 significant digits; Fusion computes in float).
"""
import subprocess
import sys

import numpy as np


def read_recording(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#") and not line.startswith("t_ns"):
                rows.append([float(x) for x in line.split(",")])
    return np.array(rows)


def main():
    cores, recording, n = sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    data = read_recording(recording)
    rate = 1.0 / float(np.median(np.diff(data[:, 0] * 1e-9)))
    data = data[:n]
    acc = np.ascontiguousarray(data[:, 1:4])
    gyr = np.ascontiguousarray(data[:, 4:7])

    from vqf import VQF
    import imufusion
    expected = {"VQF": VQF(1.0 / rate).updateBatch(gyr, acc)["quat6D"]}
    for name, with_bias in (("Fusion", False), ("Fusion+Bias", True)):
        ahrs = imufusion.Ahrs()
        s = imufusion.AhrsSettings()
        s.convention = imufusion.CONVENTION_NWU
        s.gain = 0.5
        s.gyroscope_range = 2000
        s.acceleration_rejection = 10.0
        s.magnetic_rejection = 0
        s.rejection_timeout = 5.0
        s.sample_rate = rate
        ahrs.set_settings(s)
        bias = imufusion.Bias()
        bias_settings = imufusion.BiasSettings()
        bias_settings.sample_rate = rate
        bias.set_settings(bias_settings)
        out = np.empty((len(gyr), 4))
        for i in range(len(gyr)):
            g = np.degrees(gyr[i])
            if with_bias:
                g = bias.update(g)
            ahrs.update_no_magnetometer(g, acc[i] / 9.80665)
            out[i] = ahrs.get_quaternion()
        expected[name] = out

    dump = subprocess.run([cores, "--recording", recording, "--dump", str(n)], check=True,
                          capture_output=True, text=True).stdout
    got = {}
    for line in dump.splitlines():
        name, _, q = line.split("\t")
        got.setdefault(name, []).append([float(x) for x in q.split()])

    failed = False
    for name, ref in expected.items():
        q = np.array(got.get(name, []))
        if q.shape != ref.shape:
            print(f"{name}: driver gave {q.shape[0]} quaternions, package {ref.shape[0]}")
            failed = True
            continue
        sign = np.where(np.sum(q * ref, axis=1) < 0, -1.0, 1.0)[:, None]  # q and −q are one rotation
        diff = float(np.abs(q * sign - ref).max())
        ok = diff <= 1e-6
        failed |= not ok
        print(f"{name}: {len(q)} samples, largest component difference to the package {diff:.2g}"
              f" {'ok' if ok else 'MISMATCH'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
