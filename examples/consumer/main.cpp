// The smallest useful detred program: a sum whose bits do not depend on the thread count.
#include <cstdio>
#include <vector>

#include <detred/detred.hpp>

int main() {
  std::vector<float> x(1 << 20);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = (i % 2 ? -1.0f : 1.0f) / float(1 + i % 1000);
  const float one_thread = detred::sum(x, detred::sum_method::tree, {.threads = 1});
  const float four_threads = detred::sum(x, detred::sum_method::tree, {.threads = 4});
  const double wide = detred::sum<double>(x, detred::sum_method::tree_neumaier);
  std::printf("tree sum: %a (1 thread) %a (4 threads); in double with Neumaier merges: %.17g\n", one_thread,
              four_threads, wide);
  return detred::bits_of(one_thread) == detred::bits_of(four_threads) ? 0 : 1;
}
