// The installed property suites against the user's CUDA sums (my_cuda_sums.hpp; needs a GPU, skips without one).
// fixed_order passes; atomic fails SameBitsAcrossRuns (and the signed-zero rule), with a shrunk counterexample saved
// for detred-audit.
#include <detred/properties/backend_properties.hpp>

#include "my_cuda_sums.hpp"
#include "my_sums.hpp"

namespace {

struct blocks_config {
  unsigned blocks = 1;
};
void showValue(const blocks_config& c, std::ostream& os) { os << "blocks = " << c.blocks; }
rc::Gen<blocks_config> block_counts() {
  return rc::gen::map(rc::gen::inRange(1u, 1025u), [](unsigned b) { return blocks_config{b}; });
}

struct gpu_backend {
  using input = float;
  using accumulation = float;
  using config = blocks_config;
  static rc::Gen<config> configs() { return block_counts(); }
  static bool available() { return mine::cuda::available(); }
  static std::string unavailable_reason() { return "no CUDA device: the GPU backends are skipped"; }
  static constexpr detred::sum_method bound = detred::sum_method::sequential;
};

struct cuda_atomic : gpu_backend {
  static constexpr const char* name = "cuda_atomic";
  static constexpr const char* plugin = "libmy_cuda_plugin.so";
  static float sum(std::span<const float> x, const config& c) {
    return mine::cuda::atomic_sum(x.data(), x.size(), c.blocks);
  }
};

struct cuda_fixed_order : gpu_backend {
  static constexpr const char* name = "cuda_fixed_order";
  static constexpr const char* plugin = "libmy_cuda_plugin.so";
  static float sum(std::span<const float> x, const config& c) {
    return mine::cuda::fixed_order_sum(x.data(), x.size(), c.blocks);
  }
  // The CPU implementation of the same order (my_sums.hpp): the GPU must give its bits.
  static float reference(std::span<const float> x) { return mine::fixed_order_sum(x.data(), x.size(), 1); }
};

}  // namespace

namespace detred::test {
using cuda_backends = ::testing::Types<cuda_fixed_order, cuda_atomic>;
INSTANTIATE_TYPED_TEST_SUITE_P(mine, BackendProperties, cuda_backends, user_backend_name);
}  // namespace detred::test
