// The three worked examples of the generic reduce (operators.hpp), on the CPU (detred::reduce, transform_reduce) and
// on the GPU (detred::cuda::reduce, transform_reduce), each checked against its sequential reference:
//   1. maximum segment sum of an int32 array (against Kadane's algorithm);
//   2. the product of 2x2 int32 matrices in index order, mod 2^32 (against the left-to-right product);
//   3. the composition of affine maps x -> a x + b (uint32: against applying them left to right; float: CPU and GPU
//      give the same bits, the canonical order's rounding).
// Exit status 0 when every check holds. Without a GPU it runs the CPU half and says so.
#include <cstdio>
#include <random>
#include <vector>

#include "detred/blas.hpp"
#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/reduce.hpp"
#include "examples/worked/operators.hpp"

using namespace detred;
using namespace detred::examples;

namespace {
template <class T>
struct device_vector {
  T* ptr = nullptr;
  explicit device_vector(const std::vector<T>& h) {
    cuda::check(cudaMalloc(&ptr, h.size() * sizeof(T) + 16), "cudaMalloc");
    cuda::check(cudaMemcpy(ptr, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
  }
  ~device_vector() { cudaFree(ptr); }
};
struct as_is {
  template <class T>
  DETRED_HD T operator()(const T& v) const {
    return v;
  }
};

// transform_reduce on the device: the size query, a workspace of that size, the call, the result back to the host.
template <class Node, class X, class Map, class Op>
Node on_gpu(const std::vector<X>& x, Node identity, Op op, Map map) {
  device_vector<X> d(x);
  device_vector<Node> out(std::vector<Node>(1));
  std::size_t bytes = 0;
  cuda::transform_reduce(nullptr, bytes, d.ptr, out.ptr, x.size(), identity, op, map);
  void* ws = nullptr;
  cuda::check(cudaMalloc(&ws, bytes), "cudaMalloc");
  cuda::transform_reduce(ws, bytes, d.ptr, out.ptr, x.size(), identity, op, map);
  const Node r = cuda::to_host(out.ptr);
  cudaFree(ws);
  return r;
}
}  // namespace

int main() {
  const bool gpu = cuda::device_count() > 0;
  if (!gpu) std::printf("no CUDA device: the GPU half is skipped\n");
  int failures = 0;
  auto report = [&](const char* what, bool good) {
    std::printf("%-48s %s\n", what, good ? "ok" : "FAILED");
    failures += !good;
  };
  const std::size_t n = 3'000'017;
  std::mt19937 rng(2026);

  std::vector<std::int32_t> v(n);
  for (auto& e : v) e = std::int32_t(rng() % 2001) - 1000;
  const std::int64_t kadane = mssp_sequential(v.data(), n);
  const mssp_node cpu = detred::transform_reduce(v.data(), n, mssp_node{}, mssp_op{}, mssp_leaf{});
  std::printf("maximum segment sum of %zu int32: %lld (Kadane: %lld)\n", n, (long long)cpu.best, (long long)kadane);
  report("MSSP, CPU canonical == Kadane", cpu.best == kadane);
  if (gpu) report("MSSP, GPU == Kadane", on_gpu(v, mssp_node{}, mssp_op{}, mssp_leaf{}).best == kadane);

  std::vector<mat2> m(n);
  for (auto& e : m) e = {std::uint32_t(rng()), std::uint32_t(rng()), std::uint32_t(rng()), std::uint32_t(rng())};
  mat2 left_to_right = mat2_identity;
  for (const auto& e : m) left_to_right = mat2_op{}(left_to_right, e);
  report("2x2 matrix product, CPU == left to right", detred::reduce(m, mat2_identity, mat2_op{}) == left_to_right);
  if (gpu)
    report("2x2 matrix product, GPU == left to right", on_gpu(m, mat2_identity, mat2_op{}, as_is{}) == left_to_right);

  std::vector<affine<std::uint32_t>> fu(n);
  for (auto& e : fu) e = {std::uint32_t(rng()) | 1u, std::uint32_t(rng())};
  std::uint32_t h = 7;
  for (const auto& f : fu) h = f.a * h + f.b;
  const auto composed = detred::reduce(fu, affine<std::uint32_t>{1, 0}, affine_then<std::uint32_t>{});
  report("affine maps (uint32), CPU == left to right", composed.a * 7u + composed.b == h);
  if (gpu) {
    const auto g = on_gpu(fu, affine<std::uint32_t>{1, 0}, affine_then<std::uint32_t>{}, as_is{});
    report("affine maps (uint32), GPU == left to right", g.a * 7u + g.b == h);
  }
  std::vector<affine<float>> ff(n);
  std::uniform_real_distribution<float> da(0.99f, 1.0f), db(-1.0f, 1.0f);
  for (auto& e : ff) e = {da(rng), db(rng)};
  const auto cf = detred::reduce(ff, affine<float>{1, 0}, affine_then<float>{});
  std::printf("affine maps (float): h_n = %.9g h_0 + %.9g\n", cf.a, cf.b);
  if (gpu) {
    const auto g = on_gpu(ff, affine<float>{1, 0}, affine_then<float>{}, as_is{});
    report("affine maps (float), GPU bits == CPU bits", bits_of(g.a) == bits_of(cf.a) && bits_of(g.b) == bits_of(cf.b));
  }
  return failures == 0 ? 0 : 1;
}
