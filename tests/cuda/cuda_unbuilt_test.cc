// Built when the CUDA backend is not (RELUGRAD_CUDA=OFF or no nvcc): the
// backend says so, and a CUDA call fails with UNSUPPORTED and a message.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "relugrad/relugrad.h"

namespace {

TEST(CudaBackendTest, NotBuiltIsUnsupported) {
  EXPECT_EQ(relugrad_backend_available(RELUGRAD_BACKEND_CUDA), 0);
  relugrad_options o;
  relugrad_options_init(&o, RELUGRAD_PRESET_TORCH);
  o.backend = RELUGRAD_BACKEND_CUDA;
  float a[8] = {}, b[8] = {}, c[8];
  std::memset(c, 0x5a, sizeof(c));
  EXPECT_EQ(relugrad_relu_grad(RELUGRAD_F32, 8, a, b, c, &o), RELUGRAD_UNSUPPORTED);
  EXPECT_NE(std::string(relugrad_last_error()).find("CUDA backend is not built"), std::string::npos)
      << "message was: " << relugrad_last_error();
  for (size_t i = 0; i < sizeof(c); ++i) ASSERT_EQ(reinterpret_cast<unsigned char*>(c)[i], 0x5a);
  EXPECT_NE(std::string(relugrad_build_info()).find("backend_cuda: not built"), std::string::npos);
}

}  // namespace
