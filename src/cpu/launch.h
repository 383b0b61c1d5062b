// The CPU launch policy: how one call runs on this machine (how many blocks,
// how many chunks per block, streaming or cached stores, whether to wake
// sleeping workers), decided in one place for relu_grad, forward_mask and
// grad_mask, and for callers that split a call over their own threads
// (relugrad_cpu_host_split, used by the torch-native library).
//
// The rule, its derivation from the machine's caches and the measurements
// behind each number: docs/design.md, "One CPU launch policy".
#ifndef RELUGRAD_CPU_LAUNCH_H_
#define RELUGRAD_CPU_LAUNCH_H_

#include <cstdint>

#include "core/work_plan.h"
#include "relugrad/relugrad.h"

namespace relugrad {

// Below this many bytes of output per block, fewer blocks are used: waking a
// thread costs about as much as computing 16 KiB in L1 (docs/design.md,
// "Grain size and thread split").
constexpr int64_t kCpuGrainBytes = 64 * 1024;
// Block boundaries fall on cache lines of the output: no two threads write
// one line.
constexpr int64_t kCpuUnitBytes = 64;
// Least bytes of output per chunk, the pool's unit of taking over a late
// worker's block: about the longest the caller waits for a running chunk.
constexpr int64_t kCpuChunkBytes = 64 * 1024;

enum class LaunchOp { kReluGrad, kForwardMask, kGradMask };

// Every number the decision reads. ForThisMachine() derives the cache-bound
// ones from the machine's caches once per process; tests and benchmarks
// build their own values (a field changed: an A/B run or a forced path).
struct LaunchPolicy {
  int64_t grain_bytes = kCpuGrainBytes;
  int64_t unit_bytes = kCpuUnitBytes;
  int64_t chunk_bytes = kCpuChunkBytes;
  int max_chunks = 64;  // per block: claiming them costs nothing measurable
  // stores = AUTO streams outputs of at least this many bytes (<= 0: never).
  // relu_grad on one block: the output cannot stay in the core's L2.
  int64_t stream_bytes_one_block = 0;
  // relu_grad split over blocks: the cores' L2s and the shared L3 keep a
  // warm output this large no longer.
  int64_t stream_bytes_split = 0;
  // forward_mask and grad_mask, one block or split.
  int64_t mask_stream_bytes = 0;
  // A caller splitting over its own threads whose output the next operation
  // reads right away (autograd): cached stores on one thread below this.
  int64_t consumed_cached_bytes_one_thread = 0;
  // Below this many bytes of output a call does not wake sleeping workers;
  // it runs alone unless they are awake or a loop of calls is running.
  int64_t wake_bytes = int64_t{16} << 20;
  // A call that could split, starting within this long of the previous such
  // call's end, is part of a loop of calls: it uses (and wakes) the workers.
  int64_t burst_gap_ns = 200 * 1000;
  // A host-split call's parts start at multiples of this many elements:
  // whole mask bytes and whole cache lines of every dtype, and the host's
  // grain (ATen's 32768) a whole number of units.
  int64_t host_part_unit_elems = 512;
  // An output whose pages are not yet faulted in is written in pieces of at
  // most this many bytes, each piece's pages faulted in by one system call
  // just before the kernel writes it: a quarter of the L2, so the zeroed
  // lines, and the inputs' lines of the same piece, are in the core's L2
  // when the kernel's stores reach them.
  int64_t prefault_piece_bytes = int64_t{128} << 10;
  int default_threads = 1;  // threads == 0
  // The machine facts the thresholds came from (0: unknown, fallback used).
  int64_t l2_bytes = 0;
  int64_t l3_bytes = 0;

  // The policy for cache sizes l2/l3 (bytes; <= 0: unknown, then the
  // documented fallback of 512 KiB / 32 MiB) and `cores` (threads == 0).
  static LaunchPolicy FromMachine(int64_t l2_bytes, int64_t l3_bytes, int cores);
  // FromMachine with this machine's caches (sysfs, then sysconf) and
  // DefaultThreads(); derived on first use, then fixed for the process.
  static const LaunchPolicy& ForThisMachine() {
    static const LaunchPolicy policy = ReadThisMachine();  // inline: a guard load per call
    return policy;
  }

 private:
  static LaunchPolicy ReadThisMachine();
};

// Workers that would take a block now without a wake-up: all of them in a
// loop of calls, else those spinning after a recent job (from worker 0 on),
// 0 when another caller holds the pool. Asked only for a call that may split
// and is below wake_bytes.
using ReadyWorkersFn = int (*)(const LaunchPolicy& policy);

// Small enough to come back in registers: the small calls' fixed cost counts.
struct LaunchDecision {
  // More than one thread allowed and at least two grains of output: the
  // call could use the workers (and counts for the loop-of-calls rule).
  bool splittable = false;
  // Splittable, but runs on the caller alone: the workers sleep.
  bool alone = false;
  bool stream = false;
  // Cached stores into pages not yet faulted in: fault each piece's pages in
  // ahead of its stores (PrefaultForWrite), never together with stream.
  bool prefault = false;
  // Blocks at most: 1 = one direct kernel call over [0, n) (no plan, no
  // pool: a third of a small call's fixed cost); more = PlanBlocks(blocks).
  int blocks = 1;
  bool OneBlock() const { return blocks <= 1; }
};

// Whether the pages holding the middle, first and last byte of
// [p, p + bytes) are resident (mincore), asked in that order and stopping at
// the first that is not. True for p == nullptr (unknown: the size rule alone
// decides) and where it cannot be asked (not Linux, mincore refuses). One
// system call per page asked, about a microsecond: read only for AUTO
// outputs large enough to stream.
bool OutputPagesResident(const void* p, int64_t bytes);

// How an output of out_bytes at `out` is stored, given the caller's hint and
// the op's AUTO threshold (<= 0: AUTO never streams and nothing is probed).
// An output that aliases an input is never streamed nor prefaulted (the
// kernels read and write it as one restrict-free stream; its pages are the
// input's). A CACHED hint is answered without asking a page: it neither
// streams nor prefaults (a caller that hints CACHED knows its output is warm,
// and a probe per call is not free).
// From the threshold on, an AUTO output's pages are probed (mincore):
//  - resident: AUTO streams (a cached store would read every line first);
//  - not yet faulted in: cached stores, pieces prefaulted. Pages not faulted
//    in are zeroed by the kernel with ordinary stores, so their lines are
//    cached when the kernel writes them, and a streaming store to a cached
//    line costs more than a cached one; a piece's pages are faulted in by
//    one system call instead of one trap per page. docs/design.md,
//    "Streaming stores and fresh pages", "Fresh pages faulted in ahead".
// An explicit STREAMING hint streams at every size and probes nothing.
struct StoreChoice {
  bool stream = false;
  bool prefault = false;
};
inline StoreChoice ChooseStores(relugrad_stores stores, int64_t out_bytes, int64_t auto_threshold,
                                bool aliases_input, const void* out) {
  StoreChoice c;
  if (aliases_input) return c;
  if (stores == RELUGRAD_STORES_STREAMING) {
    c.stream = true;
    return c;
  }
  if (stores == RELUGRAD_STORES_CACHED) return c;
  if (auto_threshold <= 0 || out_bytes < auto_threshold) return c;
  const bool resident = OutputPagesResident(out, out_bytes);
  c.stream = resident;
  c.prefault = !resident;
  return c;
}

// Faults in, for writing, the pages from the first whole page of
// [base + begin, base + end) to the page holding base + end (this piece's
// stores reach that page before the next piece's), leaving out any page the
// output [base, base + total) shares with other memory: one
// madvise(MADV_POPULATE_WRITE) where Linux has it (5.14 on), nothing
// elsewhere or when the system refuses (the stores then fault the pages in
// one by one, as without it). No byte changes: the kernel maps in what the
// first store would have faulted in.
void PrefaultForWrite(void* base, int64_t total, int64_t begin, int64_t end);

// The piece length (elements) of a call's prefaulted pieces: 0 when the
// decision does not prefault.
inline int64_t PrefaultPieceElems(const LaunchPolicy& policy, const LaunchDecision& d,
                                  int elem_bytes) {
  return d.prefault ? policy.prefault_piece_bytes / elem_bytes : 0;
}

// Runs piece(begin, end) over [begin, end) in pieces of about piece_elems
// elements (a multiple of 8, so mask pieces own whole mask bytes), each
// after prefault(begin, end) has faulted its pages in; piece_elems <= 0
// (PrefaultPieceElems of a decision that does not prefault): one piece,
// nothing prefaulted.
template <typename Prefault, typename Piece>
void RunPrefaulted(int64_t begin, int64_t end, int64_t piece_elems, const Prefault& prefault,
                   const Piece& piece) {
  if (piece_elems <= 0) {
    piece(begin, end);
    return;
  }
  const int64_t step = piece_elems < 8 ? 8 : piece_elems & ~int64_t{7};
  for (int64_t b = begin; b < end;) {
    const int64_t e = end - b > step ? b + step : end;
    prefault(b, e);
    piece(b, e);
    b = e;
  }
}

// The decision for a call that may split (Decide's slow half).
LaunchDecision DecideSplittable(const LaunchPolicy& policy, LaunchOp op, int64_t out_bytes,
                                int max_blocks, relugrad_stores stores, bool aliases_input,
                                const void* out, ReadyWorkersFn ready_workers);

// The one launch decision, for op over n elements of elem_bytes: threads is
// the caller's option (0 = policy.default_threads), stores its hint,
// aliases_input whether the output is an input, out the output (its pages'
// residency; nullptr: unknown). ready_workers is asked at
// most once (nullptr: none ready). Inline: a call that cannot split (the
// small calls whose fixed cost counts) costs two compares and the store rule.
inline LaunchDecision Decide(const LaunchPolicy& policy, LaunchOp op, int64_t n, int elem_bytes,
                             int threads, relugrad_stores stores, bool aliases_input,
                             const void* out, ReadyWorkersFn ready_workers) {
  const int64_t out_bytes = n * elem_bytes;
  const int max_blocks = threads == 0 ? policy.default_threads : threads;
  if (max_blocks > 1 && out_bytes >= 2 * policy.grain_bytes) {
    return DecideSplittable(policy, op, out_bytes, max_blocks, stores, aliases_input, out,
                            ready_workers);
  }
  LaunchDecision d;
  const StoreChoice c = ChooseStores(
      stores, out_bytes,
      op == LaunchOp::kReluGrad ? policy.stream_bytes_one_block : policy.mask_stream_bytes,
      aliases_input, out);
  d.stream = c.stream;
  d.prefault = c.prefault;
  return d;
}

// Blocks and chunks for n elements whose output starts at out_address, at
// most max_blocks blocks. Mask ops also put every block boundary on a
// multiple of 8 elements (a block owns whole mask bytes; when the output's
// misalignment makes that and line boundaries impossible together, the byte
// rule wins and a line per boundary is shared: false sharing, never a race).
WorkPlan PlanBlocks(const LaunchPolicy& policy, LaunchOp op, int64_t n, int elem_bytes,
                    uintptr_t out_address, int max_blocks);

// The production pool state: the loop-of-calls clock, then the global pool.
int ReadyWorkersNow(const LaunchPolicy& policy);
// After a splittable call (split or alone) ends: starts the loop-of-calls gap.
void NoteSplittableCallEnd();

// How a caller that owns threads (a framework's intra-op pool) runs one call
// of n elements, asked with threads (the relugrad option: 0 = the host's
// threads) and the host's thread count and grain (elements below which the
// host does not split), out the output (its pages' residency; nullptr:
// unknown). The output is read right away by the next operation.
struct HostSplit {
  bool split = false;  // over the host's threads, one relugrad call per part
  int threads = 1;     // relugrad's threads option for each call
  relugrad_stores stores = RELUGRAD_STORES_AUTO;  // and its store hint
  int64_t part_unit_elems = 1;                    // parts start at multiples of this
};
HostSplit DecideHostSplit(const LaunchPolicy& policy, int64_t n, int elem_bytes, int threads,
                          int host_threads, int64_t host_grain_elems, const void* out);

}  // namespace relugrad

#endif  // RELUGRAD_CPU_LAUNCH_H_
