// The one tester of a CPU block kernel (a variant row's body, cpu/variants.h)
// against the scalar reference, bit for bit: special-value cross products,
// every length 0..kMaxSweepLength and large ones, each pointer misaligned
// within a line, sub-ranges [begin, end) of the arrays (nothing outside is
// written), sentinel-filled outputs in guard bands, and in place on dy and on
// s for kernels with cached stores. Builder style (XNNPACK's testers): set
// what differs from the defaults, then Test(), which reports through
// GoogleTest and names the case, seed and placement of the first failure.
#ifndef RELUGRAD_TESTS_SUPPORT_BLOCK_KERNEL_TESTER_H_
#define RELUGRAD_TESTS_SUPPORT_BLOCK_KERNEL_TESTER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/semantics.h"
#include "cpu/cpu_kernels.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace testing {

class BlockKernelTester {
 public:
  static constexpr size_t kMaxSweepLength = 70;

  BlockKernelTester& dtype(relugrad_dtype d) {
    dtype_ = d;
    return *this;
  }
  BlockKernelTester& options(const relugrad_options& o) {
    options_ = o;
    return *this;
  }
  // Streaming-store kernels must not run in place (the kernels' contract).
  BlockKernelTester& streaming(bool s) {
    streaming_ = s;
    return *this;
  }
  BlockKernelTester& seed(uint64_t s) {
    seed_ = s;
    return *this;
  }
  // Large lengths too (one of 64K + 13 elements).
  BlockKernelTester& large(bool l) {
    large_ = l;
    return *this;
  }

  // Runs every sweep on `kernel` with the params the options resolve to for
  // the dtype (the caller has checked the kernel's row admits them).
  void Test(BlockKernel kernel, const std::string& name) const;

  // One placement: kernel on [begin, n) of copies of dy and s at the given
  // byte offsets, dx sentinel-filled; "" or what differs.
  std::string RunPlaced(BlockKernel kernel, const KernelParams& p,
                        const std::vector<unsigned char>& dy, const std::vector<unsigned char>& s,
                        size_t dy_off, size_t s_off, size_t dx_off, size_t begin) const;

 private:
  relugrad_dtype dtype_ = RELUGRAD_F32;
  relugrad_options options_{};
  bool streaming_ = false;
  bool large_ = true;
  uint64_t seed_ = 2024;
};

// The params relu_grad would run with (ResolveOptions + MakeKernelParams).
KernelParams ParamsFor(relugrad_dtype dtype, const relugrad_options& options);

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_SUPPORT_BLOCK_KERNEL_TESTER_H_
