#!/usr/bin/env python3
"""Makes TransformerEngine's libtransformer_engine.so small enough to bring
to the device machine (bench/formats/te_device.sh): zeroes the payload of
every cubin in its .nv_fatbin section whose architecture is not kept, so
that the file compresses from 343 MB to about 23 MB (xz -9). Headers and
sizes stay as they are: the CUDA runtime picks the sm_90 cubin of each
fatbin and never reads the zeroed ones on an sm_90 GPU.

Fatbin layout read here (as the CUDA toolchain writes it): a fatbin header
(magic 0xBA55ED50, u16 version, u16 header size, u64 size of the entries),
then entries, each a header (u16 kind, u16, u32 header size, u64 payload
size, ..., u32 architecture at offset 28) and its payload.

Usage: te_strip.py IN OUT [ARCHS, default 90]   then   xz -9 -T2 OUT
"""
import struct
import subprocess
import sys
from collections import Counter

MAGIC = 0xBA55ED50


def fatbin_section(path):
    out = subprocess.check_output(["readelf", "-S", "-W", path]).decode()
    for line in out.splitlines():
        if ".nv_fatbin" in line:
            f = line.split("]")[1].split()
            return int(f[3], 16), int(f[4], 16)
    sys.exit("%s: no .nv_fatbin section" % path)


def entries(data, off, size):
    """(payload offset, payload size, kind, arch) of every fatbin entry."""
    pos, end = off, off + size
    while pos < end:
        magic, _, hsz, fsz = struct.unpack_from("<IHHQ", data, pos)
        if magic != MAGIC:  # padding between fatbins
            pos += 8
            continue
        p, fend = pos + hsz, pos + hsz + fsz
        while p < fend:
            kind, _, ehsz, psz = struct.unpack_from("<HHIQ", data, p)
            arch = struct.unpack_from("<I", data, p + 28)[0]
            yield p + ehsz, psz, kind, arch
            p += ehsz + psz
        pos = fend


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, dst = sys.argv[1], sys.argv[2]
    keep = {int(a) for a in (sys.argv[3] if len(sys.argv) > 3 else "90").split(",")}
    data = bytearray(open(src, "rb").read())
    off, size = fatbin_section(src)
    sizes, zeroed = Counter(), 0
    for p, psz, kind, arch in entries(data, off, size):
        sizes[(kind, arch)] += psz
        if arch not in keep:
            data[p:p + psz] = bytes(psz)
            zeroed += psz
    for (kind, arch), n in sorted(sizes.items()):
        print("kind %d sm_%d: %.1f MiB%s" % (kind, arch, n / 2**20,
                                             "" if arch in keep else " (zeroed)"))
    if not any(arch in keep for _, arch in sizes):
        sys.exit("no entry of the kept architectures: nothing would run")
    open(dst, "wb").write(data)
    print("zeroed %.1f MiB of %.1f MiB of device code" % (zeroed / 2**20, size / 2**20))


if __name__ == "__main__":
    main()
