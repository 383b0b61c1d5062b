"""relugrad: exact ReLU backward (ReluGrad) with framework presets.

    import relugrad
    dx = relugrad.relu_grad(dy, x, semantics="torch")

    y, mask = relugrad.relu_forward(x)        # 1-bit mask path (ceil(n/8) bytes)
    dx = relugrad.relu_grad_mask(dy, mask)

NumPy (float16/32/64, ml_dtypes.bfloat16), PyTorch and JAX CPU arrays are
read in place; CUDA tensors and CUDA DLPack arrays run on the CUDA backend
(CUDA builds). ``relugrad.torch`` has torch.library custom ops and a drop-in
``nn.ReLU`` replacement (``mask=True`` keeps only the bitmask for backward);
``relugrad.info()`` reports the build. ``relugrad.Options`` binds a
configuration once and ``relugrad.Plan(op, dtype, options)`` resolves it for
one operator and dtype; calling a plan runs it on arrays; the functional calls keep
theirs in one bounded cache (``plan_cache_stats()``, ``plan_cache_clear()``). Large NumPy results (256 KiB and more)
come from a cache that keeps freed results' pages mapped
(``buffer_cache_stats()``, ``buffer_cache_trim()``, RELUGRAD_BUFFER_CACHE_MIB).
"""
from ._calls import mask_bytes, relu_forward, relu_grad, relu_grad_mask, relu_grad_reference
from ._info import buffer_cache_stats, buffer_cache_trim, format_info, info, set_max_isa
from ._options import (COMBINES, DENORMALS, GATES, PRESETS, STORES, THRESHOLD_ROUNDINGS, Options, Plan,
                       plan_cache_clear, plan_cache_stats, preset_settings)
from ._relugrad import version as _version

__version__ = _version()

__all__ = ["relu_grad", "relu_grad_reference", "relu_forward", "relu_grad_mask", "mask_bytes", "Options", "Plan",
           "info", "format_info", "preset_settings", "plan_cache_stats", "plan_cache_clear",
           "set_max_isa", "buffer_cache_stats", "buffer_cache_trim", "PRESETS", "GATES", "COMBINES", "DENORMALS",
           "THRESHOLD_ROUNDINGS", "STORES"]
