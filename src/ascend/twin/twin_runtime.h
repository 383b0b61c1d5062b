// The CPU twin's runtime: per-block Unified Buffer state, the global-memory
// registry with per-block write shares, violation reporting, counters for the
// cost model, and the launcher that runs every block on its own std::thread.
// The AscendC surface the kernel sees is twin/include/kernel_operator.h.
//
// The twin is a checker first: anything a 910B would punish silently (a
// truncated DataCopy, a race through a skipped EnQue/DeQue, a stray GM write)
// raises a TwinViolation naming the rule, the block and the call.
#ifndef RELUGRAD_ASCEND_TWIN_TWIN_RUNTIME_H_
#define RELUGRAD_ASCEND_TWIN_TWIN_RUNTIME_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ascend_twin {

// 910B (dav-c220) vector core facts; see docs/ascend.md for sources.
constexpr uint32_t kUbBytes = 192 * 1024;  // Unified Buffer per vector core
constexpr uint32_t kUbTPipeBytes =
    184 * 1024;                         // what TPipe may hand out; the top 8 KiB is API scratch
constexpr uint32_t kUbAlign = 32;       // UB operand alignment, DataCopy granule
constexpr uint32_t kRepeatBytes = 256;  // one vector repeat

enum class Violation : int {
  kQueueProtocol,     // DeQue on empty, AllocTensor beyond buffers, EnQue beyond depth, wrong queue
  kUseAfterFree,      // a LocalTensor used after FreeTensor
  kUbAlignment,       // UB operand not 32-byte aligned
  kUbOutOfRange,      // operand runs past its buffer
  kUbOverAllocation,  // TPipe buffers beyond 184 KiB
  kUninitializedRead,  // UB bytes read before anything wrote them
  kCopyLength,         // DataCopy length not a multiple of 32 bytes, bad DataCopyPad params
  kGmOutOfBounds,      // GM access outside every registered buffer
  kGmOutsideShare,     // GM write outside this block's share
  kCrossBlockOverlap,  // two blocks wrote the same GM byte
  kCompareCount,       // Compare/Compares count not a multiple of 256 bytes
  kPipeSync,           // data crossed pipes without EnQue/DeQue
  kBadArgument,        // anything else the API forbids (partial operand overlap, ...)
};
const char* ViolationName(Violation kind);

class TwinViolation : public std::runtime_error {
 public:
  TwinViolation(Violation kind, int block, const std::string& message);
  Violation kind() const { return kind_; }
  int block() const { return block_; }

 private:
  Violation kind_;
  int block_;
};

// Throws TwinViolation for the current block (-1 outside a kernel).
[[noreturn]] void Raise(Violation kind, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

enum class Pipe : uint8_t { kNone, kMte2, kV, kMte3, kS };
enum class BufState : uint8_t { kFree, kAllocated, kEnqueued, kDequeued, kCalc };

struct BufferRecord {
  uint32_t offset = 0;
  uint32_t bytes = 0;
  int position = 0;  // AscendC::TPosition value
  int queue = -1;    // owning TQue id, -1 for TBuf
  BufState state = BufState::kFree;
  uint32_t generation = 0;
  Pipe pending = Pipe::kNone;  // pipe whose write has not been handed over by EnQue/DeQue
};

// What the pipes did, for the cost model.
struct PipeCounters {
  uint64_t mte2_bytes = 0, mte2_copies = 0;
  uint64_t mte3_bytes = 0, mte3_copies = 0;
  uint64_t vec_instrs = 0, vec_repeats = 0;
  uint64_t tiles = 0;  // DeQue calls on VECOUT queues
};

class GmSpace;

// The state of one AI vector core while a kernel runs on it.
class BlockContext {
 public:
  BlockContext(int index, int count, GmSpace* gm);
  int index() const { return index_; }
  int count() const { return count_; }
  GmSpace& gm() { return *gm_; }
  PipeCounters& counters() { return counters_; }
  uint8_t* ub() { return ub_.data(); }

  // TPipe::InitBuffer: returns the record ids of `num` new buffers.
  std::vector<int> AllocateBuffers(int num, uint32_t bytes, int position, int queue);
  int NewQueueId() { return next_queue_++; }
  BufferRecord& record(int id) { return records_[static_cast<size_t>(id)]; }

  // Validates one UB operand of `bytes` at `offset` (absolute UB offset) in
  // buffer `rec` (generation `gen`), used by `pipe` for reading or writing.
  void CheckOperand(int rec, uint32_t gen, uint32_t offset, uint64_t bytes, bool write, Pipe pipe,
                    const char* op);
  // After the kernel returns: every queue buffer must be free again.
  void CheckDrained();

 private:
  int index_, count_;
  GmSpace* gm_;
  std::vector<uint8_t> ub_, defined_;
  uint32_t top_ = 0;
  std::vector<BufferRecord> records_;
  int next_queue_ = 0;
  PipeCounters counters_;
};

BlockContext& Current();
BlockContext* CurrentOrNull();

// Global memory as the twin sees it: registered host buffers. Inputs may be
// read anywhere; outputs carry one byte range (share) per block, and every
// written byte remembers its writer so that cross-block overlap shows.
class GmSpace {
 public:
  GmSpace();
  ~GmSpace();
  GmSpace(const GmSpace&) = delete;
  GmSpace& operator=(const GmSpace&) = delete;

  void AddInput(const void* base, size_t bytes, const char* name);
  // shares[b] = [begin, end) byte offsets of block b inside the buffer.
  void AddOutput(void* base, size_t bytes, const char* name,
                 const std::vector<std::pair<size_t, size_t>>& shares);
  // Block b may own several ranges (a launch narrower than the plan).
  void AddOutputRanges(void* base, size_t bytes, const char* name,
                       std::vector<std::vector<std::pair<size_t, size_t>>> shares);

  void CheckRead(const void* p, size_t bytes, const char* op) const;
  void CheckWrite(void* p, size_t bytes, int block, const char* op);

 private:
  struct Region;
  const Region* Find(const void* p, size_t bytes, bool writable) const;
  std::vector<std::unique_ptr<Region>> regions_;
};

using KernelFn = void (*)(uint8_t* dy, uint8_t* s, uint8_t* dx, uint8_t* workspace,
                          uint8_t* tiling);

// Runs fn on block_dim threads (one BlockContext each) and waits for all.
// The first violation (lowest block) is rethrown after every thread ended.
std::vector<PipeCounters> Launch(KernelFn fn, int block_dim, GmSpace& gm, uint8_t* dy, uint8_t* s,
                                 uint8_t* dx, uint8_t* workspace, uint8_t* tiling);

// Scalar helpers behind the vector API (twin_runtime.cc), each documenting
// how it models the hardware.
float MulF32(float a, float b);                 // IEEE RNE with subnormals; NaN out is 0x7fc00000
uint32_t WidenToF32(uint16_t bits, bool bf16);  // exact; NaN out is canonical
uint16_t NarrowFromF32(uint32_t bits, bool bf16);  // RNE, overflow to inf; NaN canonical
bool CompareF32(float a, float b, int cmp_mode);   // IEEE: NaN compares false (NE true)
bool CompareF16(uint16_t a, uint16_t b, int cmp_mode);

}  // namespace ascend_twin

#endif  // RELUGRAD_ASCEND_TWIN_TWIN_RUNTIME_H_
