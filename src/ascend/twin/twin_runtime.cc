#include "ascend/twin/twin_runtime.h"

#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>

#include "core/dtype_traits.h"
#include "core/float_convert.h"

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace ascend_twin {
namespace {

thread_local BlockContext* g_current = nullptr;

const char* PipeName(Pipe p) {
  switch (p) {
    case Pipe::kNone:
      return "none";
    case Pipe::kMte2:
      return "MTE2";
    case Pipe::kV:
      return "V";
    case Pipe::kMte3:
      return "MTE3";
    case Pipe::kS:
      return "S";
  }
  return "?";
}

}  // namespace

const char* ViolationName(Violation kind) {
  switch (kind) {
    case Violation::kQueueProtocol:
      return "queue protocol";
    case Violation::kUseAfterFree:
      return "use after FreeTensor";
    case Violation::kUbAlignment:
      return "UB alignment";
    case Violation::kUbOutOfRange:
      return "UB operand out of range";
    case Violation::kUbOverAllocation:
      return "UB over-allocation";
    case Violation::kUninitializedRead:
      return "read of unwritten UB";
    case Violation::kCopyLength:
      return "copy length";
    case Violation::kGmOutOfBounds:
      return "GM out of bounds";
    case Violation::kGmOutsideShare:
      return "GM write outside the block's share";
    case Violation::kCrossBlockOverlap:
      return "cross-block GM overlap";
    case Violation::kCompareCount:
      return "compare count";
    case Violation::kPipeSync:
      return "pipe synchronisation";
    case Violation::kBadArgument:
      return "bad argument";
  }
  return "?";
}

TwinViolation::TwinViolation(Violation kind, int block, const std::string& message)
    : std::runtime_error("ascend twin: block " + std::to_string(block) + ": " +
                         ViolationName(kind) + ": " + message),
      kind_(kind),
      block_(block) {}

void Raise(Violation kind, const char* format, ...) {
  char buf[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof(buf), format, args);
  va_end(args);
  throw TwinViolation(kind, g_current ? g_current->index() : -1, buf);
}

BlockContext& Current() {
  if (g_current == nullptr)
    Raise(Violation::kBadArgument, "AscendC API used outside a twin kernel launch");
  return *g_current;
}

BlockContext* CurrentOrNull() { return g_current; }

BlockContext::BlockContext(int index, int count, GmSpace* gm)
    : index_(index), count_(count), gm_(gm), ub_(kUbBytes, 0), defined_(kUbBytes, 0) {}

std::vector<int> BlockContext::AllocateBuffers(int num, uint32_t bytes, int position, int queue) {
  if (num <= 0 || bytes == 0)
    Raise(Violation::kBadArgument, "InitBuffer(num=%d, len=%u)", num, bytes);
  std::vector<int> ids;
  for (int i = 0; i < num; ++i) {
    const uint32_t size = (bytes + kUbAlign - 1) / kUbAlign * kUbAlign;
    if (static_cast<uint64_t>(top_) + size > kUbTPipeBytes) {
      Raise(Violation::kUbOverAllocation,
            "InitBuffer needs %u more bytes at offset %u: TPipe may use %u bytes of the %u-byte UB "
            "(the top 8 KiB is API scratch)",
            size, top_, kUbTPipeBytes, kUbBytes);
    }
    BufferRecord r;
    r.offset = top_;
    r.bytes = size;
    r.position = position;
    r.queue = queue;
    r.state = queue < 0 ? BufState::kCalc : BufState::kFree;
    records_.push_back(r);
    ids.push_back(static_cast<int>(records_.size() - 1));
    top_ += size;
  }
  return ids;
}

void BlockContext::CheckOperand(int rec, uint32_t gen, uint32_t offset, uint64_t bytes, bool write,
                                Pipe pipe, const char* op) {
  if (rec < 0 || static_cast<size_t>(rec) >= records_.size()) {
    Raise(Violation::kBadArgument, "%s: operand is not a tensor of this block's TPipe", op);
  }
  BufferRecord& r = records_[static_cast<size_t>(rec)];
  if (r.generation != gen || r.state == BufState::kFree) {
    Raise(Violation::kUseAfterFree, "%s: tensor at UB offset %u used after FreeTensor", op, offset);
  }
  if (r.state == BufState::kEnqueued) {
    Raise(Violation::kQueueProtocol,
          "%s: tensor at UB offset %u used while enqueued (DeQue it first)", op, offset);
  }
  if (offset % kUbAlign != 0) {
    Raise(Violation::kUbAlignment, "%s: UB operand at offset %u is not 32-byte aligned", op,
          offset);
  }
  if (offset < r.offset || offset + bytes > static_cast<uint64_t>(r.offset) + r.bytes) {
    Raise(Violation::kUbOutOfRange, "%s: operand [%u, %llu) leaves its buffer [%u, %u)", op, offset,
          static_cast<unsigned long long>(offset + bytes), r.offset, r.offset + r.bytes);
  }
  if (!write) {
    if (r.pending != Pipe::kNone && r.pending != pipe) {
      Raise(Violation::kPipeSync,
            "%s: pipe %s reads a buffer last written by pipe %s without EnQue/DeQue in between "
            "(a race on hardware)",
            op, PipeName(pipe), PipeName(r.pending));
    }
    for (uint64_t i = 0; i < bytes; ++i) {
      if (!defined_[offset + i]) {
        Raise(Violation::kUninitializedRead,
              "%s: UB byte %llu (buffer at %u) read before any write", op,
              static_cast<unsigned long long>(offset + i), r.offset);
      }
    }
  } else {
    std::memset(&defined_[offset], 1, bytes);
    // Queue buffers hand data between pipes; only EnQue/DeQue clears this.
    if (r.queue >= 0) r.pending = pipe;
  }
}

void BlockContext::CheckDrained() {
  for (const BufferRecord& r : records_) {
    if (r.queue >= 0 && r.state != BufState::kFree) {
      Raise(Violation::kQueueProtocol,
            "kernel ended with the queue buffer at UB offset %u not freed", r.offset);
    }
  }
}

struct GmSpace::Region {
  uint8_t* base = nullptr;
  size_t bytes = 0;
  bool writable = false;
  std::string name;
  std::vector<std::vector<std::pair<size_t, size_t>>> shares;
  std::unique_ptr<std::atomic<uint8_t>[]> writer;  // block + 1, 0 = unwritten
};

GmSpace::GmSpace() = default;
GmSpace::~GmSpace() = default;

void GmSpace::AddInput(const void* base, size_t bytes, const char* name) {
  auto r = std::make_unique<Region>();
  r->base = static_cast<uint8_t*>(const_cast<void*>(base));
  r->bytes = bytes;
  r->name = name;
  regions_.push_back(std::move(r));
}

void GmSpace::AddOutput(void* base, size_t bytes, const char* name,
                        const std::vector<std::pair<size_t, size_t>>& shares) {
  std::vector<std::vector<std::pair<size_t, size_t>>> ranges;
  for (const auto& s : shares) ranges.push_back({s});
  AddOutputRanges(base, bytes, name, std::move(ranges));
}

void GmSpace::AddOutputRanges(void* base, size_t bytes, const char* name,
                              std::vector<std::vector<std::pair<size_t, size_t>>> shares) {
  if (shares.size() > 254) Raise(Violation::kBadArgument, "at most 254 blocks are tracked");
  auto r = std::make_unique<Region>();
  r->base = static_cast<uint8_t*>(base);
  r->bytes = bytes;
  r->writable = true;
  r->name = name;
  r->shares = std::move(shares);
  r->writer.reset(new std::atomic<uint8_t>[bytes == 0 ? 1 : bytes]);
  for (size_t i = 0; i < bytes; ++i) r->writer[i].store(0, std::memory_order_relaxed);
  regions_.push_back(std::move(r));
}

const GmSpace::Region* GmSpace::Find(const void* p, size_t bytes, bool writable) const {
  const uint8_t* q = static_cast<const uint8_t*>(p);
  for (const auto& r : regions_) {
    if (writable && !r->writable) continue;
    if (q >= r->base && q + bytes <= r->base + r->bytes && q <= r->base + r->bytes) return r.get();
  }
  return nullptr;
}

void GmSpace::CheckRead(const void* p, size_t bytes, const char* op) const {
  if (Find(p, bytes, false) == nullptr) {
    Raise(Violation::kGmOutOfBounds,
          "%s: reads %zu bytes at %p, outside every GM buffer of the launch", op, bytes, p);
  }
}

void GmSpace::CheckWrite(void* p, size_t bytes, int block, const char* op) {
  const Region* r = Find(p, bytes, true);
  if (r == nullptr) {
    Raise(Violation::kGmOutOfBounds, "%s: writes %zu bytes at %p, outside every output GM buffer",
          op, bytes, p);
  }
  const size_t begin = static_cast<size_t>(static_cast<uint8_t*>(p) - r->base);
  if (static_cast<size_t>(block) >= r->shares.size()) {
    Raise(Violation::kGmOutsideShare, "%s: block %d has no share of %s", op, block,
          r->name.c_str());
  }
  bool inside = false;
  std::string owned;
  for (const auto& share : r->shares[static_cast<size_t>(block)]) {
    inside = inside || (begin >= share.first && begin + bytes <= share.second);
    owned += " [" + std::to_string(share.first) + ", " + std::to_string(share.second) + ")";
  }
  if (!inside) {
    Raise(Violation::kGmOutsideShare, "%s: writes %s bytes [%zu, %zu) but block %d owns%s", op,
          r->name.c_str(), begin, begin + bytes, block, owned.c_str());
  }
  const uint8_t me = static_cast<uint8_t>(block + 1);
  for (size_t i = begin; i < begin + bytes; ++i) {
    uint8_t expected = 0;
    if (!r->writer[i].compare_exchange_strong(expected, me) && expected != me) {
      Raise(Violation::kCrossBlockOverlap, "%s: %s byte %zu written by block %d and block %d", op,
            r->name.c_str(), i, expected - 1, block);
    }
  }
}

std::vector<PipeCounters> Launch(KernelFn fn, int block_dim, GmSpace& gm, uint8_t* dy, uint8_t* s,
                                 uint8_t* dx, uint8_t* workspace, uint8_t* tiling) {
  if (block_dim <= 0) Raise(Violation::kBadArgument, "block dim %d", block_dim);
  std::vector<PipeCounters> counters(static_cast<size_t>(block_dim));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(block_dim));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(block_dim));
  // If a thread cannot be started, join the ones that were before the
  // error leaves (a joinable std::thread must not be destroyed).
  try {
    for (int b = 0; b < block_dim; ++b) {
      threads.emplace_back([&, b] {
        try {
#if defined(__x86_64__) || defined(__i386__)
          // The vector unit is modelled as IEEE (no FTZ/DAZ): do not inherit
          // the launching thread's MXCSR.
          _mm_setcsr(0x1f80);
#endif
          auto ctx = std::make_unique<BlockContext>(b, block_dim, &gm);
          g_current = ctx.get();
          fn(dy, s, dx, workspace, tiling);
          ctx->CheckDrained();
          counters[static_cast<size_t>(b)] = ctx->counters();
          g_current = nullptr;
        } catch (...) {
          g_current = nullptr;
          errors[static_cast<size_t>(b)] = std::current_exception();
        }
      });
    }
  } catch (...) {
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  for (auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
  return counters;
}

float MulF32(float a, float b) {
  const float p = a * b;  // MXCSR pinned to IEEE by Launch
  if (std::isnan(p)) {
    // The payload a 910B gives a NaN product is not documented: hand back a
    // canonical NaN so a kernel that relies on any payload fails the tests.
    const uint32_t canonical = 0x7fc00000u;
    float f;
    std::memcpy(&f, &canonical, 4);
    return f;
  }
  return p;
}

uint32_t WidenToF32(uint16_t bits, bool bf16) {
  using relugrad::Dtype;
  const Dtype d = bf16 ? Dtype::kBF16 : Dtype::kF16;
  const bool nan = bf16 ? relugrad::IsNan<Dtype::kBF16>(bits) : relugrad::IsNan<Dtype::kF16>(bits);
  if (nan) return 0x7fc00000u;  // payload not modelled (see MulF32)
  const float f = static_cast<float>(relugrad::BitsToDouble(d, bits));  // exact
  uint32_t out;
  std::memcpy(&out, &f, 4);
  return out;
}

uint16_t NarrowFromF32(uint32_t bits, bool bf16) {
  using relugrad::Dtype;
  if ((bits & 0x7fffffffu) > 0x7f800000u) return bf16 ? 0x7fc0u : 0x7e00u;
  float f;
  std::memcpy(&f, &bits, 4);
  return static_cast<uint16_t>(relugrad::DoubleToBitsRne(bf16 ? Dtype::kBF16 : Dtype::kF16, f));
}

namespace {
template <class T>
bool Cmp(T a, T b, int mode) {
  switch (mode) {
    case 0:
      return a < b;  // LT
    case 1:
      return a > b;  // GT
    case 2:
      return a == b;  // EQ
    case 3:
      return a <= b;  // LE
    case 4:
      return a >= b;  // GE
    case 5:
      return a != b;  // NE
  }
  return false;
}
}  // namespace

bool CompareF32(float a, float b, int cmp_mode) { return Cmp(a, b, cmp_mode); }

bool CompareF16(uint16_t a, uint16_t b, int cmp_mode) {
  const double x = relugrad::BitsToDouble(relugrad::Dtype::kF16, a);
  const double y = relugrad::BitsToDouble(relugrad::Dtype::kF16, b);
  return Cmp(x, y, cmp_mode);
}

}  // namespace ascend_twin
