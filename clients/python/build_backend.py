# SPDX-License-Identifier: Apache-2.0
"""A PEP 517 / PEP 660 build backend for the tiltd client, standard library only.

The package is a handful of pure-Python files, so a wheel is a zip of ``tiltd/`` plus the
dist-info files; nothing needs setuptools, and pip can install it without fetching anything
(docs/clients.md, "Install"). The metadata is here, once; the version is ``tiltd.__version__``.
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
NAME = "tiltd"
SUMMARY = "Client for tiltd, the IMU tilt-game and places daemon (JSON lines on a Unix socket)"


def _version():
    with open(os.path.join(HERE, NAME, "__init__.py"), encoding="utf-8") as f:
        return re.search(r'^__version__ = "([^"]+)"', f.read(), re.M).group(1)


def _metadata():
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {_version()}\nSummary: {SUMMARY}\n"
            "Requires-Python: >=3.9\nClassifier: Operating System :: POSIX :: Linux\n")


def _sources():
    """(archive name, path) of every module of the package, sorted (reproducible archives)."""
    pkg = os.path.join(HERE, NAME)
    return [(f"{NAME}/{n}", os.path.join(pkg, n)) for n in sorted(os.listdir(pkg)) if n.endswith(".py")]


def _wheel(directory, files):
    """Write a py3-none-any wheel holding ``files`` ({archive name: bytes}); returns its name."""
    dist_info = f"{NAME}-{_version()}.dist-info"
    files = dict(files)
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: tiltd build_backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append(f"{dist_info}/RECORD,,")
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    filename = f"{NAME}-{_version()}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(directory, filename), "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            z.writestr(info, data, zipfile.ZIP_DEFLATED)
    return filename


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def get_requires_for_build_wheel(config_settings=None):
    return []


get_requires_for_build_sdist = get_requires_for_build_editable = get_requires_for_build_wheel


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    """The wheel: the package's modules and its metadata."""
    return _wheel(wheel_directory, {name: _read(path) for name, path in _sources()})


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """``pip install -e``: a wheel whose .pth puts this directory on sys.path."""
    return _wheel(wheel_directory, {f"_{NAME}_editable.pth": (HERE + "\n").encode()})


def build_sdist(sdist_directory, config_settings=None):
    """The source archive: pyproject.toml, this backend, the package."""
    base = f"{NAME}-{_version()}"
    members = [("pyproject.toml", os.path.join(HERE, "pyproject.toml")),
               ("build_backend.py", os.path.join(HERE, "build_backend.py"))] + _sources()
    members.append(("PKG-INFO", None))
    filename = f"{base}.tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for name, path in members:
            data = _metadata().encode() if path is None else _read(path)
            info = tarfile.TarInfo(f"{base}/{name}")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    return filename
