#!/usr/bin/env python3
"""TOSA 1.1 MX programs for the frontend corpus, with their expected bytes.

Writes test/Frontend/tosa/NAME.mlir (a program using
`tosa.cast_to_block_scaled` / `tosa.cast_from_block_scaled`) and NAME.io.json
(inputs, and the outputs that the TOSA specification's pseudocode defines:
CAST_TO_BLOCK_SCALED with calc_block_scale, CAST_FROM_BLOCK_SCALED). The
expected bytes come from this file's own restatement of that pseudocode in
exact rational arithmetic (fractions), not from the compiler or the runtime,
so test/Frontend/tosa.test compares fusion-opt's lowering (raised to the
runtime's quantizer, or the expansion itself) against an independent oracle.

Run by hand (needs numpy for f32 products; never in CI):
  python3 tools/frontend-corpus/tosa_mx.py test/Frontend/tosa
Deterministic: the same files every run.
"""
import json
import math
import os
import random
import struct
import sys
from fractions import Fraction

import numpy as np

BLOCK = 32
# name: (bias, mantissa bits, largest finite, overflow code or None -> NaN,
# width in bits). The sub-byte elements (f6, f4) have neither NaN nor Inf:
# the specification's NaN for a block holding NaN or Inf has no code there,
# and fusion-expand-tosa-mx writes +0 (NAN_CODE); no finite quotient
# overflows (max_abs / scale <= the element's maximum).
ELEM = {
    "f8E4M3FN": (7, 3, 448.0, None, 8),
    "f8E5M2": (15, 2, 57344.0, 0x7C, 8),
    "f6E2M3FN": (1, 3, 7.5, None, 6),
    "f6E3M2FN": (3, 2, 28.0, None, 6),
    "f4E2M1FN": (1, 1, 6.0, None, 4),
}
NAN_CODE = {"f8E4M3FN": 0x7F, "f8E5M2": 0x7E, "f6E2M3FN": 0, "f6E3M2FN": 0,
            "f4E2M1FN": 0}


def sign_bit(elem):
    return 1 << (ELEM[elem][4] - 1)


def f32_of_bits(u):
    return struct.unpack("<f", struct.pack("<I", u))[0]


def bits_of_f32(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]


def bf16_round_bits(u32):
    """f32 bits -> bf16 bits, round to nearest even (NaN kept quiet)."""
    if (u32 & 0x7F800000) == 0x7F800000 and (u32 & 0x7FFFFF):
        return ((u32 >> 16) | 0x40) & 0xFFFF
    return ((u32 + 0x7FFF + ((u32 >> 16) & 1)) >> 16) & 0xFFFF


def encode(v, elem):
    """round_to_nearest_float to an 8-bit element of `elem` (v: a Python
    float or Fraction, or NaN); out-of-range values give Inf where the
    type has one, else NaN."""
    bias, mbits, largest, inf_code, width = ELEM[elem]
    if isinstance(v, float) and math.isnan(v):
        return NAN_CODE[elem]
    sign = sign_bit(elem) if v < 0 or (isinstance(v, float) and math.copysign(1, v) < 0) else 0
    a = Fraction(abs(v)) if not (isinstance(v, float) and math.isinf(v)) else None
    if a is None:
        assert width == 8, "an Inf quotient for a sub-byte element"
        return sign | (inf_code if inf_code is not None else 0x7F)
    min_normal = Fraction(2) ** (1 - bias)
    step_sub = min_normal / (1 << mbits)
    if a < min_normal:
        q = a / step_sub
        n = math.floor(q)
        r = q - n
        if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
            n += 1
        return sign | n  # n == 1 << mbits is the smallest normal's code
    e = 0
    while a >= Fraction(2) ** (e + 1):
        e += 1
    while a < Fraction(2) ** e:
        e -= 1
    q = (a / Fraction(2) ** e - 1) * (1 << mbits)
    n = math.floor(q)
    r = q - n
    if r > Fraction(1, 2) or (r == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n == 1 << mbits:
        n, e = 0, e + 1
    value = (1 + Fraction(n, 1 << mbits)) * Fraction(2) ** e
    if value > Fraction(largest):
        assert width == 8, "a finite quotient past a sub-byte element's maximum"
        return sign | (inf_code if inf_code is not None else 0x7F)
    return sign | ((e + bias) << mbits) | n


def decode(code, elem):
    bias, mbits, _, inf_code, width = ELEM[elem]
    sign = -1.0 if code & sign_bit(elem) else 1.0
    mag = code & (sign_bit(elem) - 1)
    if elem == "f8E4M3FN" and mag == 0x7F:
        return float("nan")
    if elem == "f8E5M2" and mag >= 0x7C:
        return sign * math.inf if mag == 0x7C else float("nan")
    e, m = mag >> mbits, mag & ((1 << mbits) - 1)
    if e == 0:
        return sign * math.ldexp(m, 1 - bias - mbits)
    return sign * math.ldexp((1 << mbits) + m, e - bias - mbits)


def block_scale(block, elem):
    """calc_block_scale(max_abs): (e8m0 byte, exponent or None for NaN)."""
    if any(math.isnan(v) for v in block):
        return 255, None
    amax = max(abs(v) for v in block)
    if math.isinf(amax):
        return 255, None
    if amax == 0:
        return 0, -127
    ratio = Fraction(amax) / Fraction(ELEM[elem][2])
    # floor(log2(ratio)), exactly.
    fl = 0
    while ratio >= Fraction(2) ** (fl + 1):
        fl += 1
    while ratio < Fraction(2) ** fl:
        fl -= 1
    if elem == "f8E4M3FN":  # ceil(log2(ratio))
        e = fl if ratio == Fraction(2) ** fl else fl + 1
    else:  # floor(log2(ratio)) + 1
        e = fl + 1
    e = max(-127, min(127, e))
    return e + 127, e


def quantize(values, cols, elem):
    codes, scales = [], []
    for r in range(len(values) // cols):
        row = values[r * cols:(r + 1) * cols]
        for b in range(cols // BLOCK):
            block = row[b * BLOCK:(b + 1) * BLOCK]
            byte, e = block_scale(block, elem)
            scales.append(byte)
            for v in block:
                if e is None or math.isnan(v):
                    codes.append(encode(float("nan"), elem))
                else:  # -0.0 keeps its sign (the sign bit's code)
                    c = encode(Fraction(v) / Fraction(2) ** e, elem)
                    codes.append(c | (sign_bit(elem) if math.copysign(1, v) < 0 else 0))
    return codes, scales


def dequantize(codes, scales, cols, elem, out):
    """f32(x) * f32(scale) in f32, then rounded to `out` (bits)."""
    res = []
    for i, c in enumerate(codes):
        byte = scales[(i // cols) * (cols // BLOCK) + (i % cols) // BLOCK]
        s = np.float32("nan") if byte == 255 else np.float32(math.ldexp(1.0, byte - 127))
        with np.errstate(all="ignore"):
            p = np.float32(decode(c, elem)) * s
        u = bits_of_f32(float(p)) if not np.isnan(p) else 0x7FC00000
        res.append(u if out == "f32" else bf16_round_bits(u))
    return res


def probe_values(n, seed, wide, maxima=(448.0, 57344.0, 6.0)):
    """Blocks of edge cases for the scale rule, then random blocks;
    `maxima`: the element maxima whose multiples 2^k (and one ulp around
    them) the scale-rule blocks take."""
    rng = random.Random(seed)
    nan, inf = float("nan"), math.inf
    out = []
    b = 0
    while len(out) < n:
        blk = [rng.gauss(0, 1) * math.ldexp(1, rng.randint(-30, 30))
               for _ in range(BLOCK)]
        kind = b % 16
        at = rng.randrange(BLOCK)
        m = maxima[b % len(maxima)] * math.ldexp(1, (b % 11) - 5)
        if kind == 0:
            blk = [0.0] * BLOCK
            blk[at] = -0.0
        elif kind == 1:
            blk[at] = nan
        elif kind == 2:
            blk[at] = inf if b % 2 else -inf
        elif kind == 3:  # amax exactly a format maximum times 2^k
            blk = [math.fmod(abs(v), m) * (1 if i % 2 else -1)
                   for i, v in enumerate(blk)]
            blk[at] = -m if at % 2 else m
        elif kind == 4:  # just above it
            blk = [math.fmod(abs(v), m) for v in blk]
            blk[at] = f32_of_bits(bits_of_f32(m) + 1)
        elif kind == 5:  # just below it
            blk = [math.fmod(abs(v), m) * 0.5 for v in blk]
            blk[at] = f32_of_bits(bits_of_f32(m) - 1)
        elif kind == 6:  # f32 subnormals
            blk = [math.ldexp(rng.gauss(0, 1), -135) for _ in range(BLOCK)]
        elif kind == 7:  # near the top of f32
            blk = [math.ldexp(max(-3.9, min(3.9, rng.gauss(0, 1))), 126)
                   for _ in range(BLOCK)]
            blk[at] = 3.4028234663852886e38
        elif kind == 8:  # rounding ties after the scale
            blk = [math.ldexp(1 + (2 * (i % 8) + 1) / 32, (i % 5) - 2)
                   for i in range(BLOCK)]
            blk[at] = 16.0
        elif kind == 9:  # wide range: elements become subnormal codes
            blk = [math.ldexp(rng.gauss(0, 1), -(i % 24)) for i in range(BLOCK)]
        elif kind == 10:  # amax a power of two
            blk[at] = math.ldexp(1.0, rng.randint(-20, 20))
            blk = [math.fmod(v, blk[at]) if i != at else v
                   for i, v in enumerate(blk)]
        elif kind == 11:  # NaN and Inf in one block
            blk[at] = nan
            blk[(at + 5) % BLOCK] = -inf
        elif kind == 12:  # tiny normal amax: the scale clips at 2^-127
            blk = [math.ldexp(1 + i / 64, -126) for i in range(BLOCK)]
        out.extend(blk)
        b += 1
    vals = out[:n]
    # Round to the input type, as the program's input holds it.
    res = []
    for v in vals:
        u = bits_of_f32(v) if not math.isnan(v) else 0x7FC00000
        if wide == "bf16":
            u = bf16_round_bits(u) << 16
        res.append(u)
    return res


def hex_of(words, width):
    return b"".join(w.to_bytes(width // 8, "little") for w in words).hex()


def tensor(shape, elem):
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def write(outdir, name, text, inputs, outputs):
    with open(os.path.join(outdir, name + ".mlir"), "w") as f:
        f.write(f"// Generated by tools/frontend-corpus/tosa_mx.py ({name}). "
                "Do not edit.\n" + text)
    with open(os.path.join(outdir, name + ".io.json"), "w") as f:
        json.dump({"inputs": inputs, "outputs": outputs}, f, indent=1)
        f.write("\n")


def quant_program(outdir, name, shape, wide, elem, seed):
    n = math.prod(shape)
    cols = shape[-1]
    # The 8-bit programs keep the maxima they were generated with.
    bits = probe_values(n, seed, wide) if ELEM[elem][4] == 8 else \
        probe_values(n, seed, wide, (ELEM[elem][2], 6.0, 448.0))
    vals = [f32_of_bits(u) for u in bits]  # bf16 bits sit in the top half
    codes, scales = quantize(vals, cols, elem)
    sshape = shape[:-1] + [cols // BLOCK]
    text = ("module {\n"
            f"  func.func @main(%arg0: {tensor(shape, wide)}) -> "
            f"({tensor(shape, elem)}, {tensor(sshape, 'f8E8M0FNU')}) {{\n"
            f"    %q:2 = tosa.cast_to_block_scaled %arg0 {{block_size = "
            f"#tosa.block_size<BLOCK_SIZE_32>}} : ({tensor(shape, wide)}) -> "
            f"({tensor(shape, elem)}, {tensor(sshape, 'f8E8M0FNU')})\n"
            f"    return %q#0, %q#1 : {tensor(shape, elem)}, "
            f"{tensor(sshape, 'f8E8M0FNU')}\n"
            "  }\n}\n")
    width = 32 if wide == "f32" else 16
    words = bits if wide == "f32" else [u >> 16 for u in bits]
    write(outdir, name, text,
          [{"dtype": wide, "shape": shape, "hex": hex_of(words, width)}],
          [{"dtype": elem, "shape": shape, "hex": hex_of(codes, 8)},
           {"dtype": "f8E8M0FNU", "shape": sshape, "hex": hex_of(scales, 8)}])


def dequant_program(outdir, name, shape, elem, out, seed):
    rng = random.Random(seed)
    n = math.prod(shape)
    cols = shape[-1]
    codes = [rng.randrange(1 << ELEM[elem][4]) for _ in range(n)]
    sshape = shape[:-1] + [cols // BLOCK]
    # Scale bytes over the whole e8m0 range, with 0, 254 and NaN (255).
    scales = [[0, 1, 127, 254, 255, 100, 150, 200][i % 8] if i < 8
              else rng.randrange(256) for i in range(math.prod(sshape))]
    res = dequantize(codes, scales, cols, elem, out)
    text = ("module {\n"
            f"  func.func @main(%arg0: {tensor(shape, elem)}, %arg1: "
            f"{tensor(sshape, 'f8E8M0FNU')}) -> {tensor(shape, out)} {{\n"
            f"    %0 = tosa.cast_from_block_scaled %arg0, %arg1 {{block_size = "
            f"#tosa.block_size<BLOCK_SIZE_32>}} : ({tensor(shape, elem)}, "
            f"{tensor(sshape, 'f8E8M0FNU')}) -> {tensor(shape, out)}\n"
            f"    return %0 : {tensor(shape, out)}\n"
            "  }\n}\n")
    write(outdir, name, text,
          [{"dtype": elem, "shape": shape, "hex": hex_of(codes, 8)},
           {"dtype": "f8E8M0FNU", "shape": sshape, "hex": hex_of(scales, 8)}],
          [{"dtype": out, "shape": shape,
            "hex": hex_of(res, 32 if out == "f32" else 16)}])


def main():
    outdir = sys.argv[1]
    os.makedirs(outdir, exist_ok=True)
    quant_program(outdir, "tosa_mxfp8_f32", [8, 256], "f32", "f8E4M3FN", 1)
    quant_program(outdir, "tosa_mxfp8_bf16_3d", [2, 4, 128], "bf16",
                  "f8E4M3FN", 2)
    quant_program(outdir, "tosa_mxfp8e5m2_f32", [8, 256], "f32", "f8E5M2", 3)
    quant_program(outdir, "tosa_mxfp8_f32_1d", [512], "f32", "f8E4M3FN", 7)
    dequant_program(outdir, "tosa_dequant_mxfp8_f32", [4, 128], "f8E4M3FN",
                    "f32", 5)
    dequant_program(outdir, "tosa_dequant_mxfp8e5m2_bf16", [4, 128], "f8E5M2",
                    "bf16", 6)
    # The sub-byte elements (one element a byte in the .io files).
    quant_program(outdir, "tosa_mxfp4_f32", [8, 256], "f32", "f4E2M1FN", 8)
    quant_program(outdir, "tosa_mxfp6e2m3_bf16", [4, 256], "bf16",
                  "f6E2M3FN", 9)
    quant_program(outdir, "tosa_mxfp6e3m2_f32_3d", [2, 4, 128], "f32",
                  "f6E3M2FN", 10)
    dequant_program(outdir, "tosa_dequant_mxfp4_f32", [4, 128], "f4E2M1FN",
                    "f32", 11)
    dequant_program(outdir, "tosa_dequant_mxfp6e3m2_bf16", [4, 128],
                    "f6E3M2FN", "bf16", 12)


if __name__ == "__main__":
    main()
