// The C entry points of the fused ReLU + dropout planes (relugrad.h, "ReLU
// followed by dropout"): every argument checked here, then the row of
// options.backend (core/backend.h). No computation happens here.
#include <cmath>
#include <cstdint>
#include <utility>

#include "core/backend.h"
#include "core/error.h"
#include "core/plan.h"
#include "core/rules.h"
#include "core/validate.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

// The planes are read while an output is written: they may share no byte
// with it (unlike dx and dy, which may be one array).
relugrad_status ValidateDisjoint(const char* a_name, const void* a, int64_t a_bytes,
                                 const char* b_name, const void* b, int64_t b_bytes) {
  if (a_bytes == 0 || b_bytes == 0) return RELUGRAD_OK;
  const uintptr_t x = reinterpret_cast<uintptr_t>(a);
  const uintptr_t y = reinterpret_cast<uintptr_t>(b);
  if (x + static_cast<uintptr_t>(a_bytes) <= y || y + static_cast<uintptr_t>(b_bytes) <= x)
    return RELUGRAD_OK;
  return Fail(RELUGRAD_INVALID_ARGUMENT, "%s overlaps %s (they must not share a byte)", a_name,
              b_name);
}

// The row of options' backend, once it is built and implements op (pack:
// relugrad_pack_bits, else relugrad_relu_dropout_grad).
relugrad_status BackendFor(const relugrad_options* options, bool pack, Execution* execution,
                           const BackendOps** row) {
  RELUGRAD_RETURN_IF_ERROR(ResolveOptions(options, nullptr, execution));
  const BackendOps* ops = FindBackendOps(execution->backend);
  if (ops == nullptr) return Fail(RELUGRAD_INVALID_ARGUMENT, "options.backend is not a backend");
  if (!ops->built) {
    // The unbuilt row's Supports says why (and how to build it).
    return ops->supports(RELUGRAD_OP_RELU_GRAD_MASK, Rules{}, KernelParams{});
  }
  if (pack ? ops->pack_bits == nullptr : ops->relu_dropout_grad == nullptr) {
    return Fail(RELUGRAD_UNSUPPORTED, "the %s backend does not implement %s (cpu and cuda do)",
                ops->name, pack ? "relugrad_pack_bits" : "relugrad_relu_dropout_grad");
  }
  *row = ops;
  return RELUGRAD_OK;
}

}  // namespace
}  // namespace relugrad

extern "C" {

relugrad_status relugrad_pack_bits(int64_t n, const uint8_t* bytes, uint8_t* bits,
                                   const relugrad_options* options) {
  using namespace relugrad;
  ClearLastError();
  RELUGRAD_RETURN_IF_ERROR(ValidateCount(n, 1));
  const int64_t out = MaskBytes(n);
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("bytes", bytes, n, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("bits", bits, out, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidateDisjoint("bits", bits, out, "bytes", bytes, n));
  Execution execution;
  const BackendOps* row = nullptr;
  RELUGRAD_RETURN_IF_ERROR(BackendFor(options, true, &execution, &row));
  return row->pack_bits(execution, n, bytes, bits);
}

relugrad_status relugrad_relu_dropout_grad(relugrad_dtype dtype, int64_t n, const void* dy,
                                           const uint8_t* gate, const uint8_t* keep, double scale,
                                           void* dx, const relugrad_options* options) {
  using namespace relugrad;
  RELUGRAD_RETURN_IF_ERROR(ValidateDtypeAndCount(dtype, n));
  if (!std::isfinite(scale) || !(scale > 0)) {
    return Fail(RELUGRAD_INVALID_ARGUMENT,
                "scale must be finite and > 0 (1 / (1 - p) for dropout's p; got %g)", scale);
  }
  const int64_t es = relugrad_dtype_size(dtype);
  const int64_t planes = MaskBytes(n);
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dy", dy, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("gate", gate, planes, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("keep", keep, planes, 1));
  RELUGRAD_RETURN_IF_ERROR(ValidatePointer("dx", dx, n, es));
  RELUGRAD_RETURN_IF_ERROR(ValidateAliasing("dx", dx, n * es, "dy", dy, n * es));
  for (const auto& [name, plane] : {std::pair<const char*, const uint8_t*>{"gate", gate},
                                    std::pair<const char*, const uint8_t*>{"keep", keep}}) {
    RELUGRAD_RETURN_IF_ERROR(ValidateDisjoint("dx", dx, n * es, name, plane, planes));
    RELUGRAD_RETURN_IF_ERROR(ValidateDisjoint("dy", dy, n * es, name, plane, planes));
  }
  Execution execution;
  const BackendOps* row = nullptr;
  RELUGRAD_RETURN_IF_ERROR(BackendFor(options, false, &execution, &row));
  return row->relu_dropout_grad(ToDtype(dtype), execution, n, dy, gate, keep, scale, dx);
}

}  // extern "C"
