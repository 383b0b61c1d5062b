// relugrad's RELUGRAD_BACKEND_ASCEND_TWIN: the AscendC kernel executed by the
// CPU twin on host memory, as a row of the backend interface
// (core/backend.h). What the kernel cannot compute is refused at plan
// create (Supports). A twin violation is a bug in the kernel or the tiling,
// reported as RELUGRAD_INTERNAL_ERROR with the twin's message.
#include <cmath>
#include <cstdlib>
#include <exception>
#include <system_error>

#include "ascend/blocked_mask.h"
#include "ascend/twin_launch.h"
#include "core/backend.h"
#include "core/error.h"
#include "core/rules.h"
#include "core/validate.h"

namespace relugrad {
namespace {

// RELUGRAD_ASCEND_TWIN_CORES overrides the core count the tiling assumes.
int TwinCores() {
  const char* env = std::getenv("RELUGRAD_ASCEND_TWIN_CORES");
  if (env != nullptr) {
    const int v = std::atoi(env);
    if (v >= 1 && v <= 254) return v;
  }
  return ascend::kDefaultCores;
}

relugrad_status Supports(relugrad_plan_op op, const Rules&, const KernelParams& params) {
  if (op == RELUGRAD_OP_RELU_FORWARD_MASK || op == RELUGRAD_OP_RELU_GRAD_MASK) {
    // The mask kernels' own refusals (f64, multiply, alpha, clip, bounds).
    ascend::MaskTilingRequest request;
    request.dtype = params.dtype;
    ReluV2TilingData unused;
    const char* why = "";
    if (!ascend::MakeReluV2Tiling(request, params, &unused, &why)) {
      return Fail(RELUGRAD_UNSUPPORTED, "ascend-twin: %s", why);
    }
    return RELUGRAD_OK;
  }
  if (op != RELUGRAD_OP_RELU_GRAD) {
    return Fail(RELUGRAD_UNSUPPORTED, "ascend-twin: operator %d has no Ascend kernel",
                static_cast<int>(op));
  }
  // |alpha| beyond the f32 range rounds to inf, and 0 * inf must give the
  // default (negative) NaN; Muls on the NPU would produce its own NaN, which
  // the kernel cannot tell from a dy NaN lane. Refuse rather than differ
  // (found by api_fuzz).
  if (params.closed == ClosedRule::kMulAlpha && std::isinf(params.alpha_f32)) {
    return Fail(RELUGRAD_UNSUPPORTED,
                "ascend-twin: |alpha| = %g exceeds the f32 range (the kernel multiplies in f32)",
                params.alpha);
  }
  if (params.dtype == Dtype::kF64) {
    return Fail(
        RELUGRAD_UNSUPPORTED,
        "ascend-twin: f64 is not supported (910B vector units have no f64); use f32/f16/bf16");
  }
  return RELUGRAD_OK;
}

// The twin reads no execution setting: its block count is the tiling's.
relugrad_status ReluGrad(const KernelParams& params, const Execution&, int32_t, int64_t n,
                         const void* dy, const void* s, void* dx) {
  if (n == 0) return RELUGRAD_OK;
  ascend::TilingRequest request;
  request.dtype = params.dtype;
  request.n = n;
  request.dx_address = reinterpret_cast<uintptr_t>(dx);
  request.cores = TwinCores();
  ascend::TwinRun run;
  const char* why = "";
  try {
    if (!ascend::RunOnTwin(request, dy, s, dx, params, &run, &why)) {
      return Fail(RELUGRAD_UNSUPPORTED, "ascend-twin: %s", why);
    }
  } catch (const ascend_twin::TwinViolation& e) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "%s", e.what());
  } catch (const std::system_error& e) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "ascend-twin: could not start block threads: %s",
                e.what());
  } catch (const std::bad_alloc&) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "ascend-twin: out of memory");
  }
  return RELUGRAD_OK;
}

// Runs one mask kernel, mapping twin failures as ReluGrad does.
template <class Run>
relugrad_status RunMask(Run run) {
  const char* why = "";
  try {
    if (!run(&why)) return Fail(RELUGRAD_UNSUPPORTED, "ascend-twin: %s", why);
  } catch (const ascend_twin::TwinViolation& e) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "%s", e.what());
  } catch (const std::system_error& e) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "ascend-twin: could not start block threads: %s",
                e.what());
  } catch (const std::bad_alloc&) {
    return Fail(RELUGRAD_INTERNAL_ERROR, "ascend-twin: out of memory");
  }
  return RELUGRAD_OK;
}

ascend::MaskTilingRequest MaskRequest(const KernelParams& params, int64_t n) {
  ascend::MaskTilingRequest request;
  request.dtype = params.dtype;
  request.n = n;
  request.cores = TwinCores();
  return request;
}

// The flat-layout ReluV2 kernel: relugrad's own mask.
relugrad_status ReluForwardMask(const KernelParams& params, const Execution&, int64_t n,
                                const void* x, void* y, uint8_t* mask) {
  if (n == 0) return RELUGRAD_OK;
  return RunMask([&](const char** why) {
    ascend::MaskTwinRun run;
    return ascend::RunReluV2OnTwin(MaskRequest(params, n), params, x, y, mask, &run, why);
  });
}

// The flat-layout ReluGradV2 kernel.
relugrad_status ReluGradMask(const KernelParams& params, const Execution&, int64_t n,
                             const void* dy, const uint8_t* mask, void* dx) {
  if (n == 0) return RELUGRAD_OK;
  return RunMask([&](const char** why) {
    ascend::MaskTwinRun run;
    return ascend::RunReluGradV2OnTwin(MaskRequest(params, n), params, dy, mask, dx, &run, why);
  });
}

constexpr BackendOps kAscendTwin = {"ascend_twin",   true,        Supports, ReluGrad,
                                    ReluForwardMask, ReluGradMask};

// The checks of the blocked entry points (blocked_mask.h): options, dtype,
// format, shape, the arrays. *count = N*C*H*W and *mask_bytes on success.
relugrad_status CheckBlocked(relugrad_dtype dtype, relugrad_x_format format, const BlockedShape& s,
                             const relugrad_options* options, const void* in, const void* mask,
                             const void* out, KernelParams* params, int64_t* count,
                             int64_t* mask_bytes) {
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, 0));
  Rules rules;
  Execution execution;
  RELUGRAD_RETURN_IF_ERROR(ResolveOptions(options, &rules, &execution));
  if (execution.backend != RELUGRAD_BACKEND_ASCEND_TWIN) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "the blocked ReluV2 mask is served by the ascend_twin backend only, not %s",
                FindBackendOps(execution.backend)->name);
  }
  if (format != RELUGRAD_X_NCHW && format != RELUGRAD_X_NHWC) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "x format %d: the blocked mask is built from an NCHW or an NHWC x",
                static_cast<int>(format));
  }
  *mask_bytes = relugrad_mask_blocked_bytes(s.n, s.c, s.h, s.w);
  *count = BlockedShapeElements(s);
  if (*mask_bytes < 0 || *count < 0) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "shape (%lld, %lld, %lld, %lld): a dimension is negative or the size overflows",
                static_cast<long long>(s.n), static_cast<long long>(s.c),
                static_cast<long long>(s.h), static_cast<long long>(s.w));
  }
  const int64_t elem = static_cast<int64_t>(relugrad_dtype_size(dtype));
  RELUGRAD_RETURN_IF_ERROR(ValidateCount(*count, elem));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("input", in, *count, elem));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("output", out, *count, elem));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("mask", mask, *mask_bytes, 1));
  RELUGRAD_RETURN_IF_ERROR(
      ValidateAliasing("output", out, *count * elem, "input", in, *count * elem));
  *params = MakeKernelParams(static_cast<Dtype>(dtype), rules);
  return RELUGRAD_OK;
}

ascend::BlockedTilingRequest BlockedRequest(ascend::MaskOp op, const KernelParams& params,
                                            relugrad_x_format format, const BlockedShape& s) {
  ascend::BlockedTilingRequest request;
  request.op = op;
  request.dtype = params.dtype;
  request.format = format;
  request.n = s.n;
  request.c = s.c;
  request.h = s.h;
  request.w = s.w;
  request.cores = TwinCores();
  return request;
}

}  // namespace

const BackendOps& AscendTwinBackendOps() { return kAscendTwin; }

relugrad_status AscendTwinReluForwardBlocked(relugrad_dtype dtype, relugrad_x_format format,
                                             const BlockedShape& shape, const void* x, void* y,
                                             uint8_t* mask, const relugrad_options* options) {
  KernelParams params;
  int64_t count = 0, mask_bytes = 0;
  RELUGRAD_RETURN_IF_ERROR(
      CheckBlocked(dtype, format, shape, options, x, mask, y, &params, &count, &mask_bytes));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing(
      "mask", mask, mask_bytes, "x", x, count * static_cast<int64_t>(relugrad_dtype_size(dtype))));
  if (count == 0) return RELUGRAD_OK;
  return RunMask([&](const char** why) {
    ascend::BlockedTwinRun run;
    return ascend::RunBlockedOnTwin(BlockedRequest(ascend::MaskOp::kForward, params, format, shape),
                                    params, x, nullptr, y, mask, &run, why);
  });
}

relugrad_status AscendTwinReluGradMaskBlocked(relugrad_dtype dtype, relugrad_x_format format,
                                              const BlockedShape& shape, const void* dy,
                                              const uint8_t* mask, void* dx,
                                              const relugrad_options* options) {
  KernelParams params;
  int64_t count = 0, mask_bytes = 0;
  RELUGRAD_RETURN_IF_ERROR(
      CheckBlocked(dtype, format, shape, options, dy, mask, dx, &params, &count, &mask_bytes));
  RELUGRAD_RETURN_IF_ERROR(
      ValidateAliasing("dx", dx, count * static_cast<int64_t>(relugrad_dtype_size(dtype)), "mask",
                       mask, mask_bytes));
  if (count == 0) return RELUGRAD_OK;
  return RunMask([&](const char** why) {
    ascend::BlockedTwinRun run;
    return ascend::RunBlockedOnTwin(
        BlockedRequest(ascend::MaskOp::kBackward, params, format, shape), params, dy, mask, dx,
        nullptr, &run, why);
  });
}

}  // namespace relugrad
