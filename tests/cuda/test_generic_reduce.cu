// The generic device reduce and map-reduce (detred/cuda/transform_reduce.cuh): non-commutative operators of several
// element sizes (1, 4, 8, 12, 16 bytes) against left-to-right references and against the CPU's canonical reduce, bit
// for bit, over >= 20 launch shapes, sizes around every pass, tile and chunk boundary, and misaligned pointers;
// plus<float> against detred::sum (the same canonical tree). Label `gpu`: skips without a device.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "detred/blas.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "detred/reduce.hpp"
#include "examples/worked/operators.hpp"
#include "tests/support/device_reduce.hpp"
#include "tests/support/gpu_test.hpp"

namespace {
using namespace detred;
using examples::affine;

// Sizes around the boundaries of passes (32 * Items elements), tiles (16 KiB of input) and chunks (up to 16 tiles)
// for every element size here, plus seeded random ones.
std::vector<std::size_t> sizes_for(std::size_t element_bytes) {
  const std::size_t tile = 16384 / element_bytes;
  std::vector<std::size_t> sizes{0, 1, 2, 3, 31, 32, 33, 511, 513};
  for (std::size_t base : {tile / 8, tile, 2 * tile, 16 * tile, 17 * tile, 33 * tile})
    for (long d : {-1L, 0L, 1L}) sizes.push_back(base + d);
  std::mt19937_64 rng(element_bytes * 1000 + 14);
  for (int i = 0; i < 4; ++i) sizes.push_back(rng() % (40 * tile));
  if (test::gpu_test_quick()) std::erase_if(sizes, [&](std::size_t n) { return n > 2 * tile + 1; });
  return sizes;
}

// Runs transform_reduce on the device for every size, offset (0: the 16-byte vector path; 1: the element path) and
// launch shape, its workspace sized by its own size query; expect(x, gpu_result) checks each result.
template <class Node, class X, class Make, class Map, class Op, class Expect>
int for_every_launch(Make make, Node identity, Map map, Op op, Expect expect) {
  int checked = 0;
  const auto shapes = test::reduce_launch_options();
  test::reduce_runner run;
  for (std::size_t n : sizes_for(sizeof(X))) {
    const std::vector<X> x = make(n);
    for (std::size_t offset : {std::size_t{0}, std::size_t{1}}) {
      const test::device_input<X> in(x, offset);
      const X* d_in = in.data;
      for (const auto& c : shapes) {
        const Node gpu = run.run<Node>([&](void* ws, std::size_t& bytes, Node* out) {
          cuda::transform_reduce(ws, bytes, d_in, out, n, identity, op, map, nullptr, c);
        });
        if (!expect(x, gpu)) {
          ADD_FAILURE() << "n=" << n << " offset=" << offset << " block=" << c.block_threads
                        << " grid=" << c.grid_blocks << " tiles=" << c.tiles_per_chunk;
          return checked;
        }
        ++checked;
      }
    }
  }
  return checked;
}

struct as_is {
  template <class T>
  DETRED_HD T operator()(const T& v) const {
    return v;
  }
};

TEST(CudaGenericReduce, MaximumSegmentSumEqualsKadane) {
  DETRED_SKIP_WITHOUT_GPU();
  auto make = [](std::size_t n) {
    // Small values (mssp_leaf::run_root's int32 path), the full int32 range (its int64 path), or small values with
    // 1% full-range ones (both paths in one input).
    std::mt19937 rng(unsigned(n) + 5);
    std::vector<std::int32_t> x(n);
    for (auto& v : x) {
      const bool wide = n % 3 == 1 || (n % 3 == 2 && rng() % 100 == 0);
      v = wide ? std::int32_t(rng()) : std::int32_t(rng() % 2001) - 1000;
    }
    return x;
  };
  const int checked = for_every_launch<examples::mssp_node, std::int32_t>(
      make, examples::mssp_node{0, 0, 0, 0}, examples::mssp_leaf{}, examples::mssp_op{},
      [](const std::vector<std::int32_t>& x, const examples::mssp_node& gpu) {
        if (x.empty()) return gpu.best == 0;
        examples::mssp_node left = examples::mssp_leaf{}(x[0]);  // every field, by a left fold (exact integers)
        for (std::size_t i = 1; i < x.size(); ++i) left = examples::mssp_op{}(left, examples::mssp_leaf{}(x[i]));
        return gpu.best == examples::mssp_sequential(x.data(), x.size()) && gpu.sum == left.sum &&
               gpu.prefix == left.prefix && gpu.suffix == left.suffix && gpu.best == left.best;
      });
  EXPECT_GT(checked, 20);
}

TEST(CudaGenericReduce, MatrixProductEqualsLeftToRight) {
  DETRED_SKIP_WITHOUT_GPU();
  auto make = [](std::size_t n) {
    std::mt19937 rng(unsigned(n) + 6);
    std::vector<examples::mat2> x(n);
    for (auto& m : x) m = {std::uint32_t(rng()), std::uint32_t(rng()), std::uint32_t(rng()), std::uint32_t(rng())};
    return x;
  };
  const int checked = for_every_launch<examples::mat2, examples::mat2>(
      make, examples::mat2_identity, as_is{}, examples::mat2_op{},
      [](const std::vector<examples::mat2>& x, const examples::mat2& gpu) {
        examples::mat2 p = examples::mat2_identity;
        for (const auto& m : x) p = examples::mat2_op{}(p, m);
        return gpu == p;
      });
  EXPECT_GT(checked, 20);
}

TEST(CudaGenericReduce, AffineCompositionExactOverIntegersAndCanonicalOverFloats) {
  DETRED_SKIP_WITHOUT_GPU();
  using U = affine<std::uint32_t>;
  auto make_u = [](std::size_t n) {
    std::mt19937 rng(unsigned(n) + 7);
    std::vector<U> x(n);
    for (auto& f : x) f = {std::uint32_t(rng()), std::uint32_t(rng())};
    return x;
  };
  int checked = for_every_launch<U, U>(make_u, U{1, 0}, as_is{}, examples::affine_then<std::uint32_t>{},
                                       [](const std::vector<U>& x, const U& gpu) {
                                         std::uint32_t h = 12345, g = 12345;
                                         for (const auto& f : x) h = f.a * h + f.b;  // apply in index order
                                         g = gpu.a * g + gpu.b;
                                         return x.empty() ? (gpu.a == 1 && gpu.b == 0) : g == h;
                                       });
  using F = affine<float>;
  auto make_f = [](std::size_t n) {
    std::mt19937 rng(unsigned(n) + 8);
    std::uniform_real_distribution<float> a(0.9f, 1.0f), b(-1.0f, 1.0f);
    std::vector<F> x(n);
    for (auto& f : x) f = {a(rng), b(rng)};
    return x;
  };
  checked += for_every_launch<F, F>(make_f, F{1, 0}, as_is{}, examples::affine_then<float>{},
                                    [](const std::vector<F>& x, const F& gpu) {
                                      const F cpu = detred::reduce(x, F{1, 0}, examples::affine_then<float>{});
                                      return bits_of(cpu.a) == bits_of(gpu.a) && bits_of(cpu.b) == bits_of(gpu.b);
                                    });
  EXPECT_GT(checked, 40);
}

// A 12-byte node from 1-byte inputs: polynomial hashing of a byte string (concatenation: associative, not
// commutative), against the left-to-right hash.
struct hash_node {
  std::uint32_t h, p, len;
};
struct hash_leaf {
  DETRED_HD hash_node operator()(std::uint8_t c) const { return {std::uint32_t(c) + 1, 131u, 1u}; }
};
struct hash_concat {
  DETRED_HD hash_node operator()(const hash_node& l, const hash_node& r) const {
    return {l.h * r.p + r.h, l.p * r.p, l.len + r.len};
  }
};

TEST(CudaGenericReduce, ByteStringHashEqualsLeftToRight) {
  DETRED_SKIP_WITHOUT_GPU();
  auto make = [](std::size_t n) {
    std::mt19937 rng(unsigned(n) + 9);
    std::vector<std::uint8_t> x(n);
    for (auto& c : x) c = std::uint8_t(rng());
    return x;
  };
  const int checked =
      for_every_launch<hash_node, std::uint8_t>(make, hash_node{0, 1, 0}, hash_leaf{}, hash_concat{},
                                                [](const std::vector<std::uint8_t>& x, const hash_node& gpu) {
                                                  hash_node s{0, 1, 0};
                                                  for (std::uint8_t c : x) s = hash_concat{}(s, hash_leaf{}(c));
                                                  return gpu.h == s.h && gpu.p == s.p && gpu.len == s.len;
                                                });
  EXPECT_GT(checked, 20);
}

// Generic reduce with plus<float> is the canonical sum: detred::sum's bits.
struct plus_float {
  DETRED_HD float operator()(float a, float b) const { return a + b; }
};
TEST(CudaGenericReduce, PlusFloatEqualsCanonicalSum) {
  DETRED_SKIP_WITHOUT_GPU();
  auto make = [](std::size_t n) {
    std::mt19937_64 rng(n + 10);
    std::uniform_real_distribution<double> m(1.0, 2.0);
    std::vector<float> x(n);
    for (auto& v : x) v = float(std::ldexp(m(rng), int(rng() % 40) - 20) * ((rng() & 1) ? -1 : 1));
    return x;
  };
  const int checked = for_every_launch<float, float>(
      make, -0.0f, as_is{}, plus_float{},
      [](const std::vector<float>& x, float gpu) { return bits_of(gpu) == bits_of(detred::sum(x)); });
  EXPECT_GT(checked, 20);
}

// cuda::reduce: the same engine without a map; its size query, and its argument checks (host side, before any launch).
TEST(CudaGenericReduce, ReduceEntryPointAndArguments) {
  DETRED_SKIP_WITHOUT_GPU();
  std::vector<examples::mat2> x(1000, examples::mat2{1, 1, 0, 1});
  const test::device_input<examples::mat2> in(x, 0);
  const examples::mat2* d_in = in.data;
  const std::uint64_t n = x.size();
  test::reduce_runner run;
  const examples::mat2 gpu = run.run<examples::mat2>([&](void* ws, std::size_t& bytes, examples::mat2* out) {
    cuda::reduce(ws, bytes, d_in, out, n, examples::mat2_identity, examples::mat2_op{});
  });
  EXPECT_EQ(gpu, (examples::mat2{1, 1000, 0, 1}));
  std::size_t bytes = 0, again = 0;
  examples::mat2* null_out = nullptr;
  cuda::reduce(nullptr, bytes, d_in, null_out, n, examples::mat2_identity, examples::mat2_op{});
  cuda::transform_reduce(nullptr, again, d_in, null_out, n, examples::mat2_identity, examples::mat2_op{}, as_is{},
                         nullptr, {32, 5, 1});
  EXPECT_GT(bytes, 0u);
  EXPECT_EQ(bytes, again);
  void* ws = run.workspace(bytes + 256);
  auto* out = reinterpret_cast<examples::mat2*>(static_cast<unsigned char*>(ws) + bytes);
  std::size_t too_few = 64;
  EXPECT_THROW(cuda::reduce(ws, too_few, d_in, out, n, examples::mat2_identity, examples::mat2_op{}), invalid_argument);
  EXPECT_THROW(cuda::reduce(ws, bytes, d_in, out, n, examples::mat2_identity, examples::mat2_op{}, nullptr, {33, 0, 0}),
               invalid_argument);
  EXPECT_THROW(cuda::reduce(ws, bytes, d_in, null_out, n, examples::mat2_identity, examples::mat2_op{}),
               invalid_argument);
  EXPECT_THROW(cuda::reduce(ws, bytes, static_cast<const examples::mat2*>(nullptr), out, n, examples::mat2_identity,
                            examples::mat2_op{}),
               invalid_argument);
}

}  // namespace
