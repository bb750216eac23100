// CPU speed of sum_method::exact (docs/PERFORMANCE.md, "Exact sum", CPU): fp64, 2^26 terms of each of the data
// sets (tests/support/exact_inputs.hpp), one thread and all cores, beside the canonical tree sum (one thread) in the
// same program; median of `reps` timings of one call, in ns per term; every exact result checked against the exact
// accumulator. Built with -DDETRED_BENCH_XSUM=1 and linked with an object that defines xsum_large_sum_of (built outside
// the repository from radfordneal/xsum, never committed), it times xsum's large superaccumulator too.
// Usage: bench_cpu_exact [reps] [log2 n]   (defaults 5, 26)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/reduce.hpp"
#include "tests/support/exact_inputs.hpp"

#if DETRED_BENCH_XSUM
extern "C" double xsum_large_sum_of(const double* x, std::size_t n);  // defined outside the repository
#endif

namespace {
template <class F>
double median_ns_per_term(int reps, std::size_t n, F call) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    const auto a = std::chrono::steady_clock::now();
    call();
    const auto b = std::chrono::steady_clock::now();
    t.push_back(std::chrono::duration<double, std::nano>(b - a).count() / double(n));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}
}  // namespace

int main(int argc, char** argv) {
  using namespace detred;
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  const std::size_t n = std::size_t{1} << (argc > 2 ? std::atoi(argv[2]) : 26);
  std::printf("fp64, n = %zu, median of %d, ns per term\n", n, reps);
  bool ok = true;
  for (test::exact_dataset d : test::all_exact_datasets) {
    const std::vector<double> x = test::exact_data<double>(d, n, 99);
    exact_accumulator<double> ref;
    ref.add(x.data(), x.size());
    const double expected = ref.rounded<double>();
    volatile double sink = 0;
    double got1 = 0, got_all = 0;
    const double tree = median_ns_per_term(reps, n, [&] { sink = sum(x.data(), n, sum_method::tree, cpu_options{1}); });
    const double one = median_ns_per_term(reps, n, [&] { got1 = sum(x.data(), n, sum_method::exact, cpu_options{1}); });
    const double all = median_ns_per_term(reps, n, [&] { got_all = sum(x.data(), n, sum_method::exact); });
    const bool same = bits_of(got1) == bits_of(expected) && bits_of(got_all) == bits_of(expected);
    ok = ok && same;
    std::printf("%-10s tree %.3f  exact(1 thread) %.3f  exact(all cores) %.3f  exact/tree speed %.2fx",
                test::name_of(d), tree, one, all, tree / one);
#if DETRED_BENCH_XSUM
    double gx = 0;
    const double xs = median_ns_per_term(reps, n, [&] { gx = xsum_large_sum_of(x.data(), n); });
    std::printf("  xsum large %.3f  exact/xsum speed %.2fx  xsum==exact %s", xs, xs / one,
                bits_of(gx) == bits_of(expected) ? "yes" : "NO");
#endif
    std::printf("  exact==ref %s\n", same ? "yes" : "NO");
    (void)sink;
  }
  return ok ? 0 : 1;
}
