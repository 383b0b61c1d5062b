// Which launch geometry the CUDA entry points use (launch_plan.h describes
// each), and its parsing from the environment. Plain C++ (no CUDA headers),
// so the host tests check it on any machine.
#ifndef RELUGRAD_CUDA_LAUNCH_CONFIG_H_
#define RELUGRAD_CUDA_LAUNCH_CONFIG_H_

#include <cstring>
#include <string>

#include "cuda/launch_plan.h"

namespace relugrad {
namespace cuda {

// The default is the one-shot geometry; the loop geometries stay selectable
// so that a GPU run can compare them (the device script's A/B).
struct LaunchConfig {
  Geometry geometry = Geometry::kOneShot;
  int unroll = 2;  // grid-stride only: vectors per thread per turn, 1 or 2
};

inline const char* GeometryName(Geometry g) {
  switch (g) {
    case Geometry::kOneShot:
      return "oneshot";
    case Geometry::kGridStride:
      return "gridstride";
    case Geometry::kPipelined:
      return "pipelined";
  }
  return "unknown";
}

// The end of a kernel's name for a geometry: its body (v16: 16-byte vectors;
// scalar: one element per access; x2: two vectors per turn) and its loop (_gs:
// grid-stride, _pipe: pipelined; none: one-shot). The relu_grad and mask
// launchers, the SASS check and the benchmarks all name kernels this way.
inline const char* GeometryKernelSuffix(Geometry g, bool vector, int unroll) {
  switch (g) {
    case Geometry::kOneShot:
      return vector ? "v16" : "scalar";
    case Geometry::kPipelined:
      return vector ? "v16_pipe" : "scalar_gs";
    case Geometry::kGridStride:
      break;
  }
  if (!vector) return "scalar_gs";
  return unroll == 2 ? "v16x2_gs" : "v16_gs";
}

// RELUGRAD_CUDA_GEOMETRY (oneshot | gridstride | pipelined; unset or empty:
// oneshot) and RELUGRAD_CUDA_UNROLL (1 | 2; unset or empty: 2). False, with
// *error naming the variable and what it accepts, for any other value: a
// mistyped A/B switch must not silently measure the default.
inline bool ParseLaunchConfig(const char* geometry, const char* unroll, LaunchConfig* config,
                              std::string* error) {
  LaunchConfig c;
  if (geometry != nullptr && geometry[0] != '\0') {
    if (std::strcmp(geometry, "oneshot") == 0) {
      c.geometry = Geometry::kOneShot;
    } else if (std::strcmp(geometry, "gridstride") == 0) {
      c.geometry = Geometry::kGridStride;
    } else if (std::strcmp(geometry, "pipelined") == 0) {
      c.geometry = Geometry::kPipelined;
    } else {
      *error = std::string("RELUGRAD_CUDA_GEOMETRY=") + geometry +
               ": expected oneshot, gridstride or pipelined";
      return false;
    }
  }
  if (unroll != nullptr && unroll[0] != '\0') {
    if (std::strcmp(unroll, "1") == 0) {
      c.unroll = 1;
    } else if (std::strcmp(unroll, "2") == 0) {
      c.unroll = 2;
    } else {
      *error = std::string("RELUGRAD_CUDA_UNROLL=") + unroll + ": expected 1 or 2";
      return false;
    }
  }
  *config = c;
  return true;
}

}  // namespace cuda
}  // namespace relugrad

#endif  // RELUGRAD_CUDA_LAUNCH_CONFIG_H_
