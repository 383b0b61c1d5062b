// CPU twin of the AscendC subset the relugrad kernel uses (basic API, level-2
// "first count elements" forms and one level-0 Duplicate), so that src/ascend/kernel/relu_grad.cpp
// compiles unchanged with the host compiler. Names and signatures follow the
// public AscendC documentation (hiascend.com, "Ascend C API") and the open
// asc-devkit headers; the bodies are our own emulation plus checks:
//
//  - every UB operand: 32-byte aligned, inside its buffer, its buffer alive
//    (not freed, not sitting in a queue), its bytes written before being read;
//  - data crossing pipes (MTE2 -> V -> MTE3) must pass EnQue/DeQue;
//  - DataCopy lengths are multiples of 32 bytes (hardware silently truncates);
//  - Compare(s) counts are multiples of 256 bytes;
//  - TPipe hands out at most 184 KiB of the 192 KiB UB;
//  - GM reads stay inside launch buffers, GM writes inside the block's share;
//  - the element types each instruction accepts on 910B (static_assert).
// Violations throw ascend_twin::TwinViolation. See docs/ascend.md.
#ifndef RELUGRAD_ASCEND_TWIN_KERNEL_OPERATOR_H_
#define RELUGRAD_ASCEND_TWIN_KERNEL_OPERATOR_H_

#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <type_traits>
#include <vector>

#include "ascend/twin/twin_runtime.h"

// Device qualifiers mean nothing on the host.
#define __global__
#define __aicore__
#define __gm__
#define GM_ADDR uint8_t*

// 16-bit float types are opaque bit containers here: the kernel may move,
// reinterpret and Cast them, never do scalar arithmetic on them.
struct half {
  uint16_t bits;
};
struct bfloat16_t {
  uint16_t bits;
};

namespace AscendC {

enum class TPosition : uint8_t { GM = 0, VECIN, VECOUT, VECCALC };
using QuePosition = TPosition;
enum class CMPMODE : int { LT = 0, GT, EQ, LE, GE, NE };
enum class SELMODE : int { VSEL_CMPMASK_SPR = 0, VSEL_TENSOR_SCALAR_MODE, VSEL_TENSOR_TENSOR_MODE };
enum class RoundMode : int {
  CAST_NONE = 0,
  CAST_RINT,
  CAST_FLOOR,
  CAST_CEIL,
  CAST_ROUND,
  CAST_TRUNC,
  CAST_ODD
};
enum pipe_t { PIPE_S = 0, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL };

// The twin executes instructions in program order, so barriers are no-ops.
template <pipe_t pipe>
inline void PipeBarrier() {}

inline int64_t GetBlockIdx() { return ascend_twin::Current().index(); }
inline int64_t GetBlockNum() { return ascend_twin::Current().count(); }

template <typename T, typename... Ts>
constexpr bool SupportType() {
  return (std::is_same<T, Ts>::value || ...);
}

template <typename T>
class LocalTensor {
 public:
  LocalTensor() = default;
  LocalTensor(int rec, uint32_t gen, uint32_t offset, uint32_t bytes, TPosition pos)
      : rec_(rec), gen_(gen), offset_(offset), bytes_(bytes), pos_(pos) {}

  template <typename U>
  LocalTensor<U> ReinterpretCast() const {
    return LocalTensor<U>(rec_, gen_, offset_, bytes_, pos_);
  }
  // A view starting `offset` elements in (alignment is checked at use).
  LocalTensor operator[](uint32_t offset) const {
    const uint32_t skip = offset * static_cast<uint32_t>(sizeof(T));
    return LocalTensor(rec_, gen_, offset_ + skip, bytes_ > skip ? bytes_ - skip : 0, pos_);
  }
  uint32_t GetSize() const { return bytes_ / static_cast<uint32_t>(sizeof(T)); }
  TPosition GetPosition() const { return pos_; }

  // Twin internals.
  uint8_t* Bytes() const { return ascend_twin::Current().ub() + offset_; }
  void Check(uint64_t count, bool write, ascend_twin::Pipe pipe, const char* op) const {
    ascend_twin::Current().CheckOperand(rec_, gen_, offset_, count * sizeof(T), write, pipe, op);
  }
  int rec() const { return rec_; }
  uint32_t gen() const { return gen_; }
  uint32_t offset() const { return offset_; }

 private:
  int rec_ = -1;
  uint32_t gen_ = 0;
  uint32_t offset_ = 0;
  uint32_t bytes_ = 0;
  TPosition pos_ = TPosition::VECCALC;
};

template <typename T>
class GlobalTensor {
 public:
  void SetGlobalBuffer(__gm__ T* buffer, uint64_t bufferSize) {
    addr_ = buffer;
    size_ = bufferSize;
    sized_ = true;
  }
  void SetGlobalBuffer(__gm__ T* buffer) {
    addr_ = buffer;
    sized_ = false;
  }
  GlobalTensor operator[](uint64_t offset) const {
    GlobalTensor t = *this;
    t.addr_ = addr_ + offset;
    if (sized_) t.size_ = offset <= size_ ? size_ - offset : 0;
    return t;
  }
  __gm__ T* GetPhyAddr() const { return addr_; }
  uint64_t GetSize() const { return size_; }

  // Twin internal: an access of `bytes` must fit the size given to
  // SetGlobalBuffer (when one was given).
  void CheckSpan(uint64_t bytes, const char* op) const {
    if (sized_ && bytes > size_ * sizeof(T)) {
      ascend_twin::Raise(ascend_twin::Violation::kGmOutOfBounds,
                         "%s: %llu bytes from a GlobalTensor of %llu elements", op,
                         static_cast<unsigned long long>(bytes),
                         static_cast<unsigned long long>(size_));
    }
  }

 private:
  T* addr_ = nullptr;
  uint64_t size_ = 0;
  bool sized_ = false;
};

struct DataCopyExtParams {
  DataCopyExtParams() = default;
  DataCopyExtParams(uint16_t count, uint32_t len, uint32_t src_stride, uint32_t dst_stride,
                    uint32_t rsv_)
      : blockCount(count), blockLen(len), srcStride(src_stride), dstStride(dst_stride), rsv(rsv_) {}
  uint16_t blockCount = 1;
  uint32_t blockLen = 0;   // bytes
  uint32_t srcStride = 0;  // GM side: bytes; UB side: 32-byte blocks
  uint32_t dstStride = 0;
  uint32_t rsv = 0;
};

template <typename T>
struct DataCopyPadExtParams {
  DataCopyPadExtParams() = default;
  DataCopyPadExtParams(bool is_pad, uint8_t left, uint8_t right, T value)
      : isPad(is_pad), leftPadding(left), rightPadding(right), paddingValue(value) {}
  bool isPad = false;
  uint8_t leftPadding = 0;   // elements
  uint8_t rightPadding = 0;  // elements
  T paddingValue{};
};

class TPipe;

template <TPosition pos, int32_t depth, auto mask = 0>
class TQue {
 public:
  template <typename T>
  LocalTensor<T> AllocTensor() {
    ascend_twin::BlockContext& ctx = Ready("AllocTensor");
    for (int id : bufs_) {
      ascend_twin::BufferRecord& r = ctx.record(id);
      if (r.state == ascend_twin::BufState::kFree) {
        r.state = ascend_twin::BufState::kAllocated;
        r.pending = ascend_twin::Pipe::kNone;
        return LocalTensor<T>(id, r.generation, r.offset, r.bytes, pos);
      }
    }
    ascend_twin::Raise(
        ascend_twin::Violation::kQueueProtocol,
        "AllocTensor: all %zu buffers of this queue are in use (a FreeTensor is missing)",
        bufs_.size());
  }

  template <typename T>
  bool EnQue(const LocalTensor<T>& t) {
    ascend_twin::BlockContext& ctx = Ready("EnQue");
    if (!Owns(t.rec())) {
      ascend_twin::Raise(
          ascend_twin::Violation::kQueueProtocol,
          "EnQue: tensor at UB offset %u was not allocated from this queue (position "
          "mismatch)",
          t.offset());
    }
    ascend_twin::BufferRecord& r = ctx.record(t.rec());
    if (r.generation != t.gen() || r.state == ascend_twin::BufState::kFree) {
      ascend_twin::Raise(ascend_twin::Violation::kUseAfterFree,
                         "EnQue: tensor used after FreeTensor");
    }
    if (r.state != ascend_twin::BufState::kAllocated) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol,
                         "EnQue: tensor is already enqueued or dequeued");
    }
    if (static_cast<int32_t>(fifo_.size()) >= depth) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol, "EnQue: queue of depth %d is full",
                         depth);
    }
    r.state = ascend_twin::BufState::kEnqueued;
    fifo_.push_back(t.rec());
    return true;
  }

  template <typename T>
  LocalTensor<T> DeQue() {
    ascend_twin::BlockContext& ctx = Ready("DeQue");
    if (fifo_.empty()) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol,
                         "DeQue on an empty queue (EnQue missing)");
    }
    const int id = fifo_.front();
    fifo_.pop_front();
    ascend_twin::BufferRecord& r = ctx.record(id);
    r.state = ascend_twin::BufState::kDequeued;
    r.pending = ascend_twin::Pipe::kNone;  // the queue's event hands the data over
    if (pos == TPosition::VECOUT) ++ctx.counters().tiles;
    return LocalTensor<T>(id, r.generation, r.offset, r.bytes, pos);
  }

  template <typename T>
  void FreeTensor(LocalTensor<T>& t) {
    ascend_twin::BlockContext& ctx = Ready("FreeTensor");
    if (!Owns(t.rec())) {
      ascend_twin::Raise(
          ascend_twin::Violation::kQueueProtocol,
          "FreeTensor: tensor was not allocated from this queue (position mismatch)");
    }
    ascend_twin::BufferRecord& r = ctx.record(t.rec());
    if (r.generation != t.gen() || r.state == ascend_twin::BufState::kFree) {
      ascend_twin::Raise(ascend_twin::Violation::kUseAfterFree, "FreeTensor: tensor freed twice");
    }
    if (r.state == ascend_twin::BufState::kEnqueued) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol,
                         "FreeTensor: tensor is still enqueued");
    }
    r.state = ascend_twin::BufState::kFree;
    ++r.generation;
  }

  // Twin internals (TPipe::InitBuffer).
  void Attach(ascend_twin::BlockContext& ctx, uint8_t num, uint32_t len) {
    if (ctx_ != nullptr) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol,
                         "InitBuffer called twice for one queue");
    }
    ctx_ = &ctx;
    id_ = ctx.NewQueueId();
    bufs_ = ctx.AllocateBuffers(num, len, static_cast<int>(pos), id_);
  }

 private:
  ascend_twin::BlockContext& Ready(const char* op) {
    if (ctx_ == nullptr) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol, "%s on a queue without InitBuffer",
                         op);
    }
    return *ctx_;
  }
  bool Owns(int rec) const {
    for (int id : bufs_) {
      if (id == rec) return true;
    }
    return false;
  }
  ascend_twin::BlockContext* ctx_ = nullptr;
  int id_ = -1;
  std::vector<int> bufs_;
  std::deque<int> fifo_;
};

template <TPosition pos = TPosition::VECCALC>
class TBuf {
 public:
  template <typename T>
  LocalTensor<T> Get() {
    const ascend_twin::BufferRecord& r = Rec();
    return LocalTensor<T>(id_, r.generation, r.offset, r.bytes, pos);
  }
  template <typename T>
  LocalTensor<T> Get(uint32_t len) {
    const ascend_twin::BufferRecord& r = Rec();
    if (len * sizeof(T) > r.bytes) {
      ascend_twin::Raise(ascend_twin::Violation::kUbOutOfRange,
                         "TBuf::Get(%u) beyond a %u-byte buffer", len, r.bytes);
    }
    return LocalTensor<T>(id_, r.generation, r.offset, static_cast<uint32_t>(len * sizeof(T)), pos);
  }
  void Attach(ascend_twin::BlockContext& ctx, uint32_t len) {
    ctx_ = &ctx;
    id_ = ctx.AllocateBuffers(1, len, static_cast<int>(pos), -1).front();
  }

 private:
  const ascend_twin::BufferRecord& Rec() {
    if (ctx_ == nullptr) {
      ascend_twin::Raise(ascend_twin::Violation::kQueueProtocol, "TBuf::Get without InitBuffer");
    }
    return ctx_->record(id_);
  }
  ascend_twin::BlockContext* ctx_ = nullptr;
  int id_ = -1;
};

class TPipe {
 public:
  template <TPosition pos, int32_t depth, auto mask>
  bool InitBuffer(TQue<pos, depth, mask>& que, uint8_t num, uint32_t len) {
    static_assert(pos == TPosition::VECIN || pos == TPosition::VECOUT,
                  "the twin models vector queues (VECIN/VECOUT) only");
    que.Attach(ascend_twin::Current(), num, len);
    return true;
  }
  template <TPosition pos>
  bool InitBuffer(TBuf<pos>& buf, uint32_t len) {
    buf.Attach(ascend_twin::Current(), len);
    return true;
  }
};

namespace twin_detail {

inline void CountVector(uint64_t bytes) {
  ascend_twin::PipeCounters& c = ascend_twin::Current().counters();
  ++c.vec_instrs;
  c.vec_repeats += (bytes + ascend_twin::kRepeatBytes - 1) / ascend_twin::kRepeatBytes;
}

inline void CheckCount(int64_t count, const char* op) {
  if (count <= 0)
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument, "%s: count %lld", op,
                       static_cast<long long>(count));
}

// Operands may coincide exactly (in place) but not overlap partially.
template <typename D, typename S>
void CheckOverlap(const LocalTensor<D>& d, uint64_t dbytes, const LocalTensor<S>& s,
                  uint64_t sbytes, const char* op) {
  const uint64_t d0 = d.offset(), d1 = d0 + dbytes, s0 = s.offset(), s1 = s0 + sbytes;
  if (d0 != s0 && d0 < s1 && s0 < d1) {
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                       "%s: destination partially overlaps a source", op);
  }
}

template <typename T>
T LoadElem(const LocalTensor<T>& t, uint64_t i) {
  T v;
  std::memcpy(&v, t.Bytes() + i * sizeof(T), sizeof(T));
  return v;
}

// dst[i] = f(src[i]) for i < count, on the V pipe.
template <typename D, typename S, class F>
void Unary(const char* op, const LocalTensor<D>& dst, const LocalTensor<S>& src, int64_t count,
           F f) {
  CheckCount(count, op);
  const uint64_t n = static_cast<uint64_t>(count);
  src.Check(n, false, ascend_twin::Pipe::kV, op);
  CheckOverlap(dst, n * sizeof(D), src, n * sizeof(S), op);
  std::vector<D> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = f(LoadElem(src, i));
  dst.Check(n, true, ascend_twin::Pipe::kV, op);
  std::memcpy(dst.Bytes(), out.data(), n * sizeof(D));
  CountVector(n * (sizeof(D) > sizeof(S) ? sizeof(D) : sizeof(S)));
}

template <typename T, class F>
void Binary(const char* op, const LocalTensor<T>& dst, const LocalTensor<T>& a,
            const LocalTensor<T>& b, int64_t count, F f) {
  CheckCount(count, op);
  const uint64_t n = static_cast<uint64_t>(count);
  a.Check(n, false, ascend_twin::Pipe::kV, op);
  b.Check(n, false, ascend_twin::Pipe::kV, op);
  CheckOverlap(dst, n * sizeof(T), a, n * sizeof(T), op);
  CheckOverlap(dst, n * sizeof(T), b, n * sizeof(T), op);
  std::vector<T> out(n);
  for (uint64_t i = 0; i < n; ++i) out[i] = f(LoadElem(a, i), LoadElem(b, i));
  dst.Check(n, true, ascend_twin::Pipe::kV, op);
  std::memcpy(dst.Bytes(), out.data(), n * sizeof(T));
  CountVector(n * sizeof(T));
}

// Integer results must fit: the 910B's behaviour on overflow is not
// documented, so the twin refuses it instead of guessing.
template <typename T>
T CheckedInt(int64_t v, const char* op) {
  if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max()) {
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument, "%s: integer overflow (%lld)", op,
                       static_cast<long long>(v));
  }
  return static_cast<T>(v);
}

}  // namespace twin_detail

// ---- Vector instructions (level 2: the first `count` elements) ----

template <typename T>
void Duplicate(const LocalTensor<T>& dst, const T& scalar, const int32_t& count) {
  static_assert(SupportType<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>(),
                "Duplicate: 16/32-bit types only");
  twin_detail::CheckCount(count, "Duplicate");
  dst.Check(static_cast<uint64_t>(count), true, ascend_twin::Pipe::kV, "Duplicate");
  for (int32_t i = 0; i < count; ++i) std::memcpy(dst.Bytes() + i * sizeof(T), &scalar, sizeof(T));
  twin_detail::CountVector(static_cast<uint64_t>(count) * sizeof(T));
}

// Duplicate, level 0 with a continuous mask: in each of repeatTimes repeats
// the first `mask` lanes of a 256-byte repeat are written; lane l of repeat r
// lands in 32-byte block r * dstRepeatStride + (l / lanes per block) *
// dstBlockStride. Modelled from the AscendC documentation (the bit-mask form
// is not modelled).
template <typename T>
void Duplicate(const LocalTensor<T>& dst, const T& scalar, uint64_t mask, const uint8_t repeatTimes,
               const uint16_t dstBlockStride, const uint8_t dstRepeatStride) {
  static_assert(SupportType<T, half, bfloat16_t, float, int16_t, uint16_t, int32_t, uint32_t>(),
                "Duplicate: 16/32-bit types only");
  constexpr uint64_t kLanes = ascend_twin::kRepeatBytes / sizeof(T);
  constexpr uint32_t kBlockLanes = ascend_twin::kUbAlign / sizeof(T);
  if (mask == 0 || mask > kLanes || repeatTimes == 0) {
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                       "Duplicate (level 0): mask %llu (1..%llu lanes), repeatTimes %u",
                       static_cast<unsigned long long>(mask),
                       static_cast<unsigned long long>(kLanes), repeatTimes);
  }
  for (uint32_t r = 0; r < repeatTimes; ++r) {
    for (uint32_t b = 0; b * kBlockLanes < mask; ++b) {
      const uint32_t lanes = static_cast<uint32_t>(
          mask - b * kBlockLanes < kBlockLanes ? mask - b * kBlockLanes : kBlockLanes);
      const LocalTensor<T> at =
          dst[(r * static_cast<uint32_t>(dstRepeatStride) + b * dstBlockStride) * kBlockLanes];
      at.Check(lanes, true, ascend_twin::Pipe::kV, "Duplicate (level 0)");
      for (uint32_t i = 0; i < lanes; ++i)
        std::memcpy(at.Bytes() + i * sizeof(T), &scalar, sizeof(T));
    }
  }
  twin_detail::CountVector(static_cast<uint64_t>(repeatTimes) * ascend_twin::kRepeatBytes);
}

template <typename T>
void Adds(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
          const int32_t& count) {
  static_assert(SupportType<T, int16_t, int32_t, float>(),
                "Adds: the twin models int16_t/int32_t/float");
  twin_detail::Unary("Adds", dst, src, count, [&](T x) -> T {
    if constexpr (std::is_integral<T>::value) {
      return twin_detail::CheckedInt<T>(static_cast<int64_t>(x) + scalar, "Adds");
    } else {
      return x + scalar;
    }
  });
}

template <typename T>
void Maxs(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
          const int32_t& count) {
  static_assert(
      SupportType<T, int16_t, int32_t>(),
      "Maxs: the twin models the integer forms (float max has NaN/-0 rules the kernel avoids)");
  twin_detail::Unary("Maxs", dst, src, count, [&](T x) -> T { return x > scalar ? x : scalar; });
}

template <typename T>
void Mins(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
          const int32_t& count) {
  static_assert(
      SupportType<T, int16_t, int32_t>(),
      "Mins: the twin models the integer forms (float min has NaN/-0 rules the kernel avoids)");
  twin_detail::Unary("Mins", dst, src, count, [&](T x) -> T { return x < scalar ? x : scalar; });
}

template <typename T>
void Muls(const LocalTensor<T>& dst, const LocalTensor<T>& src, const T& scalar,
          const int32_t& count) {
  static_assert(SupportType<T, float>(), "Muls: the twin models float only");
  twin_detail::Unary("Muls", dst, src, count,
                     [&](T x) -> T { return ascend_twin::MulF32(x, scalar); });
}

// Bitwise instructions exist for 16-bit lanes only on 910B; wider data is
// reinterpreted as int16_t pairs (the bits are the same).
template <typename T>
void And(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
         const int32_t& count) {
  static_assert(SupportType<T, int16_t, uint16_t>(), "And: 910B supports int16_t/uint16_t only");
  twin_detail::Binary("And", dst, a, b, count, [](T x, T y) -> T { return static_cast<T>(x & y); });
}

template <typename T>
void Or(const LocalTensor<T>& dst, const LocalTensor<T>& a, const LocalTensor<T>& b,
        const int32_t& count) {
  static_assert(SupportType<T, int16_t, uint16_t>(), "Or: 910B supports int16_t/uint16_t only");
  twin_detail::Binary("Or", dst, a, b, count, [](T x, T y) -> T { return static_cast<T>(x | y); });
}

template <typename T>
void Not(const LocalTensor<T>& dst, const LocalTensor<T>& src, const int32_t& count) {
  static_assert(SupportType<T, int16_t, uint16_t>(), "Not: 910B supports int16_t/uint16_t only");
  twin_detail::Unary("Not", dst, src, count, [](T x) -> T { return static_cast<T>(~x); });
}

template <typename D, typename S>
void Cast(const LocalTensor<D>& dst, const LocalTensor<S>& src, const RoundMode& mode,
          const uint32_t count) {
  constexpr bool widen = std::is_same<D, float>::value && SupportType<S, half, bfloat16_t>();
  constexpr bool narrow = std::is_same<S, float>::value && SupportType<D, half, bfloat16_t>();
  static_assert(widen || narrow, "Cast: the twin models half/bfloat16_t <-> float");
  constexpr bool bf16 = std::is_same<D, bfloat16_t>::value || std::is_same<S, bfloat16_t>::value;
  if constexpr (widen) {
    if (mode != RoundMode::CAST_NONE) {
      ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                         "Cast to float is exact: use CAST_NONE");
    }
    twin_detail::Unary("Cast", dst, src, count, [](S x) -> D {
      const uint32_t bits = ascend_twin::WidenToF32(x.bits, bf16);
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    });
  } else {
    if (mode != RoundMode::CAST_RINT) {
      ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                         "Cast from float: the twin models CAST_RINT only");
    }
    twin_detail::Unary("Cast", dst, src, count, [](S x) -> D {
      uint32_t bits;
      std::memcpy(&bits, &x, 4);
      return D{ascend_twin::NarrowFromF32(bits, bf16)};
    });
  }
}

// Compares: one result bit per element (LSB first), count * sizeof(T) a
// multiple of 256 bytes. Modelled with IEEE semantics; relugrad's kernel does
// not use it (see docs/ascend.md for why), tests exercise its checks.
template <typename T, typename U>
void Compares(const LocalTensor<U>& dst, const LocalTensor<T>& src, const T scalar, CMPMODE mode,
              uint32_t count) {
  static_assert(SupportType<T, half, float>() && std::is_same<U, uint8_t>::value,
                "Compares: half/float into a uint8_t bit mask");
  twin_detail::CheckCount(count, "Compares");
  if ((static_cast<uint64_t>(count) * sizeof(T)) % ascend_twin::kRepeatBytes != 0) {
    ascend_twin::Raise(ascend_twin::Violation::kCompareCount,
                       "Compares: count %u x %zu bytes is not a multiple of 256 bytes", count,
                       sizeof(T));
  }
  src.Check(count, false, ascend_twin::Pipe::kV, "Compares");
  std::vector<uint8_t> bits(count / 8, 0);
  for (uint32_t i = 0; i < count; ++i) {
    bool r;
    if constexpr (std::is_same<T, float>::value) {
      r = ascend_twin::CompareF32(twin_detail::LoadElem(src, i), scalar, static_cast<int>(mode));
    } else {
      r = ascend_twin::CompareF16(twin_detail::LoadElem(src, i).bits, scalar.bits,
                                  static_cast<int>(mode));
    }
    if (r) bits[i / 8] = static_cast<uint8_t>(bits[i / 8] | (1u << (i % 8)));
  }
  dst.Check(count / 8, true, ascend_twin::Pipe::kV, "Compares");
  std::memcpy(dst.Bytes(), bits.data(), bits.size());
  twin_detail::CountVector(static_cast<uint64_t>(count) * sizeof(T));
}

// Select, tensor-scalar mode: dst[i] = bit i of mask ? src0[i] : scalar.
template <typename T, typename U>
void Select(const LocalTensor<T>& dst, const LocalTensor<U>& mask, const LocalTensor<T>& src0,
            T scalar, SELMODE mode, uint32_t count) {
  static_assert(SupportType<T, half, float>() && std::is_same<U, uint8_t>::value,
                "Select: half/float with a uint8_t mask");
  if (mode != SELMODE::VSEL_TENSOR_SCALAR_MODE) {
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                       "Select: the twin models VSEL_TENSOR_SCALAR_MODE");
  }
  twin_detail::CheckCount(count, "Select");
  src0.Check(count, false, ascend_twin::Pipe::kV, "Select");
  mask.Check((count + 7) / 8, false, ascend_twin::Pipe::kV, "Select");
  std::vector<T> out(count);
  for (uint32_t i = 0; i < count; ++i) {
    const uint8_t byte = twin_detail::LoadElem(mask, i / 8);
    out[i] = ((byte >> (i % 8)) & 1u) ? twin_detail::LoadElem(src0, i) : scalar;
  }
  dst.Check(count, true, ascend_twin::Pipe::kV, "Select");
  std::memcpy(dst.Bytes(), out.data(), count * sizeof(T));
  twin_detail::CountVector(static_cast<uint64_t>(count) * sizeof(T));
}

// TransDataTo5HD (16-bit lanes): the NCHW -> NC1HWC0 transpose. Each repeat
// reads 16 elements (32 bytes) at each of the 16 source addresses and writes
// dst[j] = {src[0][j], ..., src[15][j]}; after a repeat every source address
// advances srcRepStride and every destination dstRepStride 32-byte blocks.
// Modelled from the AscendC documentation (high-half selection is for
// 8-bit data and not modelled).
constexpr int kTransAddrList = 16;
struct TransDataTo5HDParams {
  TransDataTo5HDParams() = default;
  TransDataTo5HDParams(bool dst_high, bool src_high, uint8_t repeat, uint16_t dst_stride,
                       uint16_t src_stride)
      : dstHighHalf(dst_high),
        srcHighHalf(src_high),
        repeatTimes(repeat),
        dstRepStride(dst_stride),
        srcRepStride(src_stride) {}
  bool dstHighHalf = false;
  bool srcHighHalf = false;
  uint8_t repeatTimes = 1;
  uint16_t dstRepStride = 0;
  uint16_t srcRepStride = 0;
};

template <typename T>
void TransDataTo5HD(const LocalTensor<T> (&dst)[kTransAddrList],
                    const LocalTensor<T> (&src)[kTransAddrList], const TransDataTo5HDParams& p) {
  static_assert(sizeof(T) == 2, "TransDataTo5HD: the twin models 16-bit lanes");
  if (p.repeatTimes == 0 || p.dstHighHalf || p.srcHighHalf) {
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                       "TransDataTo5HD: repeatTimes %u, high halves are for 8-bit data",
                       p.repeatTimes);
  }
  const char* op = "TransDataTo5HD";
  for (uint32_t r = 0; r < p.repeatTimes; ++r) {
    T in[kTransAddrList][kTransAddrList];
    for (int i = 0; i < kTransAddrList; ++i) {
      const LocalTensor<T> s = src[i][r * p.srcRepStride * 16u];
      s.Check(16, false, ascend_twin::Pipe::kV, op);
      std::memcpy(in[i], s.Bytes(), sizeof(in[i]));
    }
    for (int j = 0; j < kTransAddrList; ++j) {
      const LocalTensor<T> d = dst[j][r * p.dstRepStride * 16u];
      d.Check(16, true, ascend_twin::Pipe::kV, op);
      for (int i = 0; i < kTransAddrList; ++i)
        std::memcpy(d.Bytes() + i * sizeof(T), &in[i][j], sizeof(T));
    }
    twin_detail::CountVector(512);
  }
}

// ---- Data movement ----

namespace twin_detail {
inline void CheckPosition(TPosition have, TPosition want, const char* op) {
  if (have != want) {
    ascend_twin::Raise(
        ascend_twin::Violation::kQueueProtocol,
        "%s: UB tensor has position %d, the queue paradigm needs %d (VECIN for copy-in, "
        "VECOUT for copy-out)",
        op, static_cast<int>(have), static_cast<int>(want));
  }
}
}  // namespace twin_detail

// GM -> UB (MTE2). count * sizeof(T) must be a multiple of 32 bytes.
template <typename T>
void DataCopy(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const uint32_t count) {
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (count == 0 || bytes % ascend_twin::kUbAlign != 0) {
    ascend_twin::Raise(
        ascend_twin::Violation::kCopyLength,
        "DataCopy GM->UB: %llu bytes is not a positive multiple of 32 (hardware truncates; "
        "use DataCopyPad)",
        static_cast<unsigned long long>(bytes));
  }
  twin_detail::CheckPosition(dst.GetPosition(), TPosition::VECIN, "DataCopy GM->UB");
  src.CheckSpan(bytes, "DataCopy GM->UB");
  ascend_twin::Current().gm().CheckRead(src.GetPhyAddr(), bytes, "DataCopy GM->UB");
  dst.Check(count, true, ascend_twin::Pipe::kMte2, "DataCopy GM->UB");
  std::memcpy(dst.Bytes(), src.GetPhyAddr(), bytes);
  auto& c = ascend_twin::Current().counters();
  c.mte2_bytes += bytes;
  ++c.mte2_copies;
}

// UB -> GM (MTE3).
template <typename T>
void DataCopy(const GlobalTensor<T>& dst, const LocalTensor<T>& src, const uint32_t count) {
  const uint64_t bytes = static_cast<uint64_t>(count) * sizeof(T);
  if (count == 0 || bytes % ascend_twin::kUbAlign != 0) {
    ascend_twin::Raise(
        ascend_twin::Violation::kCopyLength,
        "DataCopy UB->GM: %llu bytes is not a positive multiple of 32 (hardware truncates; "
        "use DataCopyPad)",
        static_cast<unsigned long long>(bytes));
  }
  twin_detail::CheckPosition(src.GetPosition(), TPosition::VECOUT, "DataCopy UB->GM");
  src.Check(count, false, ascend_twin::Pipe::kMte3, "DataCopy UB->GM");
  dst.CheckSpan(bytes, "DataCopy UB->GM");
  ascend_twin::BlockContext& ctx = ascend_twin::Current();
  ctx.gm().CheckWrite(dst.GetPhyAddr(), bytes, ctx.index(), "DataCopy UB->GM");
  std::memcpy(dst.GetPhyAddr(), src.Bytes(), bytes);
  ctx.counters().mte3_bytes += bytes;
  ++ctx.counters().mte3_copies;
}

// GM -> UB with byte-exact lengths: each of blockCount blocks reads blockLen
// bytes (GM gap srcStride bytes) into UB rounded up to 32 bytes (UB gap
// dstStride 32-byte blocks); with isPad the padding elements get
// paddingValue, otherwise they stay unwritten.
template <typename T>
void DataCopyPad(const LocalTensor<T>& dst, const GlobalTensor<T>& src, const DataCopyExtParams& p,
                 const DataCopyPadExtParams<T>& pad) {
  const char* op = "DataCopyPad GM->UB";
  if (p.blockCount == 0 || p.blockLen == 0 || p.blockLen % sizeof(T) != 0) {
    ascend_twin::Raise(ascend_twin::Violation::kCopyLength, "%s: blockCount %u, blockLen %u bytes",
                       op, p.blockCount, p.blockLen);
  }
  const uint32_t padded =
      (p.blockLen + ascend_twin::kUbAlign - 1) / ascend_twin::kUbAlign * ascend_twin::kUbAlign;
  if (pad.leftPadding != 0) {
    ascend_twin::Raise(ascend_twin::Violation::kBadArgument,
                       "%s: the twin models right padding only", op);
  }
  if (pad.isPad && p.blockLen + pad.rightPadding * sizeof(T) > padded) {
    ascend_twin::Raise(ascend_twin::Violation::kCopyLength,
                       "%s: rightPadding %u runs past the 32-byte block", op, pad.rightPadding);
  }
  twin_detail::CheckPosition(dst.GetPosition(), TPosition::VECIN, op);
  ascend_twin::BlockContext& ctx = ascend_twin::Current();
  const uint8_t* g = reinterpret_cast<const uint8_t*>(src.GetPhyAddr());
  const uint64_t gspan = static_cast<uint64_t>(p.blockCount) * p.blockLen +
                         static_cast<uint64_t>(p.blockCount - 1) * p.srcStride;
  src.CheckSpan(gspan, op);
  uint32_t u = 0;
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    ctx.gm().CheckRead(g, p.blockLen, op);
    const LocalTensor<T> at = dst[u / sizeof(T)];
    // Padding need not end on an element multiple of 32 bytes: check the
    // whole written span at once, then write it.
    const uint32_t written =
        p.blockLen + (pad.isPad ? pad.rightPadding * static_cast<uint32_t>(sizeof(T)) : 0u);
    ctx.CheckOperand(at.rec(), at.gen(), at.offset(), written, true, ascend_twin::Pipe::kMte2, op);
    std::memcpy(at.Bytes(), g, p.blockLen);
    for (uint32_t i = 0; pad.isPad && i < pad.rightPadding; ++i) {
      std::memcpy(at.Bytes() + p.blockLen + i * sizeof(T), &pad.paddingValue, sizeof(T));
    }
    g += p.blockLen + p.srcStride;
    u += padded + p.dstStride * ascend_twin::kUbAlign;
  }
  ctx.counters().mte2_bytes += static_cast<uint64_t>(p.blockCount) * p.blockLen;
  ++ctx.counters().mte2_copies;
}

// UB -> GM with byte-exact lengths (UB gap srcStride 32-byte blocks, GM gap
// dstStride bytes).
template <typename T>
void DataCopyPad(const GlobalTensor<T>& dst, const LocalTensor<T>& src,
                 const DataCopyExtParams& p) {
  const char* op = "DataCopyPad UB->GM";
  if (p.blockCount == 0 || p.blockLen == 0 || p.blockLen % sizeof(T) != 0) {
    ascend_twin::Raise(ascend_twin::Violation::kCopyLength, "%s: blockCount %u, blockLen %u bytes",
                       op, p.blockCount, p.blockLen);
  }
  twin_detail::CheckPosition(src.GetPosition(), TPosition::VECOUT, op);
  ascend_twin::BlockContext& ctx = ascend_twin::Current();
  const uint32_t padded =
      (p.blockLen + ascend_twin::kUbAlign - 1) / ascend_twin::kUbAlign * ascend_twin::kUbAlign;
  const uint64_t gspan = static_cast<uint64_t>(p.blockCount) * p.blockLen +
                         static_cast<uint64_t>(p.blockCount - 1) * p.dstStride;
  dst.CheckSpan(gspan, op);
  uint8_t* g = reinterpret_cast<uint8_t*>(dst.GetPhyAddr());
  uint32_t u = 0;
  for (uint32_t b = 0; b < p.blockCount; ++b) {
    const LocalTensor<T> at = src[u / sizeof(T)];
    at.Check(p.blockLen / sizeof(T), false, ascend_twin::Pipe::kMte3, op);
    ctx.gm().CheckWrite(g, p.blockLen, ctx.index(), op);
    std::memcpy(g, at.Bytes(), p.blockLen);
    g += p.blockLen + p.dstStride;
    u += padded + p.srcStride * ascend_twin::kUbAlign;
  }
  ctx.counters().mte3_bytes += static_cast<uint64_t>(p.blockCount) * p.blockLen;
  ++ctx.counters().mte3_copies;
}

}  // namespace AscendC

namespace ascend_twin {
inline void ReadTiling(void* dst, const uint8_t* tiling, size_t bytes) {
  Current().gm().CheckRead(tiling, bytes, "GET_TILING_DATA");
  std::memcpy(dst, tiling, bytes);
}
}  // namespace ascend_twin

// New-style tiling: a plain struct registered once, read in the kernel.
#define REGISTER_TILING_DEFAULT(type) using RelugradTwinTilingType_ = type
#define GET_TILING_DATA(var, tiling) \
  RelugradTwinTilingType_ var;       \
  ascend_twin::ReadTiling(&var, tiling, sizeof(var))

#endif  // RELUGRAD_ASCEND_TWIN_KERNEL_OPERATOR_H_
