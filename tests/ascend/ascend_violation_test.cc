// Each hardware rule the twin enforces, broken on purpose by a small kernel
// (or a bad tiling fed to the real kernel), must raise its TwinViolation.
#include <cmath>
#include <cstring>
#include <functional>
#include <vector>

#include "ascend/twin_launch.h"
#include "ascend_test_util.h"
#include "gtest/gtest.h"
#include "kernel_operator.h"

namespace {

using namespace AscendC;
using ascend_twin::Violation;

constexpr int kElems = 4096;  // floats in each GM buffer
std::vector<float> g_in(kElems, 1.0f);
std::vector<float> g_out(kElems, 0.0f);

// Runs `fn` on `blocks` blocks; block b owns out[b*1024, (b+1)*1024) unless
// `shares` says otherwise. Returns the violation raised, failing if none.
Violation Expect(ascend_twin::KernelFn fn, int blocks = 1,
                 std::vector<std::pair<size_t, size_t>> shares = {}) {
  if (shares.empty()) {
    for (int b = 0; b < blocks; ++b) shares.emplace_back(b * 4096u, (b + 1) * 4096u);
  }
  ascend_twin::GmSpace gm;
  gm.AddInput(g_in.data(), g_in.size() * 4, "in");
  gm.AddOutput(g_out.data(), g_out.size() * 4, "out", shares);
  try {
    ascend_twin::Launch(fn, blocks, gm, reinterpret_cast<uint8_t*>(g_in.data()),
                        reinterpret_cast<uint8_t*>(g_in.data()),
                        reinterpret_cast<uint8_t*>(g_out.data()), nullptr, nullptr);
  } catch (const ascend_twin::TwinViolation& e) {
    std::printf("  caught: %s\n", e.what());
    return e.kind();
  }
  ADD_FAILURE() << "the kernel ran without a violation";
  return Violation::kBadArgument;
}

// A correct copy-through kernel: no false positives.
void GoodKernel(GM_ADDR in, GM_ADDR, GM_ADDR out, GM_ADDR, GM_ADDR) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qi;
  TQue<TPosition::VECOUT, 2> qo;
  pipe.InitBuffer(qi, 2, 1024);
  pipe.InitBuffer(qo, 2, 1024);
  GlobalTensor<float> gi, go;
  const int64_t b = GetBlockIdx();
  gi.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in) + b * 1024, 1024);
  go.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out) + b * 1024, 1024);
  for (int t = 0; t < 4; ++t) {
    LocalTensor<float> x = qi.AllocTensor<float>();
    if (t < 3) {
      DataCopy(x, gi[t * 256], 256);
    } else {
      DataCopyPad(x, gi[t * 256], DataCopyExtParams(1, 255 * 4, 0, 0, 0),
                  DataCopyPadExtParams<float>(true, 0, 1, 0.f));
    }
    qi.EnQue(x);
    LocalTensor<float> y = qi.DeQue<float>();
    LocalTensor<float> z = qo.AllocTensor<float>();
    Muls(z, y, 2.0f, 256);
    qo.EnQue(z);
    qi.FreeTensor(y);
    LocalTensor<float> w = qo.DeQue<float>();
    if (t < 3) {
      DataCopy(go[t * 256], w, 256);
    } else {
      DataCopyPad(go[t * 256], w, DataCopyExtParams(1, 255 * 4, 0, 0, 0));
    }
    qo.FreeTensor(w);
  }
}

TEST(AscendTwin, CorrectKernelPasses) {
  ascend_twin::GmSpace gm;
  gm.AddInput(g_in.data(), g_in.size() * 4, "in");
  gm.AddOutput(g_out.data(), g_out.size() * 4, "out",
               {{0, 4096}, {4096, 8192}, {8192, 12288}, {12288, 16384}});
  std::fill(g_out.begin(), g_out.end(), 0.0f);
  ASSERT_NO_THROW(ascend_twin::Launch(&GoodKernel, 4, gm, reinterpret_cast<uint8_t*>(g_in.data()),
                                      nullptr, reinterpret_cast<uint8_t*>(g_out.data()), nullptr,
                                      nullptr));
  EXPECT_EQ(g_out[0], 2.0f);
  EXPECT_EQ(g_out[1022], 2.0f);
  EXPECT_EQ(g_out[1023], 0.0f);  // the padded tail wrote 255 of 256
}

#define KERNEL(name) void name(GM_ADDR in, GM_ADDR, GM_ADDR out, GM_ADDR, GM_ADDR)
#define UNUSED_GM (void)in, (void)out

KERNEL(DeQueEmpty) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  q.DeQue<float>();
}
TEST(AscendTwin, DeQueOnEmptyQueue) { EXPECT_EQ(Expect(&DeQueEmpty), Violation::kQueueProtocol); }

KERNEL(AllocBeyond) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  q.AllocTensor<float>();
  q.AllocTensor<float>();
  q.AllocTensor<float>();
}
TEST(AscendTwin, AllocTensorBeyondBuffers) {
  EXPECT_EQ(Expect(&AllocBeyond), Violation::kQueueProtocol);
}

KERNEL(EnQueBeyondDepth) {
  TPipe pipe;
  TQue<TPosition::VECIN, 1> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>(), b = q.AllocTensor<float>();
  DataCopy(a, g, 64);
  DataCopy(b, g, 64);
  q.EnQue(a);
  q.EnQue(b);
}
TEST(AscendTwin, EnQueBeyondDepth) {
  EXPECT_EQ(Expect(&EnQueBeyondDepth), Violation::kQueueProtocol);
}

KERNEL(UseAfterFree) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  q.FreeTensor(a);
  DataCopy(a, g, 64);
}
TEST(AscendTwin, TensorUsedAfterFree) {
  EXPECT_EQ(Expect(&UseAfterFree), Violation::kUseAfterFree);
}

KERNEL(PositionMismatch) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qi;
  TQue<TPosition::VECOUT, 2> qo;
  pipe.InitBuffer(qi, 2, 1024);
  pipe.InitBuffer(qo, 2, 1024);
  LocalTensor<float> a = qi.AllocTensor<float>();
  qo.EnQue(a);
}
TEST(AscendTwin, EnQueOnAnotherQueuesPosition) {
  EXPECT_EQ(Expect(&PositionMismatch), Violation::kQueueProtocol);
}

KERNEL(CopyNot32) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, g, 7);  // 28 bytes: truncated to 0 on hardware
}
TEST(AscendTwin, DataCopyLengthNotMultipleOf32) {
  EXPECT_EQ(Expect(&CopyNot32), Violation::kCopyLength);
}

KERNEL(Misaligned) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, g, 256);
  q.EnQue(a);
  LocalTensor<int32_t> v = q.DeQue<float>().ReinterpretCast<int32_t>();
  Adds(v[3], v[3], 1, 64);  // 12 bytes in: not 32-byte aligned
}
TEST(AscendTwin, MisalignedUbOperand) { EXPECT_EQ(Expect(&Misaligned), Violation::kUbAlignment); }

KERNEL(OverLongRead) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(
      reinterpret_cast<__gm__ float*>(in));  // no size: only the launch buffers bound it
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, g[kElems - 64], 128);  // runs 64 floats past the input
}
TEST(AscendTwin, CopyPastTheGmBuffer) {
  EXPECT_EQ(Expect(&OverLongRead), Violation::kGmOutOfBounds);
}

KERNEL(OverLongUb) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 256);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, g, 128);  // 512 bytes into a 256-byte buffer
}
TEST(AscendTwin, CopyPastTheUbBuffer) { EXPECT_EQ(Expect(&OverLongUb), Violation::kUbOutOfRange); }

KERNEL(UbOverAllocation) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(q, 2, 64 * 1024);
  pipe.InitBuffer(b, 60 * 1024);  // 188 KiB > 184 KiB
}
TEST(AscendTwin, UnifiedBufferOverAllocation) {
  EXPECT_EQ(Expect(&UbOverAllocation), Violation::kUbOverAllocation);
}

KERNEL(ReadUnwritten) {
  UNUSED_GM;
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 1024);
  LocalTensor<int32_t> x = b.Get<int32_t>();
  Duplicate(x, 0, 128);  // writes the first 512 bytes
  Adds(x, x, 1, 256);    // reads 1024
}
TEST(AscendTwin, ReadOfNeverWrittenUb) {
  EXPECT_EQ(Expect(&ReadUnwritten), Violation::kUninitializedRead);
}

KERNEL(PadWithoutPadValue) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopyPad(a, g, DataCopyExtParams(1, 5 * 4, 0, 0, 0),
              DataCopyPadExtParams<float>(false, 0, 0, 0.f));
  q.EnQue(a);
  LocalTensor<int32_t> v = q.DeQue<float>().ReinterpretCast<int32_t>();
  Adds(v, v, 1, 8);  // lanes 5..7 were never written (isPad false)
}
TEST(AscendTwin, TailLanesWithoutPaddingAreUnwritten) {
  EXPECT_EQ(Expect(&PadWithoutPadValue), Violation::kUninitializedRead);
}

// Block 1 writes into block 0's slice.
KERNEL(OutsideShare) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECOUT, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), kElems);
  LocalTensor<float> a = q.AllocTensor<float>();
  Duplicate(a, 3.0f, 256);
  q.EnQue(a);
  LocalTensor<float> b = q.DeQue<float>();
  const int64_t at = GetBlockIdx() == 1 ? 512 : 0;  // 512 is inside block 0's [0, 1024)
  DataCopy(g[at + (GetBlockIdx() == 1 ? 0 : 0)], b, 256);
  q.FreeTensor(b);
}
TEST(AscendTwin, GmWriteOutsideTheBlocksShare) {
  EXPECT_EQ(Expect(&OutsideShare, 2), Violation::kGmOutsideShare);
}

// With overlapping shares (a bad plan), two blocks writing one byte collide.
KERNEL(Overlap) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECOUT, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), kElems);
  LocalTensor<float> a = q.AllocTensor<float>();
  Duplicate(a, 3.0f, 256);
  q.EnQue(a);
  LocalTensor<float> b = q.DeQue<float>();
  DataCopy(g[1024], b, 256);
  q.FreeTensor(b);
}
TEST(AscendTwin, CrossBlockOverlap) {
  EXPECT_EQ(Expect(&Overlap, 2, {{0, 8192}, {4096, 12288}}), Violation::kCrossBlockOverlap);
}

KERNEL(CompareCount) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  TBuf<TPosition::VECCALC> m;
  pipe.InitBuffer(q, 2, 1024);
  pipe.InitBuffer(m, 256);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, g, 256);
  q.EnQue(a);
  LocalTensor<float> b = q.DeQue<float>();
  Compares(m.Get<uint8_t>(), b, 0.0f, CMPMODE::GT, 32);  // 128 bytes: half a repeat
}
TEST(AscendTwin, CompareCountNotWholeRepeats) {
  EXPECT_EQ(Expect(&CompareCount), Violation::kCompareCount);
}

KERNEL(VectorReadsBeforeDeQue) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  (void)out;
  LocalTensor<float> a = q.AllocTensor<float>();
  DataCopy(a, g, 256);
  Muls(a, a, 2.0f, 256);  // no EnQue/DeQue: V races MTE2 on hardware
}
TEST(AscendTwin, VectorReadsCopyInWithoutQueue) {
  EXPECT_EQ(Expect(&VectorReadsBeforeDeQue), Violation::kPipeSync);
}

KERNEL(CopyOutBeforeDeQue) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECOUT, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  GlobalTensor<float> g;
  g.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), kElems);
  LocalTensor<float> a = q.AllocTensor<float>();
  Duplicate(a, 1.0f, 256);
  DataCopy(g, a, 256);  // MTE3 races V
}
TEST(AscendTwin, CopyOutWithoutQueue) {
  EXPECT_EQ(Expect(&CopyOutBeforeDeQue), Violation::kPipeSync);
}

KERNEL(NotFreed) {
  UNUSED_GM;
  TPipe pipe;
  TQue<TPosition::VECIN, 2> q;
  pipe.InitBuffer(q, 2, 1024);
  q.AllocTensor<float>();
}
TEST(AscendTwin, TensorNotFreedAtKernelEnd) {
  EXPECT_EQ(Expect(&NotFreed), Violation::kQueueProtocol);
}

KERNEL(IntOverflow) {
  UNUSED_GM;
  TPipe pipe;
  TBuf<TPosition::VECCALC> b;
  pipe.InitBuffer(b, 256);
  LocalTensor<int16_t> x = b.Get<int16_t>();
  Duplicate(x, static_cast<int16_t>(32767), 128);
  Adds(x, x, static_cast<int16_t>(1), 128);
}
TEST(AscendTwin, IntegerOverflowRefused) {
  EXPECT_EQ(Expect(&IntOverflow), Violation::kBadArgument);
}

// Compares + Select as modelled (IEEE: NaN compares false): the path the
// kernel avoids, kept correct because the twin offers it.
KERNEL(CompareSelect) {
  TPipe pipe;
  TQue<TPosition::VECIN, 2> qi;
  TQue<TPosition::VECOUT, 2> qo;
  TBuf<TPosition::VECCALC> m;
  pipe.InitBuffer(qi, 2, 1024);
  pipe.InitBuffer(qo, 2, 1024);
  pipe.InitBuffer(m, 256);
  GlobalTensor<float> gi, go;
  gi.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(in), kElems);
  go.SetGlobalBuffer(reinterpret_cast<__gm__ float*>(out), kElems);
  LocalTensor<float> a = qi.AllocTensor<float>();
  DataCopy(a, gi, 64);
  qi.EnQue(a);
  LocalTensor<float> b = qi.DeQue<float>();
  LocalTensor<float> o = qo.AllocTensor<float>();
  Compares(m.Get<uint8_t>(), b, 0.0f, CMPMODE::GT, 64);
  Select(o, m.Get<uint8_t>(), b, 0.0f, SELMODE::VSEL_TENSOR_SCALAR_MODE, 64);
  qo.EnQue(o);
  qi.FreeTensor(b);
  LocalTensor<float> w = qo.DeQue<float>();
  DataCopy(go, w, 64);
  qo.FreeTensor(w);
}
TEST(AscendTwin, CompareAndSelectFollowIeee) {
  std::vector<float> saved = g_in;
  g_in[0] = -1.0f;
  g_in[1] = std::nanf("");
  g_in[2] = 2.0f;
  g_in[3] = -0.0f;
  ascend_twin::GmSpace gm;
  gm.AddInput(g_in.data(), g_in.size() * 4, "in");
  gm.AddOutput(g_out.data(), g_out.size() * 4, "out", {{0, 4096}});
  ASSERT_NO_THROW(ascend_twin::Launch(&CompareSelect, 1, gm,
                                      reinterpret_cast<uint8_t*>(g_in.data()), nullptr,
                                      reinterpret_cast<uint8_t*>(g_out.data()), nullptr, nullptr));
  EXPECT_EQ(g_out[0], 0.0f);
  EXPECT_EQ(g_out[1], 0.0f);  // NaN > 0 is false
  EXPECT_EQ(g_out[2], 2.0f);
  EXPECT_FALSE(std::signbit(g_out[3]));  // -0 > 0 is false: the scalar +0
  g_in = saved;
}

// ---- The real kernel with seeded tiling bugs ----

struct RealRun {
  std::vector<float> dy, s, dx;
  ReluGradTilingData td;
  relugrad::WorkPlan plan;
};

RealRun Plan(int64_t n, int cores) {
  RealRun r;
  r.dy.assign(static_cast<size_t>(n), 1.0f);
  r.s.assign(static_cast<size_t>(n), 1.0f);
  r.dx.assign(static_cast<size_t>(n), 0.0f);
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  relugrad::Rules sem;
  const auto params = rg_ascend_test::ParamsFor(relugrad::Dtype::kF32, o, &sem);
  relugrad::ascend::TilingRequest req;
  req.n = n;
  req.cores = cores;
  req.grain_bytes = 0;
  req.dx_address = reinterpret_cast<uintptr_t>(r.dx.data());
  const char* why = "";
  EXPECT_TRUE(relugrad::ascend::MakeTiling(req, params, &r.td, &r.plan, &why));
  return r;
}

Violation RunReal(RealRun& r) {
  try {
    relugrad::ascend::LaunchWithTiling(&relu_grad, r.td, r.plan, r.dy.data(), r.s.data(),
                                       r.dx.data(), r.plan.blocks);
  } catch (const ascend_twin::TwinViolation& e) {
    std::printf("  caught: %s\n", e.what());
    return e.kind();
  }
  ADD_FAILURE() << "no violation";
  return Violation::kBadArgument;
}

TEST(AscendTwinRealKernel, TileTooLargeForTheUnifiedBuffer) {
  RealRun r = Plan(100000, 2);
  r.td.tileElems = 8192;  // 8 tile buffers x 32 KiB > 184 KiB
  EXPECT_EQ(RunReal(r), Violation::kUbOverAllocation);
}

TEST(AscendTwinRealKernel, BlockSplitDisagreesWithThePlan) {
  RealRun r = Plan(100000, 4);
  r.td.blockElems += 8;  // the kernel's blocks drift into their neighbours' shares
  EXPECT_EQ(RunReal(r), Violation::kGmOutsideShare);
}

TEST(AscendTwinRealKernel, WrongLengthReadsPastTheInput) {
  RealRun r = Plan(10000, 2);
  r.td.n += 64;  // the last block copies past the end of dy/s
  const Violation v = RunReal(r);
  EXPECT_TRUE(v == Violation::kGmOutOfBounds || v == Violation::kGmOutsideShare)
      << ascend_twin::ViolationName(v);
}

}  // namespace
