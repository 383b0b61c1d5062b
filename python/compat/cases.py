"""Test inputs shared by the pytest suite, the live framework checks and the
golden generator: special values as exact bit patterns per dtype, plus
seeded random data. Arrays are NumPy (bf16 as ml_dtypes.bfloat16)."""
from __future__ import annotations

from typing import Dict, List, Tuple

import ml_dtypes
import numpy as np

DTYPES: Dict[str, np.dtype] = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
}
UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}

# Per dtype: sign bit, +inf, quiet NaN, NaN payload bits, signalling NaN,
# +max, +min normal, +min subnormal, +max subnormal.
_BITS = {
    "f16": dict(sign=0x8000, inf=0x7C00, qnan=0x7E00, payload=0x0015, snan=0x7C15,
                max=0x7BFF, min_normal=0x0400, min_sub=0x0001, max_sub=0x03FF),
    "bf16": dict(sign=0x8000, inf=0x7F80, qnan=0x7FC0, payload=0x0005, snan=0x7F85,
                 max=0x7F7F, min_normal=0x0080, min_sub=0x0001, max_sub=0x007F),
    "f32": dict(sign=0x80000000, inf=0x7F800000, qnan=0x7FC00000, payload=0x12345,
                snan=0x7F812345, max=0x7F7FFFFF, min_normal=0x00800000, min_sub=0x1,
                max_sub=0x007FFFFF),
    "f64": dict(sign=1 << 63, inf=0x7FF0000000000000, qnan=0x7FF8000000000000,
                payload=0x12345, snan=0x7FF0000000012345, max=0x7FEFFFFFFFFFFFFF,
                min_normal=0x0010000000000000, min_sub=0x1, max_sub=0x000FFFFFFFFFFFFF),
}

THRESHOLDS = (0.0, 0.1, 0.75, -1.5)


def from_bits(dtype: str, bits) -> np.ndarray:
    dt = DTYPES[dtype]
    return np.asarray(bits, dtype=UINT[dt.itemsize]).view(dt)


def to_bits(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(UINT[a.dtype.itemsize])


def value_bits(dtype: str, value: float) -> int:
    """Bits of value rounded to nearest even in dtype."""
    return int(to_bits(np.array([value], dtype=DTYPES[dtype]))[0])


def special_bits(dtype: str) -> Dict[str, int]:
    b = _BITS[dtype]
    out = {
        "+0": 0, "-0": b["sign"], "+inf": b["inf"], "-inf": b["sign"] | b["inf"],
        "+qnan": b["qnan"], "-qnan": b["sign"] | b["qnan"], "+qnan_payload": b["qnan"] | b["payload"],
        "-qnan_payload": b["sign"] | b["qnan"] | b["payload"], "+snan_payload": b["snan"],
        "-snan_payload": b["sign"] | b["snan"], "+max": b["max"], "-max": b["sign"] | b["max"],
        "+min_normal": b["min_normal"], "-min_normal": b["sign"] | b["min_normal"],
        "+min_sub": b["min_sub"], "-min_sub": b["sign"] | b["min_sub"],
        "+max_sub": b["max_sub"], "-max_sub": b["sign"] | b["max_sub"],
    }
    for v in (1.0, -1.0, 0.5, -3.0):
        out[repr(v)] = value_bits(dtype, v)
    return out


def gate_bits(dtype: str) -> List[int]:
    """Special gate values plus each threshold's nearest dtype value and its
    two neighbours, and the f32-rounded threshold's neighbours (where the
    16-bit rounding and the f32 rounding of the threshold disagree)."""
    bits = list(special_bits(dtype).values())
    size = DTYPES[dtype].itemsize
    for t in THRESHOLDS[1:]:
        for v in {value_bits(dtype, t), value_bits(dtype, float(np.float32(t)))}:
            for step in (-1, 0, 1):
                bits.append(v + step)
    mask = (1 << (8 * size)) - 1
    return sorted({x & mask for x in bits})


def dy_bits(dtype: str) -> List[int]:
    s = special_bits(dtype)
    keys = ["+0", "-0", "+inf", "-inf", "+qnan_payload", "-qnan", "-qnan_payload", "+snan_payload", "-snan_payload",
            "+max_sub",
            "-max_sub", "-min_sub", "+max", "1.0", "-1.0", "0.5", "-3.0"]
    return [s[k] for k in keys]


def special_case(dtype: str) -> Tuple[np.ndarray, np.ndarray]:
    """(dy, s): every dy special against every gate special."""
    g = np.array(gate_bits(dtype), dtype=np.uint64)
    d = np.array(dy_bits(dtype), dtype=np.uint64)
    s_grid, dy_grid = np.meshgrid(g, d, indexing="ij")
    return from_bits(dtype, dy_grid.ravel()), from_bits(dtype, s_grid.ravel())


def random_case(dtype: str, n: int = 256, seed: int = 1234) -> Tuple[np.ndarray, np.ndarray]:
    """(dy, s): standard normal values with exact zeros and ties mixed in."""
    rng = np.random.default_rng(seed)
    s = rng.standard_normal(n)
    s[rng.random(n) < 0.05] = 0.0
    s[rng.random(n) < 0.02] = -0.0
    dy = rng.standard_normal(n)
    return dy.astype(DTYPES[dtype]), s.astype(DTYPES[dtype])


def tiled(a: np.ndarray, n: int) -> np.ndarray:
    """a repeated to at least n elements (to take frameworks' vector and
    multi-threaded paths, which small inputs skip)."""
    reps = -(-n // a.size)
    return np.tile(a, reps)
