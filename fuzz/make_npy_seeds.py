#!/usr/bin/env python3
"""Write the .npy seeds of the fuzz corpora (fuzz/corpus/{npy,npy_dataset,inputs}/gen_*)
with Debian's python3-numpy (np.save): every dtype and byte order lgelu reads, format
versions 1.0, 2.0 and 3.0, and the input layouts of lg_fuzz_npy_dataset (u16 length of
X, X, y) and lg_fuzz_inputs (one byte n_in, then a .npy or text file).

  make_npy_seeds.py CORPUS_DIR
"""
import io
import os
import struct
import sys

import numpy as np
from numpy.lib import format as npf

D = sys.argv[1]
rng = np.random.default_rng(12)


def npy(arr, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, arr)
    else:
        npf.write_array(b, arr, version=version)
    return b.getvalue()


def put(sub, name, data):
    os.makedirs(os.path.join(D, sub), exist_ok=True)
    with open(os.path.join(D, sub, "gen_" + name), "wb") as f:
        f.write(data)


x = rng.uniform(0, 1, size=(3, 4))
put("npy", "f8_3x4.npy", npy(x))
put("npy", "f4_3x4.npy", npy(x.astype(np.float32)))
put("npy", "be_f8_2x3.npy", npy(x[:2, :3].astype(">f8")))
put("npy", "be_f4_2x2.npy", npy(x[:2, :2].astype(">f4")))
put("npy", "u1_5.npy", npy(np.arange(5, dtype=np.uint8)))
put("npy", "i8_4.npy", npy(np.arange(4, dtype=np.int64)))
put("npy", "i2_2x2.npy", npy(np.arange(4, dtype=np.int16).reshape(2, 2)))
put("npy", "u4_3.npy", npy(np.arange(3, dtype=np.uint32)))
put("npy", "f8_2x2x2.npy", npy(rng.uniform(0, 1, size=(2, 2, 2))))
put("npy", "f8_v2_2x3.npy", npy(x[:2, :3], version=(2, 0)))
put("npy", "f8_v3_1x2.npy", npy(x[:1, :2], version=(3, 0)))
put("npy", "f8_0x3.npy", npy(np.zeros((0, 3))))
put("npy", "fortran_2x3.npy", npy(np.asfortranarray(x[:2, :3])))

for name, X, y in [("f4_u1", x.astype(np.float32), np.array([0, 3, 9], dtype=np.uint8)),
                   ("f8_i8", x, np.array([1, 2, 1], dtype=np.int64)),
                   ("img_f8_u1", rng.uniform(0, 1, size=(2, 3, 3)), np.array([4, 7], dtype=np.uint8))]:
    xb, yb = npy(X), npy(y)
    put("npy_dataset", name + ".bin", struct.pack("<H", len(xb)) + xb + yb)

put("inputs", "npy_n4.bin", bytes([3]) + npy(x))
put("inputs", "text_n3.bin", bytes([2]) + b"# inputs\n0.1 0.2 0.3\n0.5,0.25,1e-3\n\n1\t0\t0.5\n")
put("inputs", "text_n2.bin", bytes([1]) + b"0 1\n-0.5 2.5e+1\n")
