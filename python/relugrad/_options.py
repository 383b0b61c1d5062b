"""Option arguments: the preset and setting tables, the checked option codes
(each error names the argument at fault), and the relugrad.Options and
relugrad.Plan objects the calls run (built once per distinct configuration).
"""
from __future__ import annotations

import math
import numbers
import sys
import warnings
from typing import Any, Dict, Optional, Tuple

from . import _relugrad as _C


def _names(kind: int) -> Dict[str, int]:
    """{canonical name: value} of one C ABI enum, from the library's table."""
    return dict(_C.enum_table(kind))


PRESETS = tuple(_names(_C.ENUM_PRESET))
GATES = _names(_C.ENUM_GATE)
COMBINES = _names(_C.ENUM_COMBINE)
DENORMALS = _names(_C.ENUM_DENORMALS)
THRESHOLD_ROUNDINGS = _names(_C.ENUM_THRESHOLD_ROUNDING)
STORES = _names(_C.ENUM_STORES)
BACKENDS = _names(_C.ENUM_BACKEND)
# The C ABI enum behind each keyword argument, for the spellings only the library knows
# (deprecated aliases).
_KINDS = {"gate": _C.ENUM_GATE, "combine": _C.ENUM_COMBINE, "denormals": _C.ENUM_DENORMALS,
          "threshold_rounding": _C.ENUM_THRESHOLD_ROUNDING, "stores": _C.ENUM_STORES,
          "backend": _C.ENUM_BACKEND}

_PRESET_IDS = {name: _C.preset_from_name(name) for name in PRESETS}


def _enum(name: str, value: Optional[str], table: Dict[str, int]) -> int:
    if value is None:
        return -1
    if isinstance(value, str):
        code = table.get(value)
        if code is not None:
            return code
        kind = _KINDS.get(name)
        if kind is not None:  # a deprecated spelling the library still accepts
            try:
                code, canonical = _C.enum_from_name(kind, value)
            except ValueError:
                canonical = None
            if canonical is not None:
                warnings.warn(f"{name}={value!r} is deprecated: use {name}={canonical!r}",
                              DeprecationWarning, stacklevel=4)
                return code
    raise ValueError(f"{name}: {value!r} is not one of {', '.join(table)}")


def _real(name: str, value: Any) -> float:
    # Exact types first: isinstance against the numbers ABCs costs about
    # 0.2 us, and a small call's whole Python path was 4 us (docs/python.md).
    if type(value) is float:
        return value
    if type(value) is int:
        return float(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a real number, got {type(value).__name__}")
    return float(value)


def _thread_count(threads: Any) -> int:
    """The threads argument of every entry point, checked: None or 0 -> 0
    (the host framework's threads: torch's intra-op threads for torch
    tensors, relugrad's default, all cores, otherwise), N >= 1 -> N."""
    if threads is None:
        return 0
    if type(threads) is int and threads >= 0:
        return threads
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads: expected an int or None, got {type(threads).__name__}")
    if threads < 0:
        raise ValueError(f"threads: must be >= 0 (None or 0 = the host framework's threads), got {threads}")
    return int(threads)


def _options(semantics: str, threshold: float, alpha: float, clip: Optional[Tuple[float, float]],
             threads: Optional[int], gate: Optional[str], combine: Optional[str], denormals: Optional[str],
             threshold_rounding: Optional[str], stores: str = "auto") -> Tuple:
    """The checked option arguments of the bindings, in their order:
    (preset, gate, combine, denormals, threshold_rounding, threshold, alpha,
    clip, clip_lo, clip_hi, threads, stores)."""
    preset = _PRESET_IDS.get(semantics) if isinstance(semantics, str) else None
    if preset is None:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")
    t = _real("threshold", threshold)
    a = _real("alpha", alpha)
    if clip is None:
        use_clip, lo, hi = False, 0.0, 0.0
    else:
        try:
            lo_v, hi_v = clip
        except (TypeError, ValueError):
            raise TypeError("clip: expected None or a (lo, hi) pair") from None
        use_clip, lo, hi = True, _real("clip[0]", lo_v), _real("clip[1]", hi_v)
    n_threads = _thread_count(threads)
    g = _enum("gate", gate, GATES)
    c = _enum("combine", combine, COMBINES)
    d = _enum("denormals", denormals, DENORMALS)
    r = _enum("threshold_rounding", threshold_rounding, THRESHOLD_ROUNDINGS)
    if not isinstance(stores, str):
        raise ValueError(f"stores: {stores!r} is not one of {', '.join(STORES)}")
    store_id = _enum("stores", stores, STORES)
    return (preset, g, c, d, r, t, a, use_clip, lo, hi, n_threads, store_id)


# relugrad.Options and relugrad.Plan are the library's own objects: a plan is
# created once (every option checked, the kernel parameters derived) and
# each call hands it the arrays only.
Options = _C.Options
Plan = _C.Plan


# Checked option codes + gate_max -> [Options, codes, {op * 8 + dtype: Plan}].
# Bounded: a program that builds configurations without end rebuilds them
# rather than growing the cache.
_RESOLVED: Dict[Tuple, list] = {}
_RESOLVED_MAX = 1024


def _resolved(codes: Tuple, gate_max: float = math.inf) -> list:
    """[Options, codes, plans] of checked option codes (_options) and gate_max.
    Keys compare floats as Python does, -0.0 == 0.0, which is exact for
    threshold, alpha and gate_max (a signed zero there opens and closes the
    same gates and scales by the same zero) but not for clip bounds, whose
    bits are written: a zero bound keys with its sign."""
    key = codes + (gate_max,)
    if codes[7]:
        lo, hi = codes[8], codes[9]
        key += (math.copysign(1.0, lo) if lo == 0 else 0.0, math.copysign(1.0, hi) if hi == 0 else 0.0)
    entry = _RESOLVED.get(key)
    if entry is None:
        p, g, c, d, r, t, a, use_clip, lo, hi, threads, stores = codes
        options = Options(p, gate=g, combine=c, denormals=d, threshold_rounding=r, threshold=t, alpha=a,
                          clip=(lo, hi) if use_clip else None, threads=threads, stores=stores,
                          gate_max=gate_max)
        if len(_RESOLVED) >= _RESOLVED_MAX:
            _RESOLVED.clear()
        entry = _RESOLVED[key] = [options, codes, {}]
    return entry


def _plan(entry: list, op: int, dtype: int) -> Any:
    """The entry's plan of op for dtype (CPU backend), created on first use."""
    plans = entry[2]
    plan = plans.get(op * 8 + dtype)
    if plan is None:
        plan = plans[op * 8 + dtype] = Plan(op, dtype, entry[0])
    return plan


def _framework_threads(threads: Optional[int], x: Any) -> Optional[int]:
    """threads None or 0 means the host framework's threads: torch's intra-op
    thread count (torch.get_num_threads()) for torch tensors, relugrad's
    default (all cores) for NumPy, JAX and other arrays; N means N."""
    if threads is None or (type(threads) is int and threads == 0):
        torch = sys.modules.get("torch")
        if torch is not None and isinstance(x, torch.Tensor):
            return torch.get_num_threads()
    return threads


def preset_settings(semantics: str) -> Dict[str, str]:
    """The settings a preset stands for, by name, e.g.
    {'gate': 'zero_if_le', 'combine': 'select', 'denormals': 'ieee', 'threshold_rounding': 'compute'}."""
    if not isinstance(semantics, str) or semantics not in PRESETS:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")
    raw = _C.preset_options(_C.preset_from_name(semantics))
    tables = {"gate": GATES, "combine": COMBINES, "denormals": DENORMALS,
              "threshold_rounding": THRESHOLD_ROUNDINGS}
    return {key: next(k for k, v in tables[key].items() if v == raw[key]) for key in tables}
