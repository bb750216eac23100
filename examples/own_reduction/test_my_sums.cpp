// The installed property suites (detred::properties) against the user's own CPU reductions (my_sums.hpp).
#include <detred/properties/backend_properties.hpp>

#include "my_sums.hpp"

namespace {

struct threads_config {
  unsigned threads = 1;
};
void showValue(const threads_config& c, std::ostream& os) { os << "threads = " << c.threads; }
rc::Gen<threads_config> thread_counts() {
  return rc::gen::map(rc::gen::inRange(1u, 9u), [](unsigned t) { return threads_config{t}; });
}

// Promises the same bits for every thread count, and recursive summation's bound gamma_{n-1} S.
struct fixed_order {
  static constexpr const char* name = "fixed_order";
  using input = float;
  using accumulation = float;
  using config = threads_config;
  static rc::Gen<config> configs() { return thread_counts(); }
  static float sum(std::span<const float> x, const config& c) {
    return mine::fixed_order_sum(x.data(), x.size(), c.threads);
  }
  static constexpr detred::sum_method bound = detred::sum_method::sequential;
  static constexpr const char* plugin = "libmy_cpu_plugin.so";
};

// The same claims for the chunked sum: SameBitsAcrossConfigurations finds a counterexample (test_my_sums_broken).
struct chunked {
  static constexpr const char* name = "chunked";
  using input = float;
  using accumulation = float;
  using config = threads_config;
  static rc::Gen<config> configs() { return thread_counts(); }
  static float sum(std::span<const float> x, const config& c) {
    return mine::chunked_sum(x.data(), x.size(), c.threads);
  }
  static constexpr detred::sum_method bound = detred::sum_method::sequential;
  static constexpr const char* plugin = "libmy_cpu_plugin.so";
};

}  // namespace

namespace detred::test {
#ifdef MY_SUMS_BROKEN
INSTANTIATE_TYPED_TEST_SUITE_P(mine, BackendProperties, ::testing::Types<chunked>, user_backend_name);
#else
INSTANTIATE_TYPED_TEST_SUITE_P(mine, BackendProperties, ::testing::Types<fixed_order>, user_backend_name);
#endif
}  // namespace detred::test
