// The CPU launch policy (cpu/launch.h): its thresholds from the machine's
// caches, and the one decision every CPU op and the host-split entry point
// take, for given pool states.
#include "cpu/launch.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include "relugrad/relugrad.h"

namespace relugrad {
namespace {

constexpr int64_t kKiB = 1024, kMiB = 1024 * 1024;

// The machine the thresholds were measured on (a 2-core Zen 4 VM: sysfs
// reports 512 KiB of L2 and a 32 MiB L3) gets the measured decisions.
TEST(LaunchPolicy, TheMeasuredMachineGetsTheMeasuredThresholds) {
  const LaunchPolicy p = LaunchPolicy::FromMachine(512 * kKiB, 32 * kMiB, 2);
  EXPECT_EQ(p.stream_bytes_one_block, 1 * kMiB);
  EXPECT_EQ(p.stream_bytes_split, 8 * kMiB);
  EXPECT_EQ(p.mask_stream_bytes, 8 * kMiB);
  EXPECT_EQ(p.consumed_cached_bytes_one_thread, 4 * kMiB);
  EXPECT_EQ(p.wake_bytes, 16 * kMiB);
  EXPECT_EQ(p.grain_bytes, 64 * kKiB);
  EXPECT_EQ(p.chunk_bytes, 64 * kKiB);
  EXPECT_EQ(p.unit_bytes, 64);
  EXPECT_EQ(p.default_threads, 2);
}

TEST(LaunchPolicy, UnknownCachesFallBackToTheMeasuredMachine) {
  const LaunchPolicy p = LaunchPolicy::FromMachine(0, -1, 0);
  EXPECT_EQ(p.l2_bytes, 512 * kKiB);
  EXPECT_EQ(p.l3_bytes, 32 * kMiB);
  EXPECT_EQ(p.stream_bytes_one_block, 1 * kMiB);
  EXPECT_EQ(p.stream_bytes_split, 8 * kMiB);
  EXPECT_EQ(p.default_threads, 1);
}

// A large L3 keeps larger warm outputs cached when split (a Xeon with 2 MiB
// L2 and 480 MiB L3); a small one never streams split calls earlier than
// one-block calls.
TEST(LaunchPolicy, ThresholdsFollowTheCaches) {
  const LaunchPolicy xeon = LaunchPolicy::FromMachine(2 * kMiB, 480 * kMiB, 96);
  EXPECT_EQ(xeon.stream_bytes_one_block, 4 * kMiB);
  EXPECT_EQ(xeon.stream_bytes_split, 120 * kMiB);
  EXPECT_EQ(xeon.mask_stream_bytes, 120 * kMiB);
  EXPECT_EQ(xeon.consumed_cached_bytes_one_thread, 16 * kMiB);
  const LaunchPolicy small = LaunchPolicy::FromMachine(1 * kMiB, 2 * kMiB, 4);
  EXPECT_EQ(small.stream_bytes_one_block, 2 * kMiB);
  EXPECT_EQ(small.stream_bytes_split, 2 * kMiB);
  EXPECT_EQ(small.consumed_cached_bytes_one_thread, 2 * kMiB);  // never past the split rule
}

TEST(LaunchPolicy, ThisMachineReportsItsCaches) {
  const LaunchPolicy& p = LaunchPolicy::ForThisMachine();
  EXPECT_GT(p.l2_bytes, 0);
  EXPECT_GE(p.l3_bytes, p.l2_bytes) << "l2=" << p.l2_bytes << " l3=" << p.l3_bytes;
  EXPECT_GE(p.stream_bytes_split, p.stream_bytes_one_block);
  EXPECT_GE(p.default_threads, 1);
  EXPECT_EQ(&p, &LaunchPolicy::ForThisMachine()) << "derived once per process";
}

int g_asked = 0;
int NoneReady(const LaunchPolicy&) {
  ++g_asked;
  return 0;
}
int OneReady(const LaunchPolicy&) {
  ++g_asked;
  return 1;
}
int AllReady(const LaunchPolicy&) {
  ++g_asked;
  return 1 << 20;
}

const LaunchPolicy kMeasured = LaunchPolicy::FromMachine(512 * kKiB, 32 * kMiB, 2);

// Decide for n f32 elements under kMeasured.
LaunchDecision F32(LaunchOp op, int64_t n, int threads, ReadyWorkersFn ready,
                   relugrad_stores stores = RELUGRAD_STORES_AUTO, bool aliases = false,
                   const LaunchPolicy& policy = kMeasured) {
  return Decide(policy, op, n, 4, threads, stores, aliases, nullptr, ready);
}
constexpr LaunchOp kGrad = LaunchOp::kReluGrad;

TEST(Decide, CallsThatCannotSplitAreOneBlockWithoutAskingThePool) {
  g_asked = 0;
  for (int64_t n : {int64_t{1}, int64_t{16}, int64_t{1024}, 2 * kCpuGrainBytes / 4 - 1}) {
    const LaunchDecision d = F32(kGrad, n, 2, &AllReady);
    EXPECT_TRUE(d.OneBlock()) << n;
    EXPECT_FALSE(d.splittable) << n;
    EXPECT_FALSE(d.stream) << n;
  }
  const LaunchDecision big = F32(kGrad, 64 * kMiB, 1, &AllReady);
  EXPECT_TRUE(big.OneBlock());
  EXPECT_TRUE(big.stream);
  EXPECT_EQ(g_asked, 0);
}

TEST(Decide, SleepingWorkersBelowTheWakeSizeMeanOneBlock) {
  g_asked = 0;
  const int64_t n = kMiB;  // 4 MiB of f32 dx
  const LaunchDecision alone = F32(kGrad, n, 2, &NoneReady);
  EXPECT_EQ(g_asked, 1);
  EXPECT_TRUE(alone.splittable);
  EXPECT_TRUE(alone.alone);
  EXPECT_TRUE(alone.OneBlock());
  EXPECT_TRUE(alone.stream) << "alone, the one-block threshold (1 MiB) applies";
  const LaunchDecision split = F32(kGrad, n, 2, &OneReady);
  EXPECT_FALSE(split.alone);
  EXPECT_EQ(split.blocks, 2);
  const WorkPlan plan = PlanBlocks(kMeasured, kGrad, n, 4, 4096, split.blocks);
  EXPECT_EQ(plan.blocks, 2);
  EXPECT_GT(plan.chunks, 1);
  EXPECT_FALSE(split.stream) << "split, the split threshold (8 MiB) applies";
  const LaunchDecision none = F32(kGrad, n, 2, nullptr);
  EXPECT_TRUE(none.alone);
}

TEST(Decide, AwakeWorkersBoundTheBlocksBelowTheWakeSize) {
  const int64_t n = 2 * kMiB;  // 8 MiB of f32
  EXPECT_EQ(F32(kGrad, n, 8, &OneReady).blocks, 2);
  EXPECT_EQ(F32(kGrad, n, 8, &AllReady).blocks, 8) << "a loop of calls uses every thread asked for";
}

TEST(Decide, FromTheWakeSizeOnEveryCallSplitsWithoutAsking) {
  g_asked = 0;
  const int64_t n = kMeasured.wake_bytes / 4;
  const LaunchDecision d = F32(kGrad, n, 2, &NoneReady);
  EXPECT_EQ(g_asked, 0);
  EXPECT_EQ(d.blocks, 2);
  EXPECT_TRUE(d.stream);
  const LaunchDecision below = F32(kGrad, n - 16, 2, &NoneReady);
  EXPECT_EQ(g_asked, 1);
  EXPECT_TRUE(below.alone);
}

TEST(Decide, StoresFollowTheHintAndNeverStreamAnAliasedOutput) {
  EXPECT_TRUE(F32(kGrad, 16, 1, nullptr, RELUGRAD_STORES_STREAMING).stream);
  EXPECT_FALSE(F32(kGrad, 16, 1, nullptr, RELUGRAD_STORES_STREAMING, /*aliases=*/true).stream);
  EXPECT_FALSE(F32(kGrad, 64 * kMiB, 2, &AllReady, RELUGRAD_STORES_AUTO, true).stream);
  EXPECT_FALSE(F32(kGrad, 64 * kMiB, 2, &AllReady, RELUGRAD_STORES_CACHED).stream);
  LaunchPolicy never = kMeasured;
  never.stream_bytes_split = 0;  // an A/B benchmark's "AUTO never streams"
  EXPECT_FALSE(F32(kGrad, 64 * kMiB, 2, &AllReady, RELUGRAD_STORES_AUTO, false, never).stream);
}

// The mask ops: one threshold (8 MiB here) alone or split, and blocks on
// whole mask bytes at every output misalignment.
TEST(Decide, MaskOpsStreamFromTheMaskThresholdOnWholeMaskBytes) {
  for (LaunchOp op : {LaunchOp::kForwardMask, LaunchOp::kGradMask}) {
    EXPECT_FALSE(F32(op, 2 * kMiB - 16, 1, nullptr).stream);
    EXPECT_TRUE(F32(op, 2 * kMiB, 1, nullptr).stream);
    const LaunchDecision alone = F32(op, kMiB, 2, &NoneReady);
    EXPECT_TRUE(alone.alone);
    EXPECT_FALSE(alone.stream);
    EXPECT_FALSE(F32(op, kMiB, 2, &AllReady).stream);
    const int64_t n = 3 * kMiB + 5;
    const LaunchDecision d = F32(op, n, 2, &AllReady);
    ASSERT_EQ(d.blocks, 2);
    for (uintptr_t misalign = 0; misalign < 64; misalign += 4) {
      const WorkPlan plan = PlanBlocks(kMeasured, op, n, 4, 4096 + misalign, d.blocks);
      ASSERT_EQ(plan.blocks, 2);
      for (int b = 1; b < plan.blocks; ++b) EXPECT_EQ(plan.Begin(b) % 8, 0) << misalign;
    }
  }
}

// The torch-native library's rule, for ATen's grain of 32768 elements.
TEST(HostSplit, SplitsOverTheHostsThreadsWithTheStoresOfTheWholeCall) {
  const int64_t grain = 32768;
  HostSplit h = DecideHostSplit(kMeasured, grain + 1, 4, 0, 2, grain, nullptr);
  EXPECT_TRUE(h.split);
  EXPECT_EQ(h.threads, 1);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_CACHED);
  EXPECT_EQ(h.part_unit_elems, 512);
  h = DecideHostSplit(kMeasured, 2 * kMiB, 4, 0, 2, grain, nullptr);  // 8 MiB: the split threshold
  EXPECT_TRUE(h.split);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_STREAMING);
  h = DecideHostSplit(kMeasured, 2 * kMiB - 16, 4, 0, 2, grain, nullptr);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_CACHED);
  // Not split: one relugrad call on one thread, cached below 4 MiB (the
  // output is read next: four times the one-block threshold).
  h = DecideHostSplit(kMeasured, grain, 4, 0, 2, grain, nullptr);
  EXPECT_FALSE(h.split);
  EXPECT_EQ(h.threads, 1);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_CACHED);
  h = DecideHostSplit(kMeasured, 4 * kMiB, 4, 0, 1, grain, nullptr);  // one host thread, 16 MiB
  EXPECT_FALSE(h.split);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_AUTO);
  h = DecideHostSplit(kMeasured, kMiB - 16, 4, 1, 2, grain, nullptr);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_CACHED);
  h = DecideHostSplit(kMeasured, kMiB, 4, 1, 2, grain, nullptr);  // 4 MiB
  EXPECT_EQ(h.stores, RELUGRAD_STORES_AUTO);
  // threads = 2: relugrad's own pool and its own store rule.
  h = DecideHostSplit(kMeasured, 64 * kMiB, 4, 2, 2, grain, nullptr);
  EXPECT_FALSE(h.split);
  EXPECT_EQ(h.threads, 2);
  EXPECT_EQ(h.stores, RELUGRAD_STORES_AUTO);
}

TEST(HostSplit, TheCEntryPointAnswersAsThePolicyAndRefusesBadArguments) {
  relugrad_host_split out;
  ASSERT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, 1 << 20, 0, 2, 32768, nullptr, &out),
            RELUGRAD_OK);
  const HostSplit h =
      DecideHostSplit(LaunchPolicy::ForThisMachine(), 1 << 20, 4, 0, 2, 32768, nullptr);
  EXPECT_EQ(out.split, h.split ? 1 : 0);
  EXPECT_EQ(out.threads, h.threads);
  EXPECT_EQ(out.stores, h.stores);
  EXPECT_EQ(out.part_unit_elems, h.part_unit_elems);
  EXPECT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, 16, 0, 2, 32768, nullptr, nullptr),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("out"), std::string::npos);
  EXPECT_EQ(
      relugrad_cpu_host_split(static_cast<relugrad_dtype>(99), 16, 0, 2, 32768, nullptr, &out),
      RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, -1, 0, 2, 32768, nullptr, &out),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, 16, -1, 2, 32768, nullptr, &out),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, 16, 0, 0, 32768, nullptr, &out),
            RELUGRAD_INVALID_ARGUMENT);
  EXPECT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, 16, 0, 2, -1, nullptr, &out),
            RELUGRAD_INVALID_ARGUMENT);
}

// AUTO streams a large output only when its pages are resident: a fresh
// anonymous mapping (as a large allocation is) is not, until written.
class FreshMapping {
 public:
  explicit FreshMapping(int64_t bytes) : bytes_(bytes) {
    p_ = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    // The tests read residency page by page: no transparent huge page or
    // multi-page folio may fault in a neighbour with the page written.
    if (p_ != MAP_FAILED) madvise(p_, static_cast<size_t>(bytes), MADV_NOHUGEPAGE);
  }
  ~FreshMapping() {
    if (p_ != MAP_FAILED) munmap(p_, static_cast<size_t>(bytes_));
  }
  FreshMapping(const FreshMapping&) = delete;
  FreshMapping& operator=(const FreshMapping&) = delete;
  char* data() const { return static_cast<char*>(p_); }
  bool ok() const { return p_ != MAP_FAILED; }

 private:
  int64_t bytes_;
  void* p_;
};

TEST(Residency, FreshPagesAreNotResidentUntilWritten) {
  const int64_t bytes = 16 * kMiB;
  FreshMapping m(bytes);
  ASSERT_TRUE(m.ok());
  EXPECT_FALSE(OutputPagesResident(m.data(), bytes));
  m.data()[0] = 1;  // the first page only: the middle and the last are still fresh
  EXPECT_FALSE(OutputPagesResident(m.data(), bytes));
  m.data()[bytes / 2] = 1;
  EXPECT_FALSE(OutputPagesResident(m.data(), bytes));
  m.data()[bytes - 1] = 1;
  EXPECT_TRUE(OutputPagesResident(m.data(), bytes));
  // Unknown (no pointer) and unmapped memory (mincore refuses): the size rule alone.
  EXPECT_TRUE(OutputPagesResident(nullptr, bytes));
  void* const stale = mmap(nullptr, static_cast<size_t>(bytes), PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(stale, MAP_FAILED);
  ASSERT_EQ(munmap(stale, static_cast<size_t>(bytes)), 0);
  EXPECT_TRUE(OutputPagesResident(stale, bytes));
}

TEST(Residency, AutoStreamsOnlyResidentOutputs) {
  const int64_t n = 4 * kMiB;  // 16 MiB of f32: above every AUTO threshold of kMeasured
  FreshMapping m(n * 4);
  ASSERT_TRUE(m.ok());
  for (int threads : {1, 2}) {
    EXPECT_FALSE(
        Decide(kMeasured, kGrad, n, 4, threads, RELUGRAD_STORES_AUTO, false, m.data(), &AllReady)
            .stream)
        << threads;
    EXPECT_TRUE(Decide(kMeasured, kGrad, n, 4, threads, RELUGRAD_STORES_STREAMING, false, m.data(),
                       &AllReady)
                    .stream)
        << "an explicit hint is obeyed, threads=" << threads;
    EXPECT_FALSE(Decide(kMeasured, LaunchOp::kGradMask, n, 4, threads, RELUGRAD_STORES_AUTO, false,
                        m.data(), &AllReady)
                     .stream)
        << threads;
  }
  // Split over pages not yet faulted in: AUTO parts, which ask their own pages.
  EXPECT_EQ(DecideHostSplit(kMeasured, n, 4, 0, 2, 32768, m.data()).stores, RELUGRAD_STORES_AUTO);
  for (int64_t i = 0; i < n * 4; i += 4096) m.data()[i] = 0;  // fault every page in
  for (int threads : {1, 2}) {
    EXPECT_TRUE(
        Decide(kMeasured, kGrad, n, 4, threads, RELUGRAD_STORES_AUTO, false, m.data(), &AllReady)
            .stream)
        << threads;
  }
  EXPECT_EQ(DecideHostSplit(kMeasured, n, 4, 0, 2, 32768, m.data()).stores,
            RELUGRAD_STORES_STREAMING);
  relugrad_host_split out;
  ASSERT_EQ(relugrad_cpu_host_split(RELUGRAD_F32, n, 0, 2, 32768, m.data(), &out), RELUGRAD_OK);
  EXPECT_EQ(out.stores,
            DecideHostSplit(LaunchPolicy::ForThisMachine(), n, 4, 0, 2, 32768, m.data()).stores);
}

// Whether each page of [p, p + pages * page) is resident, as 0/1 characters.
std::string ResidentPages(const char* p, int pages) {
  const long page = sysconf(_SC_PAGESIZE);
  std::string out;
  for (int i = 0; i < pages; ++i) {
    unsigned char resident = 0;
    if (mincore(const_cast<char*>(p) + i * page, 1, &resident) != 0) return "mincore failed";
    out += (resident & 1) ? '1' : '0';
  }
  return out;
}

// The pages prefaulted for a piece are the output's whole pages from the
// piece's first whole page to the page holding its end: never a page the
// output shares with memory before or after it, never the next piece's.
TEST(Prefault, FaultsInOnlyTheOutputsWholePagesOfThePiece) {
  const int64_t page = sysconf(_SC_PAGESIZE);
  FreshMapping m(10 * page);
  ASSERT_TRUE(m.ok());
  // The output starts 100 bytes before page 0 ends and ends 100 bytes into
  // page 8: pages 0 and 8 are shared with other memory, 1-7 are its own.
  char* const out = m.data() + page - 100;
  const int64_t total = 7 * page + 200;
  ASSERT_EQ(ResidentPages(m.data(), 10), "0000000000");
  PrefaultForWrite(out, total, 0, 2 * page);  // ends 100 bytes before page 2 ends
  const std::string first = ResidentPages(m.data(), 10);
  if (first == "0000000000") {
    GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14 on): nothing to check";
  }
  EXPECT_EQ(first, "0110000000");
  PrefaultForWrite(out, total, 2 * page, 3 * page);
  EXPECT_EQ(ResidentPages(m.data(), 10), "0111000000");
  PrefaultForWrite(out, total, 3 * page, total);  // the rest: page 8 is shared, left alone
  EXPECT_EQ(ResidentPages(m.data(), 10), "0111111100");
  PrefaultForWrite(out, total, 5, 5);  // empty piece
  PrefaultForWrite(nullptr, total, 0, total);
  for (int64_t i = 0; i < 10 * page; ++i) {
    ASSERT_EQ(m.data()[i], 0) << "prefaulting changed byte " << i;
  }
  const int saved = errno = 1234;
  PrefaultForWrite(out, total, 0, total);  // pages already resident
  EXPECT_EQ(errno, saved) << "the caller's errno is left alone";
}

// AUTO stores into a fresh output are cached and prefaulted piece by piece;
// a resident, aliased, streamed, hinted-CACHED or small output is not.
TEST(Prefault, DecidedForAutoStoresIntoPagesNotYetFaultedIn) {
  const int64_t n = 4 * kMiB;  // 16 MiB of f32: above every AUTO threshold of kMeasured
  FreshMapping m(n * 4);
  ASSERT_TRUE(m.ok());
  for (LaunchOp op : {kGrad, LaunchOp::kForwardMask, LaunchOp::kGradMask}) {
    for (int threads : {1, 2}) {
      const LaunchDecision d =
          Decide(kMeasured, op, n, 4, threads, RELUGRAD_STORES_AUTO, false, m.data(), &AllReady);
      EXPECT_TRUE(d.prefault && !d.stream) << threads;
      const LaunchDecision cached =
          Decide(kMeasured, op, n, 4, threads, RELUGRAD_STORES_CACHED, false, m.data(), &AllReady);
      EXPECT_FALSE(cached.prefault || cached.stream)
          << "a CACHED hint asks no page, threads " << threads;
      EXPECT_FALSE(Decide(kMeasured, op, n, 4, threads, RELUGRAD_STORES_STREAMING, false, m.data(),
                          &AllReady)
                       .prefault);
      EXPECT_FALSE(
          Decide(kMeasured, op, n, 4, threads, RELUGRAD_STORES_AUTO, true, m.data(), &AllReady)
              .prefault)
          << "an output that aliases an input has the input's pages";
      EXPECT_FALSE(
          Decide(kMeasured, op, kKiB, 4, threads, RELUGRAD_STORES_AUTO, false, m.data(), &AllReady)
              .prefault)
          << "below the threshold the pages are not asked";
    }
  }
  LaunchPolicy never = kMeasured;
  never.stream_bytes_one_block = never.stream_bytes_split = never.mask_stream_bytes = 0;
  EXPECT_FALSE(
      Decide(never, kGrad, n, 4, 2, RELUGRAD_STORES_AUTO, false, m.data(), &AllReady).prefault);
  // The torch-native library's parts over fresh pages: AUTO, each part asks
  // its own pages and is prefaulted (both halves of the output).
  const HostSplit h = DecideHostSplit(kMeasured, n, 4, 0, 2, 32768, m.data());
  ASSERT_EQ(h.stores, RELUGRAD_STORES_AUTO);
  for (int64_t part : {int64_t{0}, n / 2}) {
    const LaunchDecision d = Decide(kMeasured, kGrad, n / 2, 4, h.threads, h.stores, false,
                                    m.data() + part * 4, &AllReady);
    EXPECT_TRUE(d.prefault && !d.stream) << "part at " << part;
  }
  m.data()[n * 2] = 0;  // the middle page only
  const LaunchDecision mixed =
      Decide(kMeasured, kGrad, n, 4, 1, RELUGRAD_STORES_AUTO, false, m.data(), &AllReady);
  EXPECT_TRUE(mixed.prefault && !mixed.stream) << "AUTO asks the first and last pages too";
  for (int64_t i = 0; i < n * 4; i += 4096) m.data()[i] = 0;  // fault every page in
  for (relugrad_stores stores : {RELUGRAD_STORES_AUTO, RELUGRAD_STORES_CACHED}) {
    EXPECT_FALSE(Decide(kMeasured, kGrad, n, 4, 1, stores, false, m.data(), &AllReady).prefault)
        << stores;
  }
}

TEST(Prefault, PiecesFollowTheL2AndCoverTheRangeInOrder) {
  EXPECT_EQ(LaunchPolicy::FromMachine(512 * kKiB, 32 * kMiB, 2).prefault_piece_bytes, 128 * kKiB);
  EXPECT_EQ(LaunchPolicy::FromMachine(2 * kMiB, 480 * kMiB, 2).prefault_piece_bytes, 512 * kKiB);
  EXPECT_EQ(LaunchPolicy::FromMachine(16 * kKiB, 32 * kMiB, 2).prefault_piece_bytes, 16 * kKiB);
  std::string trace;
  RunPrefaulted(
      5, 30, 10,
      [&](int64_t b, int64_t e) { trace += "p" + std::to_string(b) + "-" + std::to_string(e); },
      [&](int64_t b, int64_t e) {
        trace += "k" + std::to_string(b) + "-" + std::to_string(e) + " ";
      });
  // 10 elements round down to 8: from a whole mask byte, pieces own whole mask bytes.
  EXPECT_EQ(trace, "p5-13k5-13 p13-21k13-21 p21-29k21-29 p29-30k29-30 ");
  trace.clear();
  RunPrefaulted(
      5, 30, 0,
      [&](int64_t b, int64_t e) { trace += "p" + std::to_string(b) + "-" + std::to_string(e); },
      [&](int64_t b, int64_t e) { trace += "k" + std::to_string(b) + "-" + std::to_string(e); });
  EXPECT_EQ(trace, "k5-30") << "no piece length: one piece, nothing prefaulted";
  LaunchDecision d;
  EXPECT_EQ(PrefaultPieceElems(kMeasured, d, 4), 0);
  d.prefault = true;
  EXPECT_EQ(PrefaultPieceElems(kMeasured, d, 4), 32 * kKiB);
  EXPECT_EQ(PrefaultPieceElems(kMeasured, d, 2), 64 * kKiB);
}

}  // namespace
}  // namespace relugrad
