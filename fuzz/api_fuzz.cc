// libFuzzer target: the public C API, differential against the scalar
// reference.
//
// The input chooses: dtype (sometimes an invalid value), n (0..16384), the
// byte offsets of dy, s and dx in an arena (0..63: misaligned ones must be
// rejected), aliasing (dx == dy, dx == s, or a partial overlap by k
// elements, which must be rejected), a preset, enum overrides (sometimes out
// of range), threshold/alpha/clip bounds as raw double bits (NaN, inf,
// subnormals), threshold rounding, denormal mode, thread count (-2..9),
// struct_size, backend, a SIMD target cap, and the element bits.
//
// Two arenas with identical layout and contents are made; relugrad_relu_grad
// runs on one, relugrad_relu_grad_reference on the other, with the same
// pointer arrangement. Properties (a violation aborts):
// - API OK  -> reference OK and the two arenas are byte-identical (dx equal
//              bit for bit, and nothing outside dx was written);
// - API not OK -> a non-empty relugrad_last_error(), the arena untouched
//              (no partial output), and the reference fails too unless the
//              reason is a backend this build lacks (UNSUPPORTED).
// Mask path (relugrad_relu_forward / relugrad_relu_grad_mask): compiled in
// when RELUGRAD_FUZZ_MASK is defined (fuzz/CMakeLists.txt turns it on once
// the implementation exists): forward's mask bits must be the reference's
// gate decisions, y the reference forward, and grad_mask(dy, mask) equal to
// the reference ReluGrad(dy, x).
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "relugrad/relugrad.h"

namespace {

void Check(bool ok, const char* what, const std::string& detail = "") {
  if (!ok) {
    std::fprintf(stderr, "api_fuzz: property violated: %s %s\n", what, detail.c_str());
    std::abort();
  }
}

constexpr size_t kMaxN = 16384;
constexpr size_t kSlack = 128;  // offsets (< 64) plus room for partial overlaps past the end

double RawDouble(FuzzedDataProvider& p) {
  const uint64_t bits = p.ConsumeIntegral<uint64_t>();
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

// A double that is usually a plausible value and sometimes any bit pattern.
double Value(FuzzedDataProvider& p) {
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0:
      return RawDouble(p);
    case 1:
      return p.ConsumeIntegralInRange<int>(-64, 64) / 8.0;
    case 2:
      return p.PickValueInArray({0.0, -0.0, 1e-40, -1e-40, 6e-8, 65504.0, 1e30, -1e300});
    default:
      return p.ConsumeFloatingPointInRange<double>(-4.0, 4.0);
  }
}

struct Layout {
  size_t dy_off, s_off, dx_off;  // byte offsets in the arena
  size_t arena_bytes;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider p(data, size);
  const bool bad_dtype = p.ConsumeIntegralInRange<int>(0, 31) == 0;
  // Kept as an int: an out-of-range value held in (and loaded from) an
  // enum-typed variable is itself undefined in C++; a C caller passes ints.
  const int dtype_raw =
      bad_dtype ? p.PickValueInArray({0, 5, -1, 99})
                : p.PickValueInArray({RELUGRAD_F32, RELUGRAD_F16, RELUGRAD_BF16, RELUGRAD_F64});
  const auto dtype_arg = [dtype_raw] { return static_cast<relugrad_dtype>(dtype_raw); };
  const size_t es = bad_dtype ? 4 : relugrad_dtype_size(dtype_arg());
  const size_t n = p.ConsumeIntegralInRange<size_t>(0, p.ConsumeBool() ? 64 : kMaxN);
  const size_t region = n * es + kSlack;

  relugrad_options o;
  const auto preset = static_cast<relugrad_preset>(p.ConsumeIntegralInRange<int>(0, 3));
  Check(relugrad_options_init(&o, preset) == RELUGRAD_OK, "options_init on a valid preset");
  const uint8_t overrides = p.ConsumeIntegral<uint8_t>();
  if (overrides & 1) o.gate = static_cast<relugrad_gate>(p.ConsumeIntegralInRange<int>(-1, 2));
  if (overrides & 2)
    o.combine = static_cast<relugrad_combine>(p.ConsumeIntegralInRange<int>(-1, 2));
  if (overrides & 4)
    o.denormals = static_cast<relugrad_denormals>(p.ConsumeIntegralInRange<int>(-1, 2));
  if (overrides & 8)
    o.threshold_rounding =
        static_cast<relugrad_threshold_rounding>(p.ConsumeIntegralInRange<int>(-1, 2));
  if (overrides & 16) o.threshold = Value(p);
  if (overrides & 32) o.alpha = Value(p);
  if (overrides & 64) {
    o.clip = p.ConsumeIntegralInRange<int>(0, 2);
    o.clip_lo = Value(p);
    o.clip_hi = p.ConsumeBool() ? o.clip_lo : Value(p);
  }
  if (overrides & 128) {
    switch (p.ConsumeIntegralInRange<int>(0, 7)) {
      case 0:
        o.struct_size = p.ConsumeIntegralInRange<uint32_t>(0, sizeof(o) + 16);
        break;
      case 1:
        o.backend = static_cast<relugrad_backend>(p.ConsumeIntegralInRange<int>(-1, 3));
        break;
      default:
        break;
    }
  }
  o.threads = p.ConsumeIntegralInRange<int>(-2, 9);
  const bool null_options = p.ConsumeIntegralInRange<int>(0, 15) == 0;

  // Pointers: three regions, each offset 0..63 bytes (misaligned offsets
  // are the caller's error and must be reported, not crashed on).
  Layout L;
  const bool misalign = p.ConsumeIntegralInRange<int>(0, 7) == 0;
  const auto offset = [&]() -> size_t {
    return misalign ? p.ConsumeIntegralInRange<size_t>(0, 63)
                    : p.ConsumeIntegralInRange<size_t>(0, 63 / es) * es;
  };
  L.dy_off = offset();
  L.s_off = region + offset();
  L.dx_off = 2 * region + offset();
  L.arena_bytes = 3 * region;
  const int alias =
      p.ConsumeIntegralInRange<int>(0, 5);  // 0-2: none, 3: dx=dy, 4: dx=s, 5: partial overlap
  if (alias == 3) L.dx_off = L.dy_off;
  if (alias == 4) L.dx_off = L.s_off;
  if (alias == 5) {
    const size_t k = p.ConsumeIntegralInRange<size_t>(1, 8);
    L.dx_off = p.ConsumeBool() ? L.dy_off + k * es : L.s_off - std::min(L.s_off, k * es);
  }
  const bool null_pointer = n > 0 && p.ConsumeIntegralInRange<int>(0, 31) == 0;

  int isa_index = -1;
  if (p.ConsumeIntegralInRange<int>(0, 3) == 0)
    isa_index = p.ConsumeIntegralInRange<int>(0, relugrad_isa_count() - 1);

  // Element bits: the rest of the input, repeated over both operands.
  std::vector<uint8_t> bits = p.ConsumeRemainingBytes<uint8_t>();
  if (bits.empty()) bits.push_back(0x3c);
  // Both arenas 64-byte aligned, so an offset means the same misalignment in each.
  const size_t arena_alloc = (L.arena_bytes + 63) / 64 * 64;
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_api(
      static_cast<uint8_t*>(std::aligned_alloc(64, arena_alloc)), &std::free);
  std::unique_ptr<uint8_t, decltype(&std::free)> arena_ref(
      static_cast<uint8_t*>(std::aligned_alloc(64, arena_alloc)), &std::free);
  Check(arena_api && arena_ref, "arena allocation");
  uint8_t* A = arena_api.get();
  uint8_t* B = arena_ref.get();
  for (size_t i = 0; i < L.arena_bytes; ++i)
    A[i] = bits[i % bits.size()] ^ static_cast<uint8_t>(i >> 7);
  std::memcpy(B, A, L.arena_bytes);
  const std::vector<uint8_t> before(A, A + L.arena_bytes);

  const relugrad_options* opts = null_options ? nullptr : &o;
  const auto ptr = [&](uint8_t* base, size_t off) -> uint8_t* {
    return null_pointer && off == L.s_off ? nullptr : base + off;
  };

  // Dispatch is process-wide; the fuzzer runs inputs on one thread, so
  // capping it per input stays within the header's rules.
  if (isa_index >= 0)
    Check(relugrad_set_max_isa(relugrad_isa_name(isa_index)) == RELUGRAD_OK,
          "set_max_isa on a listed target");
  const relugrad_status st =
      relugrad_relu_grad(dtype_arg(), static_cast<int64_t>(n), ptr(A, L.dy_off), ptr(A, L.s_off),
                         ptr(A, L.dx_off), opts);
  const std::string api_error = relugrad_last_error();
  if (isa_index >= 0) relugrad_set_max_isa(nullptr);
  // The reference runs on host memory only: give it the CPU backend when the
  // request named another valid one (the Ascend twin must match it bit for
  // bit; an invalid backend value stays, so both must reject it).
  relugrad_options ref_o = o;
  const int backend_raw = static_cast<int>(o.backend);
  if (backend_raw >= 0 && backend_raw <= 2) ref_o.backend = RELUGRAD_BACKEND_CPU;
  const relugrad_options* ref_opts = null_options ? nullptr : &ref_o;
  const relugrad_status ref =
      relugrad_relu_grad_reference(dtype_arg(), static_cast<int64_t>(n), ptr(B, L.dy_off),
                                   ptr(B, L.s_off), ptr(B, L.dx_off), ref_opts);
  const std::string ref_error = relugrad_last_error();

  if (st == RELUGRAD_OK) {
    Check(api_error.empty(), "OK with an error message", api_error);
    Check(ref == RELUGRAD_OK, "API accepted what the reference rejected:", ref_error);
    if (std::memcmp(A, B, L.arena_bytes) != 0) {
      size_t i = 0;
      while (A[i] == B[i]) ++i;
      Check(false, "API and reference differ",
            "at arena byte " + std::to_string(i) + " (dtype " + std::to_string(dtype_raw) + ", n " +
                std::to_string(n) + ")");
    }
  } else {
    Check(!api_error.empty(), "failure without a message");
    Check(st == RELUGRAD_INVALID_ARGUMENT || st == RELUGRAD_UNSUPPORTED, "unexpected status",
          relugrad_status_name(st));
    Check(std::memcmp(A, before.data(), L.arena_bytes) == 0,
          "a failed call wrote to memory:", api_error);
    Check(ref != RELUGRAD_OK || st == RELUGRAD_UNSUPPORTED,
          "reference accepted what the API rejected:", api_error);
  }

#ifdef RELUGRAD_FUZZ_MASK
  // The mask path on the same inputs when the grad call was valid: x = s.
  if (st == RELUGRAD_OK && !null_options && alias < 3) {
    const size_t mbytes = static_cast<size_t>(relugrad_mask_bytes(static_cast<int64_t>(n)));
    std::vector<uint8_t> mask(mbytes + 1, 0xEE), y(n * es + 1), dx(n * es + 1), expect(n * es + 1);
    const uint8_t* x = A + L.s_off;  // still the input: the call above wrote only dx
    const uint8_t* dy = A + L.dy_off;
    if (es == 4 || es == 8 || es == 2) {
      const relugrad_status f = relugrad_relu_forward(dtype_arg(), static_cast<int64_t>(n), x,
                                                      y.data(), mask.data(), opts);
      if (f == RELUGRAD_OK) {
        Check(mask[mbytes] == 0xEE, "forward wrote past the mask");
        const relugrad_status g = relugrad_relu_grad_mask(dtype_arg(), static_cast<int64_t>(n), dy,
                                                          mask.data(), dx.data(), opts);
        Check(g == RELUGRAD_OK, "grad_mask failed after forward succeeded:", relugrad_last_error());
        Check(relugrad_relu_grad_reference(dtype_arg(), static_cast<int64_t>(n), dy, x,
                                           expect.data(), ref_opts) == RELUGRAD_OK,
              "reference");
        Check(std::memcmp(dx.data(), expect.data(), n * es) == 0,
              "grad_mask(dy, forward mask) != reference ReluGrad(dy, x)");
        if (n % 8 != 0) Check((mask[mbytes - 1] >> (n % 8)) == 0, "mask padding bits are not zero");
      } else {
        Check(relugrad_last_error()[0] != '\0', "forward failed without a message");
      }
    }
  }
#endif
  return 0;
}
