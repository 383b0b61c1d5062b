"""What the build and the process are: info() and format_info() (what
``relugrad info`` prints), the SIMD cap, the buffer cache's counters, and the
torch-native library's stamp (read without importing torch).
"""
from __future__ import annotations

import os
from typing import Any, Dict, Optional

from . import _relugrad as _C


def set_max_isa(name: Optional[str]) -> None:
    """Caps SIMD dispatch at the named Highway target ("avx2", "sse4", "scalar"...);
    None or "best" lifts the cap. Process-wide: call before concurrent work."""
    _C.set_max_isa(name)


def info() -> Dict[str, Any]:
    """What ``relugrad info`` prints, as a dict: version, build facts (compiler,
    highway, simd_compiled, backends, grain), the SIMD targets attainable here
    (best first) and the one selected, the default thread count."""
    facts: Dict[str, Any] = {}
    for line in _C.build_info().splitlines():
        key, sep, value = line.partition(": ")
        if sep:
            facts[key.strip()] = value.strip()
    facts["simd_attainable"] = list(_C.isa_names())
    facts["simd_selected"] = _C.isa_selected()
    facts["threads_default"] = _C.default_threads()
    facts["backends"] = {name: bool(_C.backend_available(code))
                         for name, code in _C.enum_table(_C.ENUM_BACKEND)}
    built_for = _torch_native_stamp()
    facts["torch_native"] = (f"built for torch {built_for}" if built_for is not None
                             else f"not built ({_torch_native_absence()})")
    return facts


_TORCH_NATIVE_LIB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_relugrad_torch.so")


def _torch_native_stamp() -> Optional[str]:
    """The torch version relugrad/_relugrad_torch.so was built against (the
    stamp file beside it), or None when it was not built; read without
    importing torch. relugrad.torch loads the library only under that version."""
    if not os.path.exists(_TORCH_NATIVE_LIB):
        return None
    try:
        with open(os.path.splitext(_TORCH_NATIVE_LIB)[0] + ".torch_version", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return None


def _torch_native_absence() -> str:
    """Why relugrad/_relugrad_torch.so was not built: the reason the build wrote beside it."""
    try:
        with open(os.path.splitext(_TORCH_NATIVE_LIB)[0] + ".not_built", encoding="utf-8") as f:
            return f.read().strip()
    except OSError:
        return "no torch importable when the package was built"


def format_info(facts: Optional[Dict[str, Any]] = None) -> str:
    """info() as the ``key: value`` lines of ``relugrad info``."""
    facts = info() if facts is None else facts
    lines = []
    for key, value in facts.items():
        if isinstance(value, list):
            value = " ".join(value)
        elif isinstance(value, dict):
            value = " ".join(f"{k}={'yes' if v else 'no'}" for k, v in value.items())
        lines.append(f"{key}: {value}")
    return "\n".join(lines)


def buffer_cache_stats() -> Dict[str, int]:
    """relugrad's output buffer cache: ``cached_bytes`` (freed results kept
    with their pages for reuse), ``live_bytes`` (results alive now),
    ``hits`` and ``misses`` (allocating calls served from the cache or not).
    The cap is ``RELUGRAD_BUFFER_CACHE_MIB`` (default 1024, 0 = off)."""
    return dict(_C.buffer_cache_stats())


def buffer_cache_trim() -> int:
    """Frees every cached block (results still alive are untouched); returns
    the bytes given back."""
    return int(_C.buffer_cache_trim())
