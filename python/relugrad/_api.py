"""The names of the Python API in one namespace: the public functions and
tables (re-exported by relugrad/__init__.py) and the array and option
helpers relugrad.torch builds on. Each lives in the module of its job:
_arrays (array kinds, views, results, device scope), _options (presets,
checked options, configurations and their plans), _calls (the calls), _info
(build facts, buffer cache).
"""
from ._arrays import (_BF16, _CACHED_MIN_BYTES, _KDL_CPU, _KDL_CUDA, _KDL_CUDA_HOST,  # noqa: F401
                      _KDL_CUDA_MANAGED, ArrayLike, _as_kind_of, _binding_view, _check_mask_dtype,
                      _DeviceScope, _kind, _mask_view, _new_like, _on_cuda, _require_cuda, _same_dtype,
                      _torch_host_code, _torch_host_dtype, _unsupported, _writable_out)
from ._calls import (_run, _torch_host_call, mask_bytes, relu_forward, relu_grad,  # noqa: F401
                     relu_grad_mask, relu_grad_reference)
from ._info import (_TORCH_NATIVE_LIB, _torch_native_absence, _torch_native_stamp,  # noqa: F401
                    buffer_cache_stats, buffer_cache_trim, format_info, info, set_max_isa)
from ._options import (_PRESET_IDS, COMBINES, DENORMALS, GATES, PRESETS, STORES,  # noqa: F401
                       THRESHOLD_ROUNDINGS, _config, _enum, _framework_threads, _real, _thread_count,
                       _torch_config, preset_settings)
