// The testers of the CPU block kernels. BlockKernelTester: a gate-from-s
// kernel (a variant row's body, cpu/variants.h) against the scalar
// reference, bit for bit: special-value cross products,
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

#include "core/rules.h"
#include "core/semantics.h"
#include "cpu/mask_kernels.h"
#include "cpu/relu_grad_kernels.h"
#include "relugrad/relugrad.h"

namespace relugrad {
namespace testing {

// Every length up to this is swept, each pointer at its own offset.
constexpr size_t kMaxSweepLength = 70;

// The builder settings of both testers (Tester: the tester deriving from it).
template <class Tester>
class KernelTesterSettings {
 public:
  Tester& dtype(relugrad_dtype d) {
    dtype_ = d;
    return self();
  }
  Tester& options(const relugrad_options& o) {
    options_ = o;
    return self();
  }
  // The kernel's streaming stores; those never run in place (the kernels' contract).
  Tester& streaming(bool s) {
    streaming_ = s;
    return self();
  }
  Tester& seed(uint64_t s) {
    seed_ = s;
    return self();
  }
  // Large lengths too (one of 64K + 13 elements).
  Tester& large(bool l) {
    large_ = l;
    return self();
  }

 protected:
  relugrad_dtype dtype_ = RELUGRAD_F32;
  relugrad_options options_{};
  bool streaming_ = false;
  bool large_ = true;
  uint64_t seed_ = 2024;

 private:
  Tester& self() { return static_cast<Tester&>(*this); }
};

class BlockKernelTester : public KernelTesterSettings<BlockKernelTester> {
 public:
  // Runs every sweep on `kernel` with the params the options resolve to for
  // the dtype (the caller has checked the kernel's row admits them).
  void Test(BlockKernel kernel, const std::string& name) const;

  // One placement: kernel on [begin, n) of copies of dy and s at the given
  // byte offsets, dx sentinel-filled; "" or what differs.
  std::string RunPlaced(BlockKernel kernel, const KernelParams& p,
                        const std::vector<unsigned char>& dy, const std::vector<unsigned char>& s,
                        size_t dy_off, size_t s_off, size_t dx_off, size_t begin) const;
};

// The forward-with-mask kernel's tester (a row's kernel of
// cpu/mask_forward_variants.inc, cpu/mask_kernels.h's ForwardKernel) against
// the mask reference, bit for bit, y and mask: the sweeps above, each of x,
// y and the mask at its own offset in guard bands, sub-ranges from a begin
// on a multiple of 8 (the kernels' contract: a block owns whole mask bytes;
// nothing before it is written), x left intact, and in place (y = x) for
// cached stores.
class MaskForwardKernelTester : public KernelTesterSettings<MaskForwardKernelTester> {
 public:
  void Test(ForwardKernel kernel, const std::string& name) const;

  // One placement: kernel on [begin, n) of a copy of x at x_off bytes, y
  // (or x itself when in_place) at y_off and the mask at mask_off, outputs
  // sentinel-filled; "" or what differs.
  std::string RunPlaced(ForwardKernel kernel, const KernelParams& p, const Rules& rules,
                        const std::vector<unsigned char>& x, size_t x_off, size_t y_off,
                        size_t mask_off, size_t begin, bool in_place) const;
};

// The backward-from-mask kernel's tester (a row's kernel of
// cpu/mask_variants.inc, cpu/mask_kernels.h's GradMaskKernel) against the
// mask reference, bit for bit: random and special dy under random masks,
// the forward tester's placements of dy, dx and the mask, sub-ranges from a
// begin on a multiple of 8, dy and the mask left intact, in place (dx = dy)
// for cached stores.
class MaskGradKernelTester : public KernelTesterSettings<MaskGradKernelTester> {
 public:
  void Test(GradMaskKernel kernel, const std::string& name) const;

  // One placement: kernel on [begin, n) of copies of dy at dy_off bytes and
  // of the mask at mask_off, dx (or dy itself when in_place) at dx_off,
  // sentinel-filled; "" or what differs.
  std::string RunPlaced(GradMaskKernel kernel, const KernelParams& p, const Rules& rules,
                        const std::vector<unsigned char>& dy,
                        const std::vector<unsigned char>& mask, size_t dy_off, size_t dx_off,
                        size_t mask_off, size_t begin, bool in_place) const;
};

// The params relu_grad would run with (ResolveOptions + MakeKernelParams).
KernelParams ParamsFor(relugrad_dtype dtype, const relugrad_options& options);
// The rules the options resolve to (for the references).
Rules RulesFor(const relugrad_options& options);

}  // namespace testing
}  // namespace relugrad

#endif  // RELUGRAD_TESTS_SUPPORT_BLOCK_KERNEL_TESTER_H_
