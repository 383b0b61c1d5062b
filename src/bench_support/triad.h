// The STREAM-style triad a[i] = b[i] + q * c[i] (2 reads + 1 write, f32),
// the in-process roofline every ReluGrad measurement is divided by. A
// benchmark utility, not library surface: it is linked into the CLI and the
// benchmarks (relugrad_bench_support), never into the installed library, and
// runs on the library's own worker pool so both are split the same way.
#ifndef RELUGRAD_BENCH_SUPPORT_TRIAD_H_
#define RELUGRAD_BENCH_SUPPORT_TRIAD_H_

#include <cstdint>

namespace relugrad {

// n floats per array; streaming = non-temporal stores for whole aligned
// vectors. threads as in the library (0 = all cores), split with the same
// WorkPlan and pool as ReluGrad.
void Triad(float* a, const float* b, const float* c, float q, int64_t n, bool streaming,
           int threads);

}  // namespace relugrad

#endif  // RELUGRAD_BENCH_SUPPORT_TRIAD_H_
