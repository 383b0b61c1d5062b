// A downstream project using only the installed headers and library.
#include <cstdio>
#include <vector>

#include "relugrad/relugrad.hpp"

int main() {
  std::vector<float> dy = {1, -2, 3, -4}, x = {1, -1, 0, 2}, dx(4);
  relugrad::relu_grad<float>(dy, x, dx);
  const bool ok = dx == std::vector<float>{1, 0, 0, -4};
  std::printf("relugrad %s via find_package: %s\n", relugrad_version(), ok ? "ok" : "WRONG");
  return ok ? 0 : 1;
}
