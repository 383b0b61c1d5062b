// options.stores (relugrad.h): a performance hint that must never change a
// bit. Every configuration, dtype, length and misalignment gives the
// reference's bits under AUTO, CACHED and STREAMING, in place too; the mask
// path likewise; bad values are rejected and older structs get AUTO.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "cpu/launch.h"
#include "policy_calls.h"
#include "profile/profile.h"
#include "relugrad/relugrad.h"
#include "support/guarded.h"
#include "test_support.h"

namespace relugrad {
namespace testing {
namespace {

constexpr relugrad_stores kAllStores[] = {RELUGRAD_STORES_AUTO, RELUGRAD_STORES_CACHED,
                                          RELUGRAD_STORES_STREAMING};
// Lengths around vector and 64-byte-line edges, and past the 1 MiB AUTO
// threshold for f32 (300001 * 4 bytes).
constexpr size_t kLengths[] = {1, 7, 33, 64 + 5, 1000, 4096 + 3, 300001};

TEST(StoresHint, EveryHintGivesTheReferenceBits) {
  auto configs = AllConfigs();
  // The upper-bound gate's own loops (plain select, NaN-closed general, 16-bit alpha), three
  // of BoundedGateConfigs: relu_grad_kernel_test sweeps them all.
  for (const Config& c : BoundedGateConfigs()) {
    if (c.name == "torch_relu6" || c.name == "jax_hardtanh" ||
        c.name == "onednn_alpha0.25_hardtanh")
      configs.push_back(c);
  }
  for (const Config& config : configs) {
    for (relugrad_dtype dtype : kAllDtypes) {
      const size_t es = relugrad_dtype_size(dtype);
      for (size_t n : kLengths) {
        // The output starts `shift` elements past a 64-byte boundary, so
        // the streaming kernel's ragged head and tail are both exercised.
        const auto dy = Pack(dtype, RandomBits(dtype, n, 11 + n));
        const auto s = Pack(dtype, RandomBits(dtype, n, 29 + n));
        const auto want = Reference(dtype, dy, s, config.options);
        for (size_t shift : {size_t{0}, size_t{3}}) {
          for (relugrad_stores stores : kAllStores) {
            relugrad_options o = config.options;
            o.stores = stores;
            o.threads = 2;
            Guarded dx(n * es, shift * es, 0);
            ASSERT_EQ(relugrad_relu_grad(dtype, static_cast<int64_t>(n), dy.data(), s.data(),
                                         dx.data(), &o),
                      RELUGRAD_OK)
                << relugrad_last_error();
            const std::string diff =
                CompareBits(dtype, want.data(), dx.data(), n, dy.data(), s.data());
            ASSERT_EQ(diff + dx.CheckGuards(), "")
                << config.name << " " << relugrad_dtype_name(dtype) << " n=" << n
                << " shift=" << shift << " stores=" << stores;
            auto inplace = dy;  // dx = dy: never streamed, still exact
            ASSERT_EQ(relugrad_relu_grad(dtype, static_cast<int64_t>(n), inplace.data(), s.data(),
                                         inplace.data(), &o),
                      RELUGRAD_OK);
            ASSERT_EQ(CompareBits(dtype, want.data(), inplace.data(), n), "")
                << config.name << " in place, " << relugrad_dtype_name(dtype) << " n=" << n
                << " stores=" << stores;
          }
        }
      }
    }
  }
}

TEST(StoresHint, MaskPathGivesTheSameBitsUnderEveryHint) {
  for (relugrad_dtype dtype : kAllDtypes) {
    const size_t es = relugrad_dtype_size(dtype);
    for (size_t n : kLengths) {
      const auto x = Pack(dtype, RandomBits(dtype, n, 5 + n));
      const auto dy = Pack(dtype, RandomBits(dtype, n, 6 + n));
      const size_t mask_bytes = static_cast<size_t>(relugrad_mask_bytes(static_cast<int64_t>(n)));
      std::vector<unsigned char> y0(n * es), dx0(n * es);
      std::vector<uint8_t> mask0(mask_bytes);
      relugrad_options o;
      relugrad_options_init(&o, RELUGRAD_PRESET_TENSORFLOW);
      o.stores = RELUGRAD_STORES_CACHED;
      ASSERT_EQ(relugrad_relu_forward(dtype, static_cast<int64_t>(n), x.data(), y0.data(),
                                      mask0.data(), &o),
                RELUGRAD_OK);
      ASSERT_EQ(relugrad_relu_grad_mask(dtype, static_cast<int64_t>(n), dy.data(), mask0.data(),
                                        dx0.data(), &o),
                RELUGRAD_OK);
      // The mask path itself is checked against its reference in tests/mask;
      // here: the hint changes nothing.
      for (relugrad_stores stores : {RELUGRAD_STORES_AUTO, RELUGRAD_STORES_STREAMING}) {
        o.stores = stores;
        std::vector<unsigned char> y(n * es), dx(n * es);
        std::vector<uint8_t> mask(mask_bytes);
        ASSERT_EQ(relugrad_relu_forward(dtype, static_cast<int64_t>(n), x.data(), y.data(),
                                        mask.data(), &o),
                  RELUGRAD_OK);
        ASSERT_EQ(relugrad_relu_grad_mask(dtype, static_cast<int64_t>(n), dy.data(), mask.data(),
                                          dx.data(), &o),
                  RELUGRAD_OK);
        EXPECT_EQ(y, y0) << relugrad_dtype_name(dtype) << " n=" << n << " stores=" << stores;
        EXPECT_EQ(mask, mask0) << relugrad_dtype_name(dtype) << " n=" << n << " stores=" << stores;
        EXPECT_EQ(dx, dx0) << relugrad_dtype_name(dtype) << " n=" << n << " stores=" << stores;
      }
    }
  }
}

// An output in a fresh anonymous mapping (none of its pages faulted in, as
// a large allocation is), starting `head` bytes before its first page ends,
// with sentinel guards on both sides (which fault in only the two pages the
// output shares with them).
class FreshOutput {
 public:
  FreshOutput(size_t bytes, size_t head)
      : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))),
        size_((bytes + head) / page_ * page_ + 3 * page_),
        bytes_(bytes) {
    base_ = static_cast<unsigned char*>(
        mmap(nullptr, size_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (base_ == MAP_FAILED) return;
    p_ = base_ + page_ - head;
    std::memset(p_ - kGuardBytes, kSentinel, kGuardBytes);
    std::memset(p_ + bytes, kSentinel, kGuardBytes);
  }
  ~FreshOutput() {
    if (base_ != MAP_FAILED) munmap(base_, size_);
  }
  FreshOutput(const FreshOutput&) = delete;
  FreshOutput& operator=(const FreshOutput&) = delete;
  bool ok() const { return base_ != MAP_FAILED; }
  unsigned char* data() const { return p_; }
  std::string CheckGuards() const {
    return CheckSentinels(p_ - kGuardBytes, bytes_ + 2 * kGuardBytes, kGuardBytes, bytes_);
  }

 private:
  size_t page_, size_, bytes_;
  unsigned char* base_ = static_cast<unsigned char*>(MAP_FAILED);
  unsigned char* p_ = nullptr;
};

// Outputs not yet faulted in take cached stores with their pages faulted in
// piece by piece (LaunchDecision::prefault): the same bits, nothing written
// outside, for every op, dtype, thread count and output misalignment.
// Small thresholds and pieces put many pieces (and pool chunks) in a call.
TEST(StoresHint, PrefaultedFreshOutputsGiveTheReferenceBits) {
  LaunchPolicy policy = AlwaysSplitPolicy();
  policy.stream_bytes_one_block = policy.stream_bytes_split = policy.mask_stream_bytes = 64 << 10;
  policy.prefault_piece_bytes = 16 << 10;
  const size_t n = 50001;  // 100-400 KB of output, a ragged last piece
  for (relugrad_dtype dtype : kAllDtypes) {
    const size_t es = relugrad_dtype_size(dtype);
    const auto dy = Pack(dtype, RandomBits(dtype, n, 41));
    const auto s = Pack(dtype, RandomBits(dtype, n, 43));
    const size_t mask_bytes = static_cast<size_t>(relugrad_mask_bytes(static_cast<int64_t>(n)));
    for (relugrad_preset preset : {RELUGRAD_PRESET_TORCH, RELUGRAD_PRESET_TENSORFLOW}) {
      relugrad_options o;
      relugrad_options_init(&o, preset);
      const auto want = Reference(dtype, dy, s, o);
      std::vector<unsigned char> y_want(n * es), dx_mask_want(n * es);
      std::vector<uint8_t> mask_want(mask_bytes);
      o.threads = 1;
      o.stores = RELUGRAD_STORES_CACHED;
      ASSERT_EQ(relugrad_relu_forward(dtype, static_cast<int64_t>(n), s.data(), y_want.data(),
                                      mask_want.data(), &o),
                RELUGRAD_OK);
      ASSERT_EQ(relugrad_relu_grad_mask(dtype, static_cast<int64_t>(n), dy.data(), mask_want.data(),
                                        dx_mask_want.data(), &o),
                RELUGRAD_OK);
      for (int threads : {1, 2}) {
        for (size_t head_elems : {size_t{0}, size_t{3}}) {
          const std::string where = std::string(relugrad_dtype_name(dtype)) + " preset " +
                                    std::to_string(preset) + " threads " + std::to_string(threads) +
                                    " head " + std::to_string(head_elems);
          o.threads = threads;
          o.stores = RELUGRAD_STORES_AUTO;
          const size_t head = head_elems * es;
          FreshOutput dx(n * es, head), y(n * es, head), mask(mask_bytes, head_elems),
              dx_mask(n * es, head);
          ASSERT_TRUE(dx.ok() && y.ok() && mask.ok() && dx_mask.ok());
          ASSERT_TRUE(Decide(policy, LaunchOp::kReluGrad, static_cast<int64_t>(n),
                             static_cast<int>(es), threads, o.stores, false, dx.data(), nullptr)
                          .prefault)
              << where << ": the case must take the prefaulted path";
          ASSERT_EQ(ReluGradUnderPolicy(dtype, static_cast<int64_t>(n), dy.data(), s.data(),
                                        dx.data(), o, policy),
                    RELUGRAD_OK);
          EXPECT_EQ(
              CompareBits(dtype, want.data(), dx.data(), n, dy.data(), s.data()) + dx.CheckGuards(),
              "")
              << where;
          ASSERT_EQ(ReluForwardUnderPolicy(dtype, static_cast<int64_t>(n), s.data(), y.data(),
                                           mask.data(), o, policy),
                    RELUGRAD_OK);
          EXPECT_EQ(std::memcmp(y.data(), y_want.data(), n * es), 0) << where;
          EXPECT_EQ(std::memcmp(mask.data(), mask_want.data(), mask_bytes), 0) << where;
          EXPECT_EQ(y.CheckGuards() + mask.CheckGuards(), "") << where;
          ASSERT_EQ(ReluGradMaskUnderPolicy(dtype, static_cast<int64_t>(n), dy.data(),
                                            mask_want.data(), dx_mask.data(), o, policy),
                    RELUGRAD_OK);
          EXPECT_EQ(std::memcmp(dx_mask.data(), dx_mask_want.data(), n * es), 0) << where;
          EXPECT_EQ(dx_mask.CheckGuards(), "") << where;
        }
      }
    }
  }
}

TEST(StoresHint, InvalidValueIsRejectedAndOlderStructsGetAuto) {
  float a[4] = {1, -1, 2, -2}, b[4] = {1, 1, -1, -1}, c[4];
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  EXPECT_EQ(o.stores, RELUGRAD_STORES_AUTO);
  const int bad = 3;
  std::memcpy(&o.stores, &bad, sizeof(bad));
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, a, b, c, &o), RELUGRAD_INVALID_ARGUMENT);
  EXPECT_NE(std::string(relugrad_last_error()).find("options.stores 3"), std::string::npos)
      << relugrad_last_error();
  // A caller compiled before the field existed: its struct ends at `stream`;
  // the garbage after it must not be read.
  o.struct_size = offsetof(relugrad_options, stores);
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 4, a, b, c, &o), RELUGRAD_OK) << relugrad_last_error();
  EXPECT_EQ(c[0], 1.0f);
  EXPECT_EQ(c[1], -1.0f);
  EXPECT_EQ(c[2], 0.0f);
  EXPECT_EQ(c[3], 0.0f);
}

// The hint reaches the CPU backend: the profiler counts the calls that
// actually used streaming stores.
TEST(StoresHint, BackendStreamsExactlyWhenTheHintSays) {
  struct Case {
    relugrad_stores stores;
    size_t n;
    int threads;
    bool inplace;
    int streamed;
  };
  // AUTO: stream_bytes_one_block of dx on one thread, stream_bytes_split when
  // split (cpu/launch.h); the cases sit at those thresholds.
  const LaunchPolicy policy =
      AlwaysSplitPolicy();  // split calls split whether or not the workers slept
  const size_t one = static_cast<size_t>(policy.stream_bytes_one_block / 4);
  const size_t split = static_cast<size_t>(policy.stream_bytes_split / 4);
  ASSERT_LT(one, split) << "the cases need a size that streams alone but not split";
  const Case cases[] = {{RELUGRAD_STORES_AUTO, 1000, 1, false, 0},
                        {RELUGRAD_STORES_AUTO, one, 1, false, 1},
                        {RELUGRAD_STORES_AUTO, one - 16, 1, false, 0},
                        {RELUGRAD_STORES_AUTO, one, 2, false, 0},
                        {RELUGRAD_STORES_AUTO, split - 16, 2, false, 0},
                        {RELUGRAD_STORES_AUTO, split, 2, false, 1},
                        {RELUGRAD_STORES_STREAMING, 1000, 2, false, 1},
                        {RELUGRAD_STORES_CACHED, 1 << 21, 1, false, 0},
                        {RELUGRAD_STORES_STREAMING, 1000, 1, true, 0}};
  for (const Case& c : cases) {
    profile::ResetForTest();
    profile::SetModeForTest(profile::Mode::kSummary);
    std::vector<float> dy(c.n, 1.0f), s(c.n, 1.0f), dx(c.n);
    relugrad_options o;
    relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
    o.stores = c.stores;
    o.threads = c.threads;
    ASSERT_EQ(ReluGradUnderPolicy(RELUGRAD_F32, static_cast<int64_t>(c.n), dy.data(), s.data(),
                                  c.inplace ? dy.data() : dx.data(), o, policy),
              RELUGRAD_OK);
    const auto stats = profile::Snapshot();
    profile::SetModeForTest(profile::Mode::kOff);
    profile::ResetForTest();
    ASSERT_EQ(stats.size(), 1u);
    EXPECT_EQ(stats[0].streaming_calls, c.streamed)
        << "stores=" << c.stores << " n=" << c.n << " threads=" << c.threads
        << " inplace=" << c.inplace;
  }
}

TEST(StoresHint, DecisionTable) {
  constexpr int64_t kAuto = 1 << 20;
  EXPECT_FALSE(ChooseStores(RELUGRAD_STORES_AUTO, kAuto - 1, kAuto, false, nullptr).stream);
  EXPECT_TRUE(ChooseStores(RELUGRAD_STORES_AUTO, kAuto, kAuto, false, nullptr).stream);
  EXPECT_FALSE(
      ChooseStores(RELUGRAD_STORES_AUTO, kAuto, -1, false, nullptr).stream);  // benchmark "never"
  EXPECT_FALSE(ChooseStores(RELUGRAD_STORES_CACHED, 1LL << 40, kAuto, false, nullptr).stream);
  EXPECT_TRUE(ChooseStores(RELUGRAD_STORES_STREAMING, 4, kAuto, false, nullptr).stream);
  EXPECT_FALSE(ChooseStores(RELUGRAD_STORES_STREAMING, 1LL << 40, kAuto, true,
                            nullptr)
                   .stream);  // aliasing wins
  EXPECT_FALSE(ChooseStores(RELUGRAD_STORES_AUTO, 1LL << 40, kAuto, true, nullptr).stream);
}

}  // namespace
}  // namespace testing
}  // namespace relugrad
