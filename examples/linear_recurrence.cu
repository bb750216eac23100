// The linear recurrence h[t] = a[t] h[t-1] + b[t] (h[-1] = 0), the recurrence behind scan-based sequence models, as
// a scan of affine maps m_t(h) = a[t] h + b[t]: h[t] = (m_t o ... o m_0)(0), the inclusive scan of the maps under
// "apply the left one first" (associative, not commutative). Computed three ways:
//   - a sequential loop (the textbook recurrence, n - 1 dependent steps);
//   - detred::inclusive_scan on the CPU (canonical order, parallel);
//   - detred::cuda::inclusive_scan on the GPU (canonical order, one pass).
// The CPU and GPU scans give the same bits (checked here, element by element); the sequential loop associates
// differently, so its bits differ in the last places (printed: the largest absolute difference).
//   linear_recurrence [n]        (default 10^6; needs a CUDA device for the GPU part)
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/scan.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/scan.hpp"

struct affine {  // h -> a h + b
  float a, b;
};
// first, then -> (then o first): covers the lower indices on the left, as every detred operator.
struct compose {
  __host__ __device__ affine operator()(const affine& first, const affine& then) const {
#ifdef __CUDA_ARCH__
    return {__fmul_rn(then.a, first.a), __fadd_rn(__fmul_rn(then.a, first.b), then.b)};  // no FMA: host bits
#else
    return {then.a * first.a, then.a * first.b + then.b};  // built with -ffp-contract=off
#endif
  }
};

int main(int argc, char** argv) {
  const std::size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1'000'000;
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<float> decay(0.9f, 1.0f), input(-1.0f, 1.0f);
  std::vector<affine> maps(n);
  for (auto& m : maps) m = {decay(rng), input(rng)};

  std::vector<float> loop(n);  // the recurrence as written
  float h = 0.0f;
  for (std::size_t t = 0; t < n; ++t) loop[t] = h = maps[t].a * h + maps[t].b;

  std::vector<affine> cpu(n);  // h[t] = (composed map)(0) = its b
  detred::inclusive_scan(maps.data(), cpu.data(), n, compose{});

  double worst = 0;  // |h| stays below 10 here (decay <= 1 in a window of ~10 steps)
  for (std::size_t t = 0; t < n; ++t) worst = std::fmax(worst, std::fabs(double(cpu[t].b) - loop[t]));
  std::printf("n = %zu: h[n-1] sequential loop %.9g, canonical scan %.9g; largest |difference| %.3g\n", n,
              double(loop[n - 1]), double(cpu[n - 1].b), worst);

  if (detred::cuda::device_count() == 0) {
    std::printf("no CUDA device: GPU part not run\n");
    return 0;
  }
  affine *d_maps = nullptr, *d_out = nullptr;
  void* workspace = nullptr;
  std::size_t bytes = 0;
  detred::cuda::inclusive_scan(nullptr, bytes, d_maps, d_out, n, compose{});  // size query: no work
  detred::cuda::check(cudaMalloc(&d_maps, n * sizeof(affine)), "cudaMalloc");
  detred::cuda::check(cudaMalloc(&d_out, n * sizeof(affine)), "cudaMalloc");
  detred::cuda::check(cudaMalloc(&workspace, bytes), "cudaMalloc");
  detred::cuda::check(cudaMemcpy(d_maps, maps.data(), n * sizeof(affine), cudaMemcpyHostToDevice), "cudaMemcpy");
  detred::cuda::inclusive_scan(workspace, bytes, d_maps, d_out, n, compose{});
  const std::vector<affine> gpu = detred::cuda::to_host(d_out, n);  // waits for the scan
  cudaFree(d_maps);
  cudaFree(d_out);
  cudaFree(workspace);
  const bool same = std::memcmp(gpu.data(), cpu.data(), n * sizeof(affine)) == 0;
  std::printf("GPU scan: h[n-1] %.9g; %s\n", double(gpu[n - 1].b),
              same ? "every h[t] has the CPU scan's bits" : "DIFFERS from the CPU scan");
  return same ? 0 : 1;
}
