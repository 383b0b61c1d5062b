#include "cpu/launch.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <string>

#include "cpu/relu_grad_backend.h"
#include "cpu/thread_pool.h"

namespace relugrad {
namespace {

// Used when the machine does not say: the caches of the machine the
// thresholds were first measured on, so an unknown machine gets those
// decisions (docs/design.md, "One CPU launch policy").
constexpr int64_t kFallbackL2Bytes = int64_t{512} << 10;
constexpr int64_t kFallbackL3Bytes = int64_t{32} << 20;

// "32768K", "1M", "512" -> bytes; 0 when unreadable.
int64_t ParseCacheSize(const std::string& text) {
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || value <= 0) return 0;
  switch (*end) {
    case 'K':
      return value << 10;
    case 'M':
      return value << 20;
    case 'G':
      return value << 30;
    default:
      return value;
  }
}

std::string ReadLine(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return "";
  char buffer[64] = {};
  const bool ok = std::fgets(buffer, sizeof buffer, f) != nullptr;
  std::fclose(f);
  if (!ok) return "";
  std::string line(buffer);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  return line;
}

// The data or unified cache of `level` that cpu0 sees, from sysfs (the size
// of the one instance cpu0 shares: under a hypervisor sysconf may report a
// whole package's L3), then from sysconf; 0 when neither says.
int64_t CacheBytes(int level) {
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string lv = ReadLine(dir + "/level");
    if (lv.empty()) break;
    if (lv != std::to_string(level) || ReadLine(dir + "/type") == "Instruction") continue;
    const int64_t bytes = ParseCacheSize(ReadLine(dir + "/size"));
    if (bytes > 0) return bytes;
  }
#if defined(_SC_LEVEL2_CACHE_SIZE) && defined(_SC_LEVEL3_CACHE_SIZE)
  const long value = sysconf(level == 2 ? _SC_LEVEL2_CACHE_SIZE : _SC_LEVEL3_CACHE_SIZE);
  if (value > 0) return value;
#endif
  return 0;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// "Every worker" for ReadyWorkersFn: more than any thread count.
constexpr int kAllWorkers = 1 << 20;

// When the last splittable call ended (steady clock; 0: none yet).
std::atomic<int64_t> g_last_splittable_end_ns{0};

#if defined(__linux__)
uintptr_t PageBytes() {
  static const uintptr_t page = [] {
    const long size = sysconf(_SC_PAGESIZE);
    return size > 0 ? static_cast<uintptr_t>(size) : uintptr_t{4096};
  }();
  return page;
}
#endif

}  // namespace

bool OutputPagesResident(const void* p, int64_t bytes) {
#if defined(__linux__)
  if (p == nullptr || bytes <= 0) return true;
  const uintptr_t page = PageBytes();
  const uintptr_t first = reinterpret_cast<uintptr_t>(p);
  const uintptr_t probes[3] = {first + static_cast<uintptr_t>(bytes / 2), first,
                               first + static_cast<uintptr_t>(bytes - 1)};
  for (const uintptr_t at : probes) {
    unsigned char resident = 0;  // bit 0: the page is resident
    if (mincore(reinterpret_cast<void*>(at & ~(page - 1)), 1, &resident) != 0) return true;
    if ((resident & 1) == 0) return false;
  }
  return true;
#else
  (void)p;
  (void)bytes;
  return true;
#endif
}

#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
namespace {
// Whether this kernel knows MADV_POPULATE_WRITE (Linux 5.14 on): asked once
// on a page of our own, since EINVAL on a caller's memory can also mean a
// mapping that cannot be populated (VM_IO, VM_PFNMAP).
bool PopulateWriteSupported() {
  static const bool supported = [] {
    const size_t page = PageBytes();
    void* p = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    const bool ok = madvise(p, page, MADV_POPULATE_WRITE) == 0;
    munmap(p, page);
    return ok;
  }();
  return supported;
}
}  // namespace
#endif

void PrefaultForWrite(void* base, int64_t total, int64_t begin, int64_t end) {
#if defined(__linux__) && defined(MADV_POPULATE_WRITE)
  if (base == nullptr || begin >= end) return;
  const int saved_errno = errno;  // a library call leaves the caller's errno alone
  if (PopulateWriteSupported()) {
    const uintptr_t page = PageBytes();
    const uintptr_t at = reinterpret_cast<uintptr_t>(base);
    const auto up = [page](uintptr_t a) { return (a + page - 1) & ~(page - 1); };
    // From the piece's first whole page to the page holding its end, but
    // not past the output's last whole page (the first is never before the
    // output's first whole page). A refusal (a mapping that cannot be
    // populated, memory pressure, a signal) is ignored: the stores fault
    // those pages in as they would without it.
    const uintptr_t whole_end = (at + static_cast<uintptr_t>(total)) & ~(page - 1);
    const uintptr_t from = up(at + static_cast<uintptr_t>(begin));
    const uintptr_t to = std::min(whole_end, up(at + static_cast<uintptr_t>(end)));
    if (to > from) (void)madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
  }
  errno = saved_errno;
#else
  (void)base;
  (void)total;
  (void)begin;
  (void)end;
#endif
}

LaunchPolicy LaunchPolicy::FromMachine(int64_t l2_bytes, int64_t l3_bytes, int cores) {
  LaunchPolicy p;
  p.l2_bytes = l2_bytes > 0 ? l2_bytes : kFallbackL2Bytes;
  p.l3_bytes = l3_bytes > 0 ? l3_bytes : kFallbackL3Bytes;
  p.default_threads = std::max(1, cores);
  // One block: from twice the L2 the output does not stay in the core's L2
  // across calls, and streaming saves every line's read for ownership.
  p.stream_bytes_one_block = 2 * p.l2_bytes;
  // Split: dy, s and dx together fill three quarters of the L3 at a quarter
  // of it each; below that a warm output stays in the L2s and the L3 and
  // cached stores write it at cache speed.
  p.stream_bytes_split = std::max(p.stream_bytes_one_block, p.l3_bytes / 4);
  // The mask ops take the split rule (their threshold was measured at a
  // quarter of the L3, bench/mask).
  p.mask_stream_bytes = p.stream_bytes_split;
  // An output the next operation reads right away (autograd hands dx on)
  // stays cached to four times where an unread one would start streaming,
  // and never past where a split call would: streamed, such a dx is read back
  // from memory (docs/design.md, "Stores for an output read next").
  p.consumed_cached_bytes_one_thread = std::min(4 * p.stream_bytes_one_block, p.stream_bytes_split);
  // A quarter of the L2 (dx's piece with dy's and s's beside it), in whole
  // 4 KiB pages: 128 KiB at the fallback's 512 KiB.
  p.prefault_piece_bytes = std::max<int64_t>(int64_t{16} << 10, (p.l2_bytes / 4) & ~int64_t{4095});
  return p;
}

LaunchPolicy LaunchPolicy::ReadThisMachine() {
  return FromMachine(CacheBytes(2), CacheBytes(3), DefaultThreads());
}

WorkPlan PlanBlocks(const LaunchPolicy& policy, LaunchOp op, int64_t n, int elem_bytes,
                    uintptr_t out_address, int max_blocks) {
  WorkPlanRequest request;
  request.n = n;
  request.elem_bytes = elem_bytes;
  request.unit_bytes = policy.unit_bytes;
  request.max_blocks = max_blocks;
  request.grain_bytes = policy.grain_bytes;
  request.chunk_bytes = policy.chunk_bytes;
  request.max_chunks = policy.max_chunks;
  request.dx_address = out_address;
  if (op != LaunchOp::kReluGrad) {
    // The head (elements before the output's first line boundary) must be a
    // multiple of 8; units (64 bytes) are already 8..32 elements. Shift the
    // address the plan sees so the head shrinks to the multiple of 8 below it.
    const int64_t unit = policy.unit_bytes;
    const int64_t misalign = static_cast<int64_t>(out_address % static_cast<uintptr_t>(unit));
    const int64_t head = misalign == 0 ? 0 : (unit - misalign) / elem_bytes;
    request.dx_address = out_address + static_cast<uintptr_t>((head % 8) * elem_bytes);
  }
  return MakeWorkPlan(request);
}

LaunchDecision DecideSplittable(const LaunchPolicy& policy, LaunchOp op, int64_t out_bytes,
                                int max_blocks, relugrad_stores stores, bool aliases_input,
                                const void* out, ReadyWorkersFn ready_workers) {
  LaunchDecision d;
  d.splittable = max_blocks > 1 && out_bytes >= 2 * policy.grain_bytes;
  d.blocks = d.splittable ? max_blocks : 1;
  if (d.splittable && out_bytes < policy.wake_bytes) {
    const int ready = ready_workers == nullptr ? 0 : ready_workers(policy);
    if (ready <= 0) {
      d.alone = true;  // planned as a one-thread call: its store choice, a direct call
      d.blocks = 1;
    } else {
      d.blocks = std::min(d.blocks, 1 + ready);
    }
  }
  const bool split = d.splittable && !d.alone;
  const int64_t threshold = op != LaunchOp::kReluGrad ? policy.mask_stream_bytes
                                                      : (split ? policy.stream_bytes_split
                                                               : policy.stream_bytes_one_block);
  const StoreChoice c = ChooseStores(stores, out_bytes, threshold, aliases_input, out);
  d.stream = c.stream;
  d.prefault = c.prefault;
  return d;
}

int ReadyWorkersNow(const LaunchPolicy& policy) {
  const int64_t last = g_last_splittable_end_ns.load(std::memory_order_relaxed);
  if (last != 0 && NowNs() - last < policy.burst_gap_ns) return kAllWorkers;
  return ThreadPool::Global().AwakeWorkers();
}

void NoteSplittableCallEnd() { g_last_splittable_end_ns.store(NowNs(), std::memory_order_relaxed); }

HostSplit DecideHostSplit(const LaunchPolicy& policy, int64_t n, int elem_bytes, int threads,
                          int host_threads, int64_t host_grain_elems, const void* out) {
  HostSplit h;
  const int64_t out_bytes = n * elem_bytes;
  h.split = threads == 0 && n > host_grain_elems && host_threads > 1;
  h.threads = threads == 0 ? 1 : threads;
  h.part_unit_elems = policy.host_part_unit_elems;
  if (h.split) {
    // Each part is a one-thread call, which alone would take the one-block
    // threshold: the parts get the stores the whole split call would. Over
    // pages not yet faulted in they get AUTO, so that each part asks its own
    // pages and prefaults them (a CACHED part asks nothing).
    const StoreChoice c =
        ChooseStores(RELUGRAD_STORES_AUTO, out_bytes, policy.stream_bytes_split, false, out);
    h.stores = c.stream     ? RELUGRAD_STORES_STREAMING
               : c.prefault ? RELUGRAD_STORES_AUTO
                            : RELUGRAD_STORES_CACHED;
  } else if (h.threads == 1 && out_bytes < policy.consumed_cached_bytes_one_thread) {
    h.stores = RELUGRAD_STORES_CACHED;
  }
  return h;
}

}  // namespace relugrad
