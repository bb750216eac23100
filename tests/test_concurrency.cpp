// Concurrent use of the CPU backend: 16 host threads calling sums, scans and reduces at once (sharing the one thread
// pool) must each get the single-threaded bits. Also run under ThreadSanitizer in CI (scripts/ci-checks.sh).
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

#include "detred/reduce.hpp"
#include "detred/scan.hpp"
#include "tests/support/reference.hpp"

namespace {
using namespace detred;
using test::bits;

TEST(Concurrency, SixteenHostThreadsGetTheSingleThreadedBits) {
  const std::size_t n = 6 * 65536 + 1234;  // six chunks: every call may use helpers
  const std::vector<float> xf = test::random_fixed_range<float>(n, 30, 11, true);
  const std::vector<double> xd = test::random_fixed_range<double>(n, 60, 12, true);
  auto op = [](double a, double b) { return a * 0.5 + b; };  // non-commutative
  const cpu_options one{.threads = 1};
  const float tree_f = sum(xf, sum_method::tree, one);
  const double neumaier_d = sum(xd, sum_method::tree_neumaier, one);
  const double tree_fd = sum<double>(xf, sum_method::tree, one);
  const double reduced = reduce(xd, 0.0, op, one);
  std::vector<float> scan_one(n);
  inclusive_sum_scan(xf.data(), scan_one.data(), n, one);

  std::atomic<int> mismatches{0};
  std::vector<std::thread> callers;
  for (unsigned t = 0; t < 16; ++t) {
    callers.emplace_back([&, t] {
      const cpu_options options{.threads = t % 4};  // the default, and 1, 2 and 3 threads
      std::vector<float> scan_out(n);
      for (int round = 0; round < 3; ++round) {
        if (bits(sum(xf, sum_method::tree, options)) != bits(tree_f)) ++mismatches;
        if (bits(sum(xd, sum_method::tree_neumaier, options)) != bits(neumaier_d)) ++mismatches;
        if (bits(sum<double>(xf, sum_method::tree, options)) != bits(tree_fd)) ++mismatches;
        if (bits(reduce(xd, 0.0, op, options)) != bits(reduced)) ++mismatches;
        inclusive_sum_scan(xf.data(), scan_out.data(), n, options);
        for (std::size_t i = 0; i < n; ++i)
          if (bits(scan_out[i]) != bits(scan_one[i])) {
            ++mismatches;
            break;
          }
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
