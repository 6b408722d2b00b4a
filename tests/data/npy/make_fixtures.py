#!/usr/bin/python3
"""Regenerates the .npy/.npz fixtures of tests/unit/weights with NumPy.

Run with a Python that has NumPy (e.g. /usr/bin/python3): python3 make_fixtures.py
The unit tests hard-code the values below, so keep the two in sync.
"""
import os
import zipfile

import numpy as np
from numpy.lib import format as npformat

HERE = os.path.dirname(os.path.abspath(__file__))


def path(name):
    return os.path.join(HERE, name)


def save_version(name, array, version):
    with open(path(name), "wb") as f:
        npformat.write_array(f, array, version=version)


def main():
    f4 = np.array([[0.1, -2.5, 3.0], [1e-7, -0.0, 65504.0]], dtype="<f4")
    np.save(path("f4.npy"), f4)
    np.save(path("f8.npy"), np.array([1.0 / 3.0, -2.5, 0.1, 1e-300], dtype="<f8"))
    np.save(path("f2.npy"), np.array([1.5, -0.25, 65504.0, 6e-8], dtype="<f2"))
    np.save(path("i1.npy"), np.array([-128, -1, 0, 1, 127], dtype="|i1"))
    np.save(path("u1.npy"), np.array([0, 1, 128, 255], dtype="|u1"))
    np.save(path("i2.npy"), np.array([-32768, -2, 32767], dtype="<i2"))
    np.save(path("i4.npy"), np.array([[-2147483648, 16777216], [-7, 123456]], dtype="<i4"))
    np.save(path("i8.npy"), np.array([-(2**40), 5, 2**53], dtype="<i8"))
    np.save(path("u2.npy"), np.array([0, 65535], dtype="<u2"))
    np.save(path("u4.npy"), np.array([4294967295, 7], dtype="<u4"))
    np.save(path("b1.npy"), np.array([True, False, True], dtype="|b1"))
    np.save(path("be_f4.npy"), np.array([1.5, -2.0, 0.1], dtype=">f4"))
    np.save(path("be_i2.npy"), np.array([-2, 258], dtype=">i2"))
    np.save(path("c8.npy"), np.array([1 + 2j], dtype="<c8"))  # unsupported dtype
    # 2x3x4, values 0..23 in C order, stored column-major.
    np.save(path("fortran.npy"), np.asfortranarray(np.arange(24, dtype="<f4").reshape(2, 3, 4)))
    np.save(path("scalar.npy"), np.array(42.5, dtype="<f4"))
    np.save(path("vec.npy"), np.array([1, 2, 3, 4, 5], dtype="<f4"))
    np.save(path("empty.npy"), np.zeros((0, 3), dtype="<f4"))
    save_version("v2.npy", np.array([[1.0, 2.0], [3.0, 4.0]], dtype="<f4"), (2, 0))
    save_version("v3.npy", np.array([-1.0, 0.5], dtype="<f4"), (3, 0))

    arrays = {
        "conv1.weight": np.arange(6, dtype="<f4").reshape(2, 3) * 0.5 - 1.0,
        "conv1.bias": np.array([0.25, -0.75], dtype="<f4"),
        "int8": np.array([-3, 4], dtype="|i1"),
        "scale": np.array(0.125, dtype="<f8"),
    }
    np.savez(path("savez.npz"), **arrays)
    np.savez_compressed(path("savez_compressed.npz"), **arrays)
    # Same archive with zip64 extra fields in the central directory and a zip64 end record,
    # obtained by lowering zipfile's zip64 thresholds (real archives need > 4 GiB or > 65535 files).
    limits = zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT
    zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = 0, 0
    try:
        np.savez(path("zip64.npz"), **arrays)
    finally:
        zipfile.ZIP64_LIMIT, zipfile.ZIP_FILECOUNT_LIMIT = limits
    for name in ("savez.npz", "savez_compressed.npz", "zip64.npz"):
        loaded = np.load(path(name))
        assert sorted(loaded.files) == sorted(arrays), name
        for key, value in arrays.items():
            assert np.array_equal(loaded[key], value), (name, key)


if __name__ == "__main__":
    main()
