// cuda::sum's exact method refuses more than 2^42 terms (docs/EXACT.md, "Limits on the GPU": 4096 blocks of at most
// 2^30 terms) with invalid_argument, before any CUDA call, so this runs without a GPU (label cpu). The pointers are
// never dereferenced: the refusal comes first.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/errors.hpp"

namespace {
using namespace detred;

// A call with 16-byte aligned stand-in pointers and the workspace the size query asks for.
void exact_sum_of_count(std::uint64_t n) {
  auto* in = reinterpret_cast<const float*>(std::uintptr_t{1} << 20);
  auto* out = reinterpret_cast<float*>(std::uintptr_t{2} << 20);
  void* workspace = reinterpret_cast<void*>(std::uintptr_t{3} << 20);
  const cuda::sum_options options{.method = sum_method::exact};
  std::size_t bytes = 0;
  cuda::sum<float>(nullptr, bytes, in, out, n, nullptr, options);
  cuda::sum<float>(workspace, bytes, in, out, n, nullptr, options);
}

TEST(CudaExactLimits, MoreThanTwoToThe42TermsAreRefused) {
  const std::uint64_t limit = std::uint64_t{1} << 42;
  try {
    exact_sum_of_count(limit + 1);
    FAIL() << "2^42 + 1 terms were not refused";
  } catch (const detred::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("2^42"), std::string::npos) << e.what();
  }
  // Exactly 2^42 passes the check: without a GPU the call then fails at its first CUDA call (cuda_error), which
  // shows the limit is not one term too low. On a GPU machine that call would launch on the stand-in pointers, so
  // this half runs only where no device is visible.
  if (cuda::device_count() == 0) {
    EXPECT_THROW(exact_sum_of_count(limit), cuda::cuda_error);
  }
}

}  // namespace
