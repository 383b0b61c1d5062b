"""Option arguments: the preset and setting tables, the checked options
(each error names the argument at fault), and the configurations the calls
run: a relugrad.Options value and the relugrad.Plan objects made from it,
each built once per distinct configuration.
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


def _enum(name: str, value: Optional[str], table: Dict[str, int]) -> Optional[int]:
    if value is None:
        return None  # the preset's setting
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
    # Exact types first: isinstance against the numbers ABCs is slow next to
    # a small call's whole Python path (docs/python.md).
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
    if type(threads) is int and 0 <= threads <= _MAX_THREADS:
        return threads
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral):
        raise TypeError(f"threads: expected an int or None, got {type(threads).__name__}")
    if threads < 0:
        raise ValueError(f"threads: must be >= 0 (None or 0 = the host framework's threads), got {threads}")
    if threads > _MAX_THREADS:
        raise ValueError(f"threads: at most {_MAX_THREADS} (the C ABI's int32), got {threads}")
    return int(threads)


_MAX_THREADS = 2**31 - 1


# relugrad.Options and relugrad.Plan are the library's own objects: a plan is
# created once (every option checked, the kernel parameters derived) and
# each call hands it the arrays only.
Options = _C.Options
Plan = _C.Plan


def _checked_options(semantics: str, threshold: float, alpha: float, clip: Optional[Tuple[float, float]],
                     threads: Optional[int], gate: Optional[str], combine: Optional[str], denormals: Optional[str],
                     threshold_rounding: Optional[str], stores: str = "auto",
                     gate_max: Optional[float] = None, keep_negative_zero: bool = False) -> Any:
    """The relugrad.Options of the calls' keyword arguments. Each argument is
    checked here first, so the error names it; the library then validates
    the values (threshold is NaN, clip range is empty, ...)."""
    preset = _PRESET_IDS.get(semantics) if isinstance(semantics, str) else None
    if preset is None:
        raise ValueError(f"semantics: {semantics!r} is not one of {', '.join(PRESETS)}")
    t = _real("threshold", threshold)
    a = _real("alpha", alpha)
    if clip is None:
        bounds = None
    else:
        try:
            lo, hi = clip
        except (TypeError, ValueError):
            raise TypeError("clip: expected None or a (lo, hi) pair") from None
        bounds = (_real("clip[0]", lo), _real("clip[1]", hi))
    n_threads = _thread_count(threads)
    g = _enum("gate", gate, GATES)
    c = _enum("combine", combine, COMBINES)
    d = _enum("denormals", denormals, DENORMALS)
    r = _enum("threshold_rounding", threshold_rounding, THRESHOLD_ROUNDINGS)
    if not isinstance(stores, str):
        raise ValueError(f"stores: {stores!r} is not one of {', '.join(STORES)}")
    store_id = _enum("stores", stores, STORES)
    h = math.inf if gate_max is None else _real("gate_max", gate_max)
    if type(keep_negative_zero) is not bool:
        raise TypeError(f"keep_negative_zero: expected a bool, got {type(keep_negative_zero).__name__}")
    return Options(preset, gate=g, combine=c, denormals=d, threshold_rounding=r, threshold=t, alpha=a, clip=bounds,
                   threads=n_threads, stores=store_id, gate_max=h, keep_negative_zero=keep_negative_zero)


class _Config:
    """One configuration: its relugrad.Options (CPU backend) and the plans
    made from it, each created on first use (plan): per op and dtype on the
    CPU, per op, dtype and stream on CUDA. The stream is an execution setting of
    the options (Options.with_execution), as in relugrad_options."""

    __slots__ = ("options", "plans")

    def __init__(self, options: Any) -> None:
        self.options = options
        self.plans: Dict[Any, Any] = {}

    def plan(self, op: int, dtype: int, stream: Optional[int] = None) -> Any:
        """The plan of op for dtype: the CPU's (stream None), or the CUDA backend's launching on
        stream (0: the default stream; _arrays._DeviceScope.stream gives a call's). The one plan
        lookup of the calls and of relugrad.torch; the key is spelled here only: op * 8 + dtype
        (the library's dtype codes are below 8), paired with the stream on CUDA."""
        key = op * 8 + dtype
        if stream is not None:
            key = (key, stream)
        plan = self.plans.get(key)
        if plan is None:
            options = self.options if stream is None else self.options.with_execution(_C.BACKEND_CUDA, stream)
            plan = self.plans[key] = Plan(op, dtype, options)
        return plan


# The one cache of the calls: a key -> its configuration, whose plans are made
# per (op, dtype, device) on first use. Three kinds of key share it, each a
# step of the same resolution (keyword arguments -> Options -> plans):
#   - a relugrad.Options value. Options compare by their bytes, so -0.0 and
#     0.0 clip bounds (the clamp writes the bound's own bits) are two entries;
#   - the exact keyword arguments of a functional call, a 17-tuple with the
#     types of the numbers (True == 1 == 1.0 in Python, but only the numbers
#     are valid), so a repeated call neither checks nor builds its options
#     again. Only valid arguments that name no deprecated spelling (those warn
#     on every call) are entered. Floats key as Python compares them,
#     -0.0 == 0.0, which is exact for threshold, alpha and gate_max (a signed
#     zero there opens and closes the same gates and scales by the same zero:
#     test_plan) but not for clip bounds, whose bits the clamp writes: they key
#     with their signs;
#   - relugrad.torch's fixed signature, the 4-tuple (semantics, threshold,
#     alpha, threads) of floats and an int: the per-call fast path of its ops.
# An Options value equals no tuple and tuples of different lengths never
# compare equal, so the kinds cannot collide. Bounded: at _CACHE_MAX keys the
# whole cache is cleared, so a program that builds configurations without end
# rebuilds them rather than growing it; a configuration is rebuilt from its
# key alone, so clearing never changes a result.
_CACHE: Dict[Any, _Config] = {}
_CACHE_MAX = 1024


def _enter(key: Any, config: _Config) -> _Config:
    if len(_CACHE) >= _CACHE_MAX:
        _CACHE.clear()
    _CACHE[key] = config
    return config


def _resolved(options: Any) -> _Config:
    config = _CACHE.get(options)
    if config is None:
        config = _enter(options, _Config(options))
    return config


_UNKEYED = object()  # a clip value the cache does not key (checked on every call)
_BOUND_TYPES = (float, int)


def _clip_key(clip: Any) -> Any:
    if clip is None:
        return None
    if type(clip) is tuple and len(clip) == 2:
        lo, hi = clip
        if type(lo) in _BOUND_TYPES and type(hi) in _BOUND_TYPES:
            return (lo, type(lo), math.copysign(1.0, lo), hi, type(hi), math.copysign(1.0, hi))
    return _UNKEYED


def _canonical(gate: Optional[str], combine: Optional[str], denormals: Optional[str],
               threshold_rounding: Optional[str], stores: str) -> bool:
    return ((gate is None or gate in GATES) and (combine is None or combine in COMBINES)
            and (denormals is None or denormals in DENORMALS)
            and (threshold_rounding is None or threshold_rounding in THRESHOLD_ROUNDINGS) and stores in STORES)


def _call_key(semantics: Any, threshold: Any, alpha: Any, clip_key: Any, threads: Any, gate: Any, combine: Any,
              denormals: Any, threshold_rounding: Any, stores: Any, gate_max: Any, keep_negative_zero: Any) -> tuple:
    """The cache key of a functional call's keyword arguments (clip_key: _clip_key(clip), never
    _UNKEYED); hashing it raises TypeError for an unhashable argument."""
    return (semantics, threshold, type(threshold), alpha, type(alpha), clip_key, threads, type(threads), gate,
            combine, denormals, threshold_rounding, stores, gate_max, type(gate_max), keep_negative_zero,
            type(keep_negative_zero))


def _config(semantics: str, threshold: float, alpha: float, clip: Optional[Tuple[float, float]],
            threads: Optional[int], gate: Optional[str], combine: Optional[str], denormals: Optional[str],
            threshold_rounding: Optional[str], stores: str = "auto", gate_max: Optional[float] = None,
            keep_negative_zero: bool = False) -> _Config:
    """The configuration of a call's keyword arguments (checked on first use)."""
    clip_key = _clip_key(clip)
    key = None
    if clip_key is not _UNKEYED:
        key = _call_key(semantics, threshold, alpha, clip_key, threads, gate, combine, denormals, threshold_rounding,
                        stores, gate_max, keep_negative_zero)
        try:
            config = _CACHE.get(key)
        except TypeError:  # an unhashable argument: the checks below say what is wrong
            key = config = None
        if config is not None:
            return config
    config = _resolved(_checked_options(semantics, threshold, alpha, clip, threads, gate, combine, denormals,
                                        threshold_rounding, stores, gate_max, keep_negative_zero))
    if key is not None and _canonical(gate, combine, denormals, threshold_rounding, stores):
        _enter(key, config)
    return config


def _torch_config(semantics: str, threshold: float, alpha: float, threads: int) -> _Config:
    """The configuration of a relugrad.torch kernel call (threshold and alpha
    as floats, threads already resolved to torch's count). Under the torch
    preset the mask forward keeps -0 (torch.relu's y); no other op reads it."""
    key = (semantics, threshold, alpha, threads)
    config = _CACHE.get(key)
    if config is None:
        config = _config(semantics, threshold, alpha, None, threads, None, None, None, None,
                         keep_negative_zero=semantics == "torch")
        if type(threshold) is float and type(alpha) is float and type(threads) is int:
            _enter(key, config)
    return config


def plan_cache_stats() -> Dict[str, int]:
    """The cache of configurations behind the functional calls and the
    relugrad.torch ops: {'keys': entries (keyword arguments, Options values and
    relugrad.torch signatures, several per configuration), 'configurations':
    distinct relugrad.Options among them, 'plans': relugrad.Plan objects they
    hold (one per op, dtype and device used), 'max_keys': the bound at which
    the cache is cleared}."""
    configs = {id(config): config for config in list(_CACHE.values())}
    return {"keys": len(_CACHE), "configurations": len(configs),
            "plans": sum(len(config.plans) for config in configs.values()), "max_keys": _CACHE_MAX}


def plan_cache_clear() -> None:
    """Empty the cache of configurations (plan_cache_stats): the next calls
    check their arguments and create their plans again, with the same results."""
    _CACHE.clear()


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
