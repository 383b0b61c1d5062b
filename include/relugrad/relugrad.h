/* relugrad: exact ReLU backward (ReluGrad) at memory speed. C ABI.
 *
 *   dx[i] = gate_open(s[i]) ? pass(dy[i]) : closed(dy[i])
 *
 * where s is the forward input x or the forward output y (the computation is
 * the same), and the gate/combine rules come from relugrad_options (usually
 * filled from a framework preset by relugrad_options_init).
 *
 * Conventions
 * - Every function returns a relugrad_status. On failure a readable message is
 *   kept per calling thread: relugrad_last_error().
 * - Two failure kinds are kept apart: RELUGRAD_INVALID_ARGUMENT (the caller's
 *   mistake: null pointer with n > 0, n < 0, partial overlap, bad enum, bad
 *   clip range, misaligned pointer, ...) and RELUGRAD_UNSUPPORTED (a valid
 *   request this build or machine cannot serve, e.g. a backend not compiled).
 * - dy, s and dx hold n elements of one dtype. Pointers must be aligned to
 *   the element size. dx may alias dy or s exactly (in place); any partial
 *   overlap is an error. n == 0 is a successful no-op.
 * - Results are bit-identical for every thread count and SIMD target.
 *
 * Thread safety
 * - The compute entry points (relugrad_relu_grad, relugrad_relu_grad_reference,
 *   relugrad_relu_forward, relugrad_relu_grad_mask, relugrad_plan_run,
 *   relugrad_plan_run_forward) may be called from any number of threads at
 *   once, with different options; one plan may be run by many threads at once. Concurrent callers
 * share one worker pool: a caller that finds the pool busy runs its work on its own thread (same
 *   bits, less parallelism).
 * - relugrad_set_max_isa() changes process-wide dispatch: call it before
 *   concurrent work starts (the CLI and tests do).
 * - relugrad_last_error() is per thread.
 */
#ifndef RELUGRAD_RELUGRAD_H_
#define RELUGRAD_RELUGRAD_H_

#include <stddef.h>
#include <stdint.h>

#include "relugrad/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define RELUGRAD_VERSION_MAJOR 0
#define RELUGRAD_VERSION_MINOR 1
#define RELUGRAD_VERSION_PATCH 0

typedef enum relugrad_status {
  RELUGRAD_OK = 0,
  RELUGRAD_INVALID_ARGUMENT = 1,
  RELUGRAD_UNSUPPORTED = 2,
  RELUGRAD_INTERNAL_ERROR = 3, /* out of memory, thread creation failed */
} relugrad_status;

/* Numbering starts at 1 so that a zero-filled value is caught as invalid. */
typedef enum relugrad_dtype {
  RELUGRAD_F32 = 1,
  RELUGRAD_F16 = 2,
  RELUGRAD_BF16 = 3,
  RELUGRAD_F64 = 4,
} relugrad_dtype;

/* Gate predicate on s against the threshold t. */
typedef enum relugrad_gate {
  /* closed when s <= t; a NaN gate is open (PyTorch threshold_backward,
   * oneDNN's JIT eltwise backward). */
  RELUGRAD_GATE_ZERO_IF_LE = 0,
  /* open only when s > t; a NaN gate is closed (TF, JAX, MindSpore). */
  RELUGRAD_GATE_PASS_IF_GT = 1,
} relugrad_gate;

/* How dy becomes dx. */
typedef enum relugrad_combine {
  /* open: copy the bits of dy; closed: +0 (or dy*alpha when alpha != 0). */
  RELUGRAD_COMBINE_SELECT = 0,
  /* IEEE dy*1 / dy*alpha: open quiets signalling NaNs; closed with alpha=0
   * gives -0 for negative dy and NaN for inf or NaN dy. */
  RELUGRAD_COMBINE_MULTIPLY = 1,
} relugrad_combine;

/* Subnormal handling, applied in the compute type (f32 for f16/bf16/f32,
 * f64 for f64; f16 subnormals are f32 normals and so are never flushed). */
typedef enum relugrad_denormals {
  RELUGRAD_DENORMALS_IEEE = 0,
  /* As a CPU running with MXCSR FTZ+DAZ: a subnormal gate compares as zero,
   * so does a threshold subnormal in the compute type (t = -1e-40 with f32,
   * bf16 or f16 data closes s = +-0, which IEEE passes; the tensorflow and
   * jax presets), and subnormal inputs/results of arithmetic (multiply)
   * become signed zero. Bits copied by SELECT are never altered. */
  RELUGRAD_DENORMALS_FTZ_DAZ = 1,
} relugrad_denormals;

/* Precision in which the threshold is compared. */
typedef enum relugrad_threshold_rounding {
  /* t rounded (to nearest even) to the compute type: f32 for 16-bit and f32
   * data, f64 for f64 data; the gate is widened exactly. PyTorch >= 2.0. */
  RELUGRAD_THRESHOLD_COMPUTE = 0,
  /* t converted to the data type first, as PyTorch converts a Python float:
   * through float for bf16/f16 (double -> f32 -> 16-bit, two roundings to
   * nearest even; bf16 1 + 2^-8 + 2^-40 becomes 1.0). PyTorch 1.13.1 on CPU
   * for bf16; 1.13.1 has no f16 threshold kernel on the CPU, so for f16 this
   * is PyTorch's scalar conversion (torch.full). docs/semantics.md. */
  RELUGRAD_THRESHOLD_DTYPE = 1,
} relugrad_threshold_rounding;

typedef enum relugrad_backend {
  RELUGRAD_BACKEND_CPU = 0,
  RELUGRAD_BACKEND_CUDA = 1,        /* device pointers, options.stream */
  RELUGRAD_BACKEND_ASCEND_TWIN = 2, /* AscendC kernel run by the CPU twin */
} relugrad_backend;

/* How outputs are stored (CPU backend; a performance hint only: results are
 * bit-identical under every setting). Streaming (non-temporal) stores skip
 * the read-for-ownership of the output and leave it out of the caches:
 * right when the output will not be read again soon, wrong when the next
 * operation reads it from cache. AUTO streams outputs of at least twice the
 * L2 when the call runs on one thread and a quarter of the L3 when it is
 * split over threads (and the mask path), and only when the output's pages
 * are already resident: the kernel zeroes a page it faults in with ordinary
 * stores, which leaves its lines cached, and streaming into cached lines
 * costs more than cached stores. Below that, pass STREAMING if you know the
 * output goes cold, CACHED if the next operation reads it (docs/design.md,
 * "Store hint"). Outputs that alias an input are never streamed. The CUDA
 * and Ascend backends ignore it. */
typedef enum relugrad_stores {
  RELUGRAD_STORES_AUTO = 0,
  RELUGRAD_STORES_CACHED = 1,    /* ordinary stores always */
  RELUGRAD_STORES_STREAMING = 2, /* non-temporal stores for every size */
} relugrad_stores;

/* Named framework presets (docs/semantics.md, "Presets"; each was settled by
 * running the framework: "What the frameworks compute"). */
typedef enum relugrad_preset {
  RELUGRAD_PRESET_TORCH = 0,      /* zero_if_le + select, IEEE */
  RELUGRAD_PRESET_TENSORFLOW = 1, /* pass_if_gt + multiply, FTZ/DAZ */
  RELUGRAD_PRESET_JAX = 2,        /* pass_if_gt + select, FTZ/DAZ gate (XLA CPU) */
  RELUGRAD_PRESET_ONEDNN = 3,     /* zero_if_le + multiply with alpha */
  RELUGRAD_PRESET_MINDSPORE = 4,  /* pass_if_gt + select, IEEE (MindSpore CPU ReluGrad) */
  /* Huawei CANN operators (ops-nn sources; docs/ascend.md "CANN's semantics"
   * says which source and version each follows; NaN and subnormal bits are
   * relugrad's x86 rules, not measured on an NPU): */
  RELUGRAD_PRESET_CANN_RELUGRAD =
      5, /* ReluGrad: dy * (s <= 0 ? 0 : 1): zero_if_le + multiply, IEEE */
  RELUGRAD_PRESET_CANN_RELUGRAD_V2 =
      6, /* ReluGradV2: mask (ReluV2: x > 0) ? dy : 0: pass_if_gt + select, IEEE */
  RELUGRAD_PRESET_CANN_THRESHOLD_GRAD = 7, /* ThresholdGradV2D (aclnnThresholdBackward): s <= t ? 0
                                              : dy in f32: zero_if_le + select, IEEE */
  RELUGRAD_PRESET_CANN_RELUGRAD_V2_HP = 8, /* legacy TBE ReluGradV2, fp32 high-performance path:
                                              dy * (mask ? 1 : 0): pass_if_gt + multiply, IEEE */
} relugrad_preset;

/* Options. Always initialise with relugrad_options_init(), which sets
 * struct_size; the library reads only the fields that fit in struct_size, so
 * callers compiled against an older, shorter struct keep working. */
typedef struct relugrad_options {
  uint32_t struct_size;
  relugrad_gate gate;
  relugrad_combine combine;
  relugrad_denormals denormals;
  relugrad_threshold_rounding threshold_rounding;
  double threshold; /* t; NaN is invalid */
  double alpha;     /* closed-gate factor; finite; 0 by default; rounded to the
                       compute type (float for 16-bit data), not the data type */
  int32_t clip;     /* nonzero: clamp passed gradients to [clip_lo, clip_hi] */
  double clip_lo;   /* bounds converted to the data type as torch.clamp does
                       (through float for 16-bit data); NaN dy stays NaN */
  double clip_hi;
  int32_t threads; /* 0: all cores; 1: the calling thread only; <0 invalid;
                      more than 256 is served with 256 */
  relugrad_backend backend;
  void* stream;           /* CUDA: a cudaStream_t (NULL = default stream) */
  relugrad_stores stores; /* CPU store hint; AUTO by default (a struct_size
                             that ends before this field gets AUTO) */
  /* Upper bound h of the gate (hardtanh_backward; ReLU6 is t = 0, h = 6):
   * a non-NaN s is open only when also s < h, so s == h is closed. +inf (the
   * default, and what a struct_size that ends before this field gets) means
   * no upper bound: s = +inf stays open. NaN is invalid; h must be > t.
   * Rounded like the threshold (threshold_rounding) and compared in the same
   * precision, with the same DAZ rule. NaN gates keep the gate predicate's
   * rule: zero_if_le is closed iff s <= t or s >= h (a NaN gate open, as
   * PyTorch's scalar and CUDA hardtanh_backward); pass_if_gt is open iff
   * t < s < h (a NaN gate closed, as PyTorch's vectorised CPU loop, which
   * runs all but the last n mod (2 * vector lanes) elements of a
   * contiguous tensor; docs/semantics.md).
   * the CPU, CUDA and Ascend twin backends apply it; the mask forward
   * answers RELUGRAD_UNSUPPORTED for a bounded gate. */
  double gate_max;
  /* The mask forward's y for x = -0 at a closed gate, where alpha is 0:
   * 0 (the default, and what a struct_size that ends before this field
   * gets) writes +0, as torch.threshold(x, t, 0), tf.nn.relu and
   * jax.nn.relu do; nonzero keeps x's -0, as torch.relu (clamp_min) does.
   * Only the bits of -0 itself: a negative subnormal flushed by DAZ still
   * gives +0. No other op and no other element reads it; with alpha != 0 y
   * is x*alpha either way. */
  int32_t keep_negative_zero;
} relugrad_options;

/* Fills *options with the preset's settings and defaults for the rest. */
RELUGRAD_API relugrad_status relugrad_options_init(relugrad_options* options,
                                                   relugrad_preset preset);

/* dx = ReluGrad(dy, s). options may be NULL (torch preset). */
RELUGRAD_API relugrad_status relugrad_relu_grad(relugrad_dtype dtype, int64_t n, const void* dy,
                                                const void* s, void* dx,
                                                const relugrad_options* options);

/* The scalar reference ("not designed to be fast"): the oracle of all tests.
 * Same contract as relugrad_relu_grad, CPU memory, one thread. */
RELUGRAD_API relugrad_status relugrad_relu_grad_reference(relugrad_dtype dtype, int64_t n,
                                                          const void* dy, const void* s, void* dx,
                                                          const relugrad_options* options);

/* ---- The 1-bit mask path --------------------------------------------------
 * ReLU forward writes y = relu(x) and a packed bitmask (bit i = gate open for
 * element i, LSB-first within each byte, ceil(n/8) bytes, padding bits of the
 * last byte zero); backward reads only the mask: dx = bit ? dy : closed(dy)
 * (the preset's combine rule). y may alias x; dx may alias dy. */
RELUGRAD_API int64_t relugrad_mask_bytes(int64_t n); /* ceil(n/8), or -1 if n < 0 */
RELUGRAD_API relugrad_status relugrad_relu_forward(relugrad_dtype dtype, int64_t n, const void* x,
                                                   void* y, uint8_t* mask,
                                                   const relugrad_options* options);
RELUGRAD_API relugrad_status relugrad_relu_grad_mask(relugrad_dtype dtype, int64_t n,
                                                     const void* dy, const uint8_t* mask, void* dx,
                                                     const relugrad_options* options);

/* ---- ReLU followed by dropout: two bit planes -------------------------------
 * PyTorch's nn.ReLU -> nn.Dropout(p) in training keeps, for backward, y and
 * dropout's mask (a bool per element on CUDA). The fused path keeps two
 * packed planes instead, each in the mask format above (LSB first, ceil(n/8)
 * bytes, padding bits 0): gate (relugrad_relu_forward's mask of x) and keep
 * (dropout's mask, packed from PyTorch's own draw by relugrad_pack_bits, so
 * the draw and the generator's state stay stock's).
 * Backends: CPU and CUDA (options.backend; options.stream on CUDA; NULL
 * options: the CPU backend, all cores). */

/* bits = the packed bits of bytes[i] != 0 for i < n (bit i % 8 of
 * bits[i / 8]; a bool or uint8 mask), every byte of bits written, padding bits
 * 0. bytes and bits must not overlap. */
RELUGRAD_API relugrad_status relugrad_pack_bits(int64_t n, const uint8_t* bytes, uint8_t* bits,
                                                const relugrad_options* options);

/* dx = the gradient of dropout(relu(x)) from the two planes, PyTorch CUDA's
 * bits: native_dropout_backward then threshold_backward(., y, 0), that is
 *   dx[i] = gate_i ? T(((C)keep_i * (C)dy[i]) * (C)scale) : +0
 * with keep_i 1 or 0 and C the compute type, float for f32/f16/bf16 (one
 * rounding to nearest even to T) and double for f64; a dropped element gives
 * dy * 0 (a signed zero, NaN for inf or NaN dy). NaN results: on CUDA what
 * PyTorch's kernel writes (the GPU multiply's NaN for f32/f64, 0x7fff for
 * f16/bf16); on the CPU x86's bits on every ISA (a NaN dy quieted, inf * 0
 * the default NaN with the sign set). scale: 1 / (1 - p) as PyTorch's
 * autograd passes it (finite, > 0). dx may be dy (in place); the planes must
 * not overlap dy or dx. options are validated as every call's, and only
 * backend, stream and threads are read (the rule is PyTorch's, whatever the
 * preset). */
RELUGRAD_API relugrad_status relugrad_relu_dropout_grad(relugrad_dtype dtype, int64_t n,
                                                        const void* dy, const uint8_t* gate,
                                                        const uint8_t* keep, double scale, void* dx,
                                                        const relugrad_options* options);

/* ---- The ReluV2 mask of Ascend 910B: blocked <-> flat -----------------------
 * On 910B (and every SoC but Ascend 950/350) CANN's ReluV2 writes its 1-bit mask for a 4-D x
 * in the blocked layout (N, C1, H, W, C0 = 16), C1 = ceil(C/16), from an NCHW or NHWC x
 * (ops-nn activation/relu_v2/op_host/relu_v2_infershape.cpp): the bit of x[n][c][h][w] is
 * element (((n*C1 + c/16)*H + h)*W + w)*16 + c%16, LSB-first within each byte, and the bits of
 * the padding channels c >= C are 0. relugrad's mask (and Ascend 950's) is flat: element i of
 * x in its own order (NCHW or NHWC), LSB-first, ceil(N*C*H*W/8) bytes, padding bits 0.
 * relugrad_mask_to_blocked writes every byte of the blocked mask (padding bits 0);
 * relugrad_mask_from_blocked writes every byte of the flat mask (padding bits 0) and refuses a
 * blocked mask with a padding bit set (RELUGRAD_INVALID_ARGUMENT, nothing written). */
typedef enum relugrad_x_format {
  RELUGRAD_X_NCHW = 1,
  RELUGRAD_X_NHWC = 2,
} relugrad_x_format;
/* N*ceil(C/16)*H*W*2 bytes, or -1 if a dimension is negative or the size overflows. */
RELUGRAD_API int64_t relugrad_mask_blocked_bytes(int64_t n, int64_t c, int64_t h, int64_t w);
RELUGRAD_API relugrad_status relugrad_mask_to_blocked(relugrad_x_format format, int64_t n,
                                                      int64_t c, int64_t h, int64_t w,
                                                      const uint8_t* flat, uint8_t* blocked);
RELUGRAD_API relugrad_status relugrad_mask_from_blocked(relugrad_x_format format, int64_t n,
                                                        int64_t c, int64_t h, int64_t w,
                                                        const uint8_t* blocked, uint8_t* flat);

/* ---- Plans: resolve once, run many ----------------------------------------
 * A plan is one operator (relugrad_plan_op) for one dtype with its options
 * resolved: relugrad_plan_create does every check that does not depend on
 * the arrays (dtype, every option field, whether the backend implements the
 * op for this dtype and these rules) and derives the kernel parameters once;
 * relugrad_plan_run then checks only n and the pointers and hands the
 * arrays to the backend. The one-shot calls (relugrad_relu_grad,
 * relugrad_relu_forward, relugrad_relu_grad_mask) are plans run once: same
 * checks, same messages, same bits. Each keeps, per thread, the plans of its
 * last 4 distinct configurations (options and dtype); a call with a fifth
 * creates a plan again (a few small calls' worth: docs/design.md, "Resolve
 * once, run many: the plan"), so a caller that cycles through more
 * configurations should hold one plan per configuration.
 *
 *   relugrad_plan* plan;
 *   if (relugrad_plan_create(RELUGRAD_OP_RELU_GRAD, RELUGRAD_F32, &o, &plan) != RELUGRAD_OK)
 *     fprintf(stderr, "%s\n", relugrad_last_error());
 *   for (...) relugrad_plan_run(plan, n, dy, x, dx);
 *   relugrad_plan_destroy(plan);
 *
 * A plan is immutable once created: it may be run from any number of
 * threads at once (it reads the plan and the caller's arrays only), and
 * the options struct it was created from may be changed or freed at once.
 * Destroy it after its last run has returned. */
typedef struct relugrad_plan relugrad_plan; /* opaque */

/* Numbering starts at 1 so that a zero-filled value is caught as invalid. */
typedef enum relugrad_plan_op {
  /* relugrad_plan_run(plan, n, dy, s, dx): relugrad_relu_grad. */
  RELUGRAD_OP_RELU_GRAD = 1,
  /* relugrad_plan_run_forward(plan, n, x, y, mask): relugrad_relu_forward. */
  RELUGRAD_OP_RELU_FORWARD_MASK = 2,
  /* relugrad_plan_run(plan, n, dy, mask, dx): relugrad_relu_grad_mask (b is
   * the packed uint8 mask, ceil(n/8) bytes). */
  RELUGRAD_OP_RELU_GRAD_MASK = 3,
} relugrad_plan_op;

/* Validates op, dtype and options (NULL: the torch preset; struct_size as
 * for every call) and writes a new plan to *out. On failure *out is NULL
 * (when out is not NULL) and the status and message are those the one-shot
 * call would give for the same dtype and options: RELUGRAD_INVALID_ARGUMENT
 * for a bad value, RELUGRAD_UNSUPPORTED for a valid request the backend
 * cannot serve (not built; the Ascend twin for f64, for |alpha| beyond the
 * f32 range and for the mask ops; the mask forward with a gate_max).
 * RELUGRAD_INTERNAL_ERROR when out of memory. */
RELUGRAD_API relugrad_status relugrad_plan_create(relugrad_plan_op op, relugrad_dtype dtype,
                                                  const relugrad_options* options,
                                                  relugrad_plan** out);
/* Frees the plan; NULL is a no-op. */
RELUGRAD_API void relugrad_plan_destroy(relugrad_plan* plan);

/* Runs a RELUGRAD_OP_RELU_GRAD plan (a = dy, b = s, out = dx) or a
 * RELUGRAD_OP_RELU_GRAD_MASK plan (a = dy, b = mask, out = dx) on n elements,
 * with the array rules of the matching one-shot call: n >= 0, pointers
 * non-NULL when n > 0 and aligned to the element, dx equal to or disjoint
 * from dy (and s), the mask disjoint from every array. A NULL plan or a plan
 * of another op is RELUGRAD_INVALID_ARGUMENT. */
RELUGRAD_API relugrad_status relugrad_plan_run(const relugrad_plan* plan, int64_t n, const void* a,
                                               const void* b, void* out);
/* Runs a RELUGRAD_OP_RELU_FORWARD_MASK plan: y = relu(x) and the packed
 * mask, as relugrad_relu_forward (y may alias x). */
RELUGRAD_API relugrad_status relugrad_plan_run_forward(const relugrad_plan* plan, int64_t n,
                                                       const void* x, void* y, uint8_t* mask);

/* What a plan was created for. A NULL plan gives 0 (no valid op or dtype). */
RELUGRAD_API relugrad_plan_op relugrad_plan_get_op(const relugrad_plan* plan);
RELUGRAD_API relugrad_dtype relugrad_plan_get_dtype(const relugrad_plan* plan);
/* The name of the kernel variant the plan runs, selected once at create
 * (CPU relu_grad: a row of `relugrad info --variants`, e.g.
 * "plain_select_nan_open"); "" where the backend has one kernel for the op
 * (the mask ops choose per block). NULL plan: "". Never NULL. */
RELUGRAD_API const char* relugrad_plan_variant(const relugrad_plan* plan);
/* The plan's options as resolved: the caller's fields, the defaults of
 * fields a shorter struct lacked, threads capped at 256. Writes the fields
 * that fit in out->struct_size (initialise out with relugrad_options_init). */
RELUGRAD_API relugrad_status relugrad_plan_get_options(const relugrad_plan* plan,
                                                       relugrad_options* out);

/* ---- Output memory that keeps its pages ------------------------------------
 * For callers that allocate an output per call (the Python package without
 * out= uses it). Writing fresh memory costs a page fault per 4 KiB, which at
 * large n costs an allocating call several times a call into reused memory
 * (docs/design.md, "Output buffer cache"). relugrad_buffer_free parks blocks of 256 KiB and
 * more in a process-wide cache, pages mapped, and relugrad_buffer_alloc
 * hands one back for a request of its size (up to 1/4 smaller). Cached bytes
 * are capped by RELUGRAD_BUFFER_CACHE_MIB (default 1024; 0 = no caching).
 * Memory is 64-byte aligned and uninitialised. Thread-safe. */
RELUGRAD_API void* relugrad_buffer_alloc(size_t bytes); /* NULL: bytes == 0 or out of memory */
/* NULL is a no-op (RELUGRAD_OK); a pointer not from relugrad_buffer_alloc, or
 * already freed, is RELUGRAD_INVALID_ARGUMENT and left alone. */
RELUGRAD_API relugrad_status relugrad_buffer_free(void* block);
/* Frees every cached block; returns the bytes given back. */
RELUGRAD_API size_t relugrad_buffer_cache_trim(void);
/* Any pointer may be NULL. */
RELUGRAD_API void relugrad_buffer_cache_stats(size_t* cached_bytes, size_t* live_bytes,
                                              uint64_t* hits, uint64_t* misses);

/* The message of the last failure on this thread ("" if none). */
RELUGRAD_API const char* relugrad_last_error(void);
RELUGRAD_API const char* relugrad_status_name(relugrad_status status);
RELUGRAD_API const char* relugrad_version(void);

/* ---- Names ----------------------------------------------------------------
 * Every enum of this header has one table of names (src/api/names.cc), which
 * the CLI, the Python package and `info` read; nobody spells them again.
 * Canonical names are the enumerators' own words in lower case ("f32",
 * "torch", "zero_if_le", "ftz_daz", "ascend_twin", "streaming"). A few other
 * spellings are accepted: plain alternatives ("float32") and deprecated ones
 * ("ftz", "ascend-twin"), whose callers should say so (the CLI and Python
 * do): relugrad_enum_alias_deprecated tells which. */
typedef enum relugrad_enum {
  RELUGRAD_ENUM_DTYPE = 0,
  RELUGRAD_ENUM_PRESET = 1,
  RELUGRAD_ENUM_GATE = 2,
  RELUGRAD_ENUM_COMBINE = 3,
  RELUGRAD_ENUM_DENORMALS = 4,
  RELUGRAD_ENUM_THRESHOLD_ROUNDING = 5,
  RELUGRAD_ENUM_BACKEND = 6,
  RELUGRAD_ENUM_STORES = 7,
  RELUGRAD_ENUM_STATUS = 8,
  RELUGRAD_ENUM_PLAN_OP = 9,
} relugrad_enum;

/* The number of values of the enum (-1 for an unknown kind), and the
 * index-th value in declaration order with its canonical name (NULL when
 * index is out of range). */
RELUGRAD_API int relugrad_enum_count(relugrad_enum kind);
RELUGRAD_API const char* relugrad_enum_entry(relugrad_enum kind, int index, int32_t* value);
/* The canonical name of a value, NULL if the value is not in the enum. */
RELUGRAD_API const char* relugrad_enum_name(relugrad_enum kind, int32_t value);
/* Canonical names and accepted alternatives; an unknown name is
 * RELUGRAD_INVALID_ARGUMENT with the canonical names in the message. */
RELUGRAD_API relugrad_status relugrad_enum_from_name(relugrad_enum kind, const char* name,
                                                     int32_t* value);
/* The canonical name that replaces a deprecated spelling, NULL otherwise. */
RELUGRAD_API const char* relugrad_enum_alias_deprecated(relugrad_enum kind, const char* name);

/* Shorthands over the tables above for the two enums every caller names. */
RELUGRAD_API relugrad_status relugrad_dtype_from_name(const char* name, relugrad_dtype* out);
RELUGRAD_API const char* relugrad_dtype_name(relugrad_dtype dtype);
RELUGRAD_API size_t relugrad_dtype_size(relugrad_dtype dtype);
RELUGRAD_API relugrad_status relugrad_preset_from_name(const char* name, relugrad_preset* out);
RELUGRAD_API const char* relugrad_preset_name(relugrad_preset preset);

/* SIMD dispatch. Targets are Highway's names, lower case ("avx3", "avx2",
 * "sse4", "ssse3", "emu128", "scalar", "neon", "sve", ...). */
RELUGRAD_API int relugrad_isa_count(void);             /* compiled and attainable here */
RELUGRAD_API const char* relugrad_isa_name(int index); /* best first */
RELUGRAD_API const char* relugrad_isa_selected(void);
/* Caps dispatch at the named target (it and weaker ones stay allowed). NULL
 * or "" or "best" restore the default selection: the best target, except on
 * AMD Zen 4, which prefers AVX2 for these memory-bound kernels, so AVX2 is
 * the default there ("avx3" still selects AVX-512;
 * relugrad_build_info's simd_default_cap says which applies). The
 * RELUGRAD_MAX_ISA environment variable is applied the same way on first
 * use. Unknown or unattainable names are RELUGRAD_INVALID_ARGUMENT /
 * RELUGRAD_UNSUPPORTED. */
RELUGRAD_API relugrad_status relugrad_set_max_isa(const char* name);

/* Threads: the default count (all cores) and whether a backend is built. */
RELUGRAD_API int relugrad_default_threads(void);
RELUGRAD_API int relugrad_backend_available(relugrad_backend backend);
/* One line per build fact ("key: value\n"), for `relugrad info`. */
RELUGRAD_API const char* relugrad_build_info(void);

/* ---- A call split over the caller's own threads (CPU) ----
 * For a framework that runs one relugrad call over its own intra-op threads
 * (the torch-native ReLU splits with at::parallel_for): relugrad's launch
 * policy says whether to split, and the threads option and store hint of
 * each part's call. `threads` is the caller's relugrad option (0: the
 * host's threads), host_threads the host's thread count, host_grain_elems
 * the count at or below which the host would not split, `output` the
 * call's output (whether its pages are resident decides streaming; NULL:
 * unknown, the size rule alone). The output is taken to be read right away
 * by the next operation (autograd). The rule:
 * docs/design.md, "One CPU launch policy". */
typedef struct relugrad_host_split {
  int32_t split;           /* 1: split over the host's threads, one call per part */
  int32_t threads;         /* options.threads of each call */
  relugrad_stores stores;  /* options.stores of each call */
  int64_t part_unit_elems; /* parts start at multiples of this many elements */
} relugrad_host_split;
RELUGRAD_API relugrad_status relugrad_cpu_host_split(relugrad_dtype dtype, int64_t n,
                                                     int32_t threads, int32_t host_threads,
                                                     int64_t host_grain_elems, const void* output,
                                                     relugrad_host_split* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RELUGRAD_RELUGRAD_H_ */
