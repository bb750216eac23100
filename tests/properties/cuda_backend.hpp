// The CUDA backend for the property suites (see backend.hpp): detred::cuda::sum (through test::sum_host_data) with a
// random launch shape and a random element offset of the device buffer (0..7: unaligned inputs take the scalar path).
// Only the canonical methods (tree, tree_neumaier) exist on the GPU.
#pragma once

#include <rapidcheck.h>

#include <cstddef>
#include <ostream>
#include <span>
#include <string>

#include "detred/cuda/device.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/sum_method.hpp"
#include "tests/support/device_sum.hpp"

namespace detred::test {

struct cuda_backend {
  static constexpr const char* name = "cuda";
  static bool available() { return cuda::device_count() > 0; }
  static std::string unavailable_reason() { return "no CUDA device on this machine: GPU test not run"; }
  static bool supports(sum_method method) {
    return method == sum_method::tree || method == sum_method::tree_neumaier || method == sum_method::exact;
  }

  struct config {
    cuda::sum_options launch;  // method tree; the call sets the method under test
    std::size_t offset = 0;
  };
  // Each field 0 ("choose") or a forced value: block_threads a multiple of 32 up to 256, grid_blocks 1..300,
  // tiles_per_chunk 1..16 (powers of two); offset 0..7 elements past a 256-byte boundary.
  static rc::Gen<config> configs() {
    namespace gen = rc::gen;
    return gen::apply(
        [](int block_threads, int grid_blocks, int tiles_per_chunk, std::size_t offset) {
          return config{
              {.block_threads = block_threads, .grid_blocks = grid_blocks, .tiles_per_chunk = tiles_per_chunk}, offset};
        },
        gen::oneOf(gen::just(0), gen::map(gen::inRange(1, 9), [](int k) { return 32 * k; })),
        gen::oneOf(gen::just(0), gen::inRange(1, 301)), gen::element(0, 1, 2, 4, 8, 16),
        gen::inRange<std::size_t>(0, 8));
  }

  template <class A, class T>
  static A sum(std::span<const T> x, sum_method method, const config& c) {
    cuda::sum_options options = c.launch;
    options.method = method;
    return test::sum_host_data<A>(x, options, c.offset);
  }
};

inline void showValue(const cuda_backend::config& c, std::ostream& os) {
  os << "sum_options{.block_threads = " << c.launch.block_threads << ", .grid_blocks = " << c.launch.grid_blocks
     << ", .tiles_per_chunk = " << c.launch.tiles_per_chunk << "}, offset " << c.offset;
}

}  // namespace detred::test
