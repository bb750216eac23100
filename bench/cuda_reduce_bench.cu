// The GPU reduce family against its peers in one program run (docs/PERFORMANCE.md, "GPU reduce family"): product,
// min, max, argmin of fp32 against CUB DeviceReduce with the same operator; the generic reduce with plus<float>
// against CUB Sum; MSSP over int32 and the 2x2 int32 matrix product against the read ceiling; dot of fp32 and of
// bf16 (fp32 accumulation) against CUB TransformReduce over the same bytes, cuBLAS dot beside when a libcublas can be
// loaded (DETRED_CUBLAS=/path/libcublas.so.N, else the default search path; skipped with a note otherwise).
// Timing: CUDA events around one call, 2 untimed warm-up calls, the median of --reps (default 30) repetitions.
// --sweep adds the generic reduce under several launch shapes. --engine-sweep [rounds] times only the generic
// engine's variants (DETRED_GENERIC_ENGINE, include/detred/cuda/transform_reduce.cuh) for reduce<plus<float>>,
// product<f32> and dot<f32>, each round with CUB's peers timed beside, checks that every variant gives the default's
// bits, and prints each variant's median ratio over the rounds. Inputs: 1 GiB per input array (20x the H100's L2),
// workspaces preallocated. Output: one line per row, GB/s of input bytes read.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <thrust/iterator/zip_iterator.h>
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "detred/cuda/blas.hpp"
#include "detred/cuda/extrema.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "examples/worked/operators.hpp"

namespace {
namespace dc = detred::cuda;
namespace ex = detred::examples;

void ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

constexpr std::size_t kBytes = std::size_t{1} << 30;
int reps = 30;

__global__ void fill_bits(std::uint32_t* x, std::size_t words, std::uint32_t kind) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x) {
    std::uint64_t h = (i + 1 + kind * 0x1234567ull) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    const std::uint32_t r = std::uint32_t(h >> 32);
    if (kind ==
        0) {  // floats in [1, 2) * 2^(+-small): products stay finite over a few thousand factors... values near 1
      x[i] = 0x3f800000u | (r & 0x0000ffffu);  // 1 + tiny: a product of 2^28 of them stays finite
    } else if (kind == 1) {                    // bf16 pairs in [0.5, 2)
      x[i] = ((0x3f00u | (r & 0x7fu)) << 16) | (0x3f00u | ((r >> 8) & 0x7fu));
    } else {  // int32 in [-1000, 1000]
      x[i] = std::uint32_t(int(r % 2001) - 1000);
    }
  }
}

__global__ void read_only(const uint4* __restrict__ x, std::size_t n, unsigned* out) {
  unsigned acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const uint4 v = __ldg(x + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) *out = acc;
}

double median_ms(const std::function<void()>& call) {
  cudaEvent_t a, b;
  ok(cudaEventCreate(&a), "event");
  ok(cudaEventCreate(&b), "event");
  call();
  call();
  ok(cudaDeviceSynchronize(), "warm-up");
  std::vector<float> t;
  for (int r = 0; r < reps; ++r) {
    ok(cudaEventRecord(a), "record");
    call();
    ok(cudaEventRecord(b), "record");
    ok(cudaEventSynchronize(b), "sync");
    float ms = 0;
    ok(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms);
  }
  ok(cudaGetLastError(), "timed calls");
  std::sort(t.begin(), t.end());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return t[t.size() / 2];
}

double ceiling_gbs = 0;
void row(const char* name, std::size_t bytes, double ms, double peer_gbs = 0, const char* peer = nullptr) {
  const double gbs = bytes / ms / 1e6;
  std::printf("%-34s %8.4f ms %8.1f GB/s  %.3fx ceiling", name, ms, gbs, gbs / ceiling_gbs);
  if (peer) std::printf("  %.3fx %s", gbs / peer_gbs, peer);
  std::printf("\n");
  std::fflush(stdout);
}

struct mul_f {
  __device__ float operator()(float a, float b) const { return a * b; }
};
struct plus_f {
  __device__ float operator()(float a, float b) const { return a + b; }
};
struct identity_f {
  __device__ float operator()(float a) const { return a; }
};
struct dot_f32 {
  __device__ float operator()(const thrust::tuple<float, float>& t) const {
    return thrust::get<0>(t) * thrust::get<1>(t);
  }
};
struct dot_bf16 {
  __device__ float operator()(const thrust::tuple<__nv_bfloat16, __nv_bfloat16>& t) const {
    return __bfloat162float(thrust::get<0>(t)) * __bfloat162float(thrust::get<1>(t));
  }
};
struct as_is {
  template <class T>
  __device__ T operator()(const T& v) const {
    return v;
  }
};

// cuBLAS loaded at run time (never linked, never carried).
struct cublas_api {
  void* handle = nullptr;
  int (*sdot)(void*, int, const float*, int, const float*, int, float*) = nullptr;
  int (*dotex)(void*, int, const void*, int, int, const void*, int, int, void*, int, int) = nullptr;
  bool load() {
    std::vector<std::string> names;
    if (const char* p = std::getenv("DETRED_CUBLAS")) names.push_back(p);
    names.insert(names.end(), {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
    void* lib = nullptr;
    for (const auto& n : names)
      if ((lib = dlopen(n.c_str(), RTLD_NOW | RTLD_GLOBAL))) break;
    if (!lib) return false;
    auto create = reinterpret_cast<int (*)(void**)>(dlsym(lib, "cublasCreate_v2"));
    auto mode = reinterpret_cast<int (*)(void*, int)>(dlsym(lib, "cublasSetPointerMode_v2"));
    sdot = reinterpret_cast<decltype(sdot)>(dlsym(lib, "cublasSdot_v2"));
    dotex = reinterpret_cast<decltype(dotex)>(dlsym(lib, "cublasDotEx"));
    if (!create || !mode || !sdot || !dotex || create(&handle) != 0) return false;
    return mode(handle, 1) == 0;  // CUBLAS_POINTER_MODE_DEVICE: the result stays on the device, no sync per call
  }
};

std::uint32_t result_bits(const float* d) {
  std::uint32_t b = 0;
  ok(cudaMemcpy(&b, d, 4, cudaMemcpyDeviceToHost), "result");
  return b;
}

// The engine variants of issue 14, timed in one program (docs/PERFORMANCE.md). Returns the number of bit mismatches.
int engine_sweep(int rounds, float* xf, float* yf, std::size_t nf, float* of, void* ws, std::size_t ws_bytes,
                 void* cub_tmp, std::size_t tb) {
  const std::vector<std::string> variants{"",
                                          "batch=1",
                                          "prefold=1",
                                          "prefold=1,batch=1",
                                          "single=1",
                                          "single=1,batch=1",
                                          "single=1,prefold=1,batch=1",
                                          "ahead=3",
                                          "ahead=4",
                                          "ahead=3,prefold=1,batch=1",
                                          "ahead=4,prefold=1,batch=1",
                                          "minblocks=4",
                                          "minblocks=4,prefold=1,batch=1",
                                          "minblocks=3",
                                          "minblocks=3,prefold=1,batch=1",
                                          ""};  // the default again: drift within a round
  const char* ops[] = {"plus", "product", "dot"};
  std::map<std::string, std::vector<double>> ratio[3];
  std::uint32_t want[3] = {0, 0, 0};
  int mismatches = 0;
  for (int round = 0; round < rounds; ++round) {
    const double cub[3] = {
        kBytes / median_ms([&] { cub::DeviceReduce::Sum(cub_tmp, tb, xf, of, nf); }) / 1e6,
        kBytes / median_ms([&] { cub::DeviceReduce::Reduce(cub_tmp, tb, xf, of, nf, mul_f{}, 1.0f); }) / 1e6,
        2 * kBytes / median_ms([&] {
          cub::DeviceReduce::TransformReduce(cub_tmp, tb, thrust::make_zip_iterator(xf, yf), of, nf, plus_f{},
                                             dot_f32{}, 0.0f);
        }) / 1e6};
    std::printf(
        "engine-sweep round %d: cub sum %.1f GB/s, cub reduce(multiplies) %.1f, cub transform_reduce(dot) "
        "%.1f\n",
        round, cub[0], cub[1], cub[2]);
    for (const std::string& v : variants) {
      setenv("DETRED_GENERIC_ENGINE", v.c_str(), 1);
      const std::function<void()> calls[3] = {
          [&] { dc::reduce(static_cast<const float*>(xf), nf, of, -0.0f, plus_f{}, ws, ws_bytes); },
          [&] { dc::product(static_cast<const float*>(xf), nf, of, ws, ws_bytes); },
          [&] { dc::dot(static_cast<const float*>(xf), static_cast<const float*>(yf), nf, of, ws, ws_bytes); }};
      std::printf("  %-40s", ("engine='" + v + "'").c_str());
      for (int k = 0; k < 3; ++k) {
        const std::size_t bytes = k == 2 ? 2 * kBytes : kBytes;
        ok(cudaMemset(of, 0x5b, 4), "poison");
        const double gbs = bytes / median_ms(calls[k]) / 1e6;
        const std::uint32_t bits = result_bits(of);
        if (round == 0 && &v == &variants.front()) want[k] = bits;
        const bool same = bits == want[k];
        mismatches += !same;
        ratio[k][v].push_back(gbs / cub[k]);
        std::printf("  %s %7.1f GB/s %.3fx%s", ops[k], gbs, gbs / cub[k], same ? "" : " BITS DIFFER");
      }
      std::printf("\n");
      std::fflush(stdout);
    }
  }
  unsetenv("DETRED_GENERIC_ENGINE");
  std::printf(
      "engine-sweep summary: median over %d rounds of the ratio to CUB in the same round (plus: CUB Sum, "
      "product: CUB Reduce(multiplies), dot: CUB TransformReduce); bit mismatches: %d\n",
      rounds, mismatches);
  for (std::size_t i = 0; i + 1 < variants.size(); ++i) {  // the last is the default again, merged with the first
    const std::string& v = variants[i];
    std::printf("  %-40s", ("engine='" + v + "'").c_str());
    for (int k = 0; k < 3; ++k) {
      auto r = ratio[k][v];
      std::sort(r.begin(), r.end());
      std::printf("  %s %.3f [%.3f..%.3f]", ops[k], r[r.size() / 2], r.front(), r.back());
    }
    std::printf("\n");
  }
  return mismatches;
}

}  // namespace

int main(int argc, char** argv) {
  bool sweep = false;
  int engine_rounds = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::string(argv[i]) == "--sweep") sweep = true;
    if (std::string(argv[i]) == "--engine-sweep")
      engine_rounds = i + 1 < argc && std::atoi(argv[i + 1]) > 0 ? std::atoi(argv[++i]) : 3;
  }
  cudaDeviceProp prop{};
  ok(cudaGetDeviceProperties(&prop, 0), "props");
  std::printf("device: %s, %d SMs; 1 GiB per input; median of %d single-call timings\n", prop.name,
              prop.multiProcessorCount, reps);
  void *a = nullptr, *b = nullptr, *ws = nullptr, *out = nullptr, *cub_tmp = nullptr;
  ok(cudaMalloc(&a, kBytes), "malloc");
  ok(cudaMalloc(&b, kBytes), "malloc");
  ok(cudaMalloc(&out, 4096), "malloc");
  const std::size_t ws_bytes = std::max(dc::sum_workspace_bytes(kBytes),
                                        dc::transform_reduce_workspace_bytes<std::int32_t, ex::mssp_node>(kBytes / 4));
  ok(cudaMalloc(&ws, ws_bytes), "malloc");
  const std::size_t cub_bytes = 64 << 20;
  ok(cudaMalloc(&cub_tmp, cub_bytes), "malloc");
  auto* xf = static_cast<float*>(a);
  auto* yf = static_cast<float*>(b);
  const std::size_t nf = kBytes / 4;
  float* of = static_cast<float*>(out);
  std::size_t tb = cub_bytes;

  fill_bits<<<4096, 256>>>(static_cast<std::uint32_t*>(a), nf, 0);
  fill_bits<<<4096, 256>>>(static_cast<std::uint32_t*>(b), nf, 0);
  ok(cudaDeviceSynchronize(), "fill");

  auto* flag = static_cast<unsigned*>(out) + 512;
  ceiling_gbs = kBytes / median_ms([&] {
                  read_only<<<prop.multiProcessorCount * 8, 256>>>(static_cast<const uint4*>(a), kBytes / 16, flag);
                }) /
                1e6;
  row("read ceiling", kBytes, kBytes / ceiling_gbs / 1e6);
  if (engine_rounds > 0) {
    const int mismatches = engine_sweep(engine_rounds, xf, yf, nf, of, ws, ws_bytes, cub_tmp, tb);
    ok(cudaDeviceSynchronize(), "end");
    return mismatches == 0 ? 0 : 2;
  }

  // Sum-type rows (fp32): CUB Sum, detred::cuda::sum, the generic reduce with plus<float>.
  const double cub_sum = kBytes / median_ms([&] { cub::DeviceReduce::Sum(cub_tmp, tb, xf, of, nf); }) / 1e6;
  row("cub/sum/f32", kBytes, kBytes / cub_sum / 1e6);
  row("detred/dc::sum/f32", kBytes, median_ms([&] { dc::sum(xf, nf, of, ws, ws_bytes); }), cub_sum, "cub/sum");
  row("detred/reduce<plus<float>>", kBytes,
      median_ms([&] { dc::reduce(static_cast<const float*>(xf), nf, of, -0.0f, plus_f{}, ws, ws_bytes); }), cub_sum,
      "cub/sum");

  // --sweep: the generic reduce's launch shapes (tuning data, docs/PERFORMANCE.md); bits are the same for every one.
  if (sweep)
    for (int block : {128, 256})
      for (int tiles : {1, 2, 4, 8, 16}) {
        const std::string name = "sweep/reduce<plus<float>> b" + std::to_string(block) + " t" + std::to_string(tiles);
        const dc::launch_config c{block, 0, tiles};
        row(name.c_str(), kBytes, median_ms([&] {
              dc::reduce(static_cast<const float*>(xf), nf, of, -0.0f, plus_f{}, ws, ws_bytes, nullptr, c);
            }),
            cub_sum, "cub/sum");
      }

  // Product, min, max, argmin.
  const double cub_prod =
      kBytes / median_ms([&] { cub::DeviceReduce::Reduce(cub_tmp, tb, xf, of, nf, mul_f{}, 1.0f); }) / 1e6;
  row("cub/reduce(multiplies)/f32", kBytes, kBytes / cub_prod / 1e6);
  row("detred/product/f32", kBytes,
      median_ms([&] { dc::product(static_cast<const float*>(xf), nf, of, ws, ws_bytes); }), cub_prod,
      "cub/reduce(multiplies)");
  const double cub_min = kBytes / median_ms([&] { cub::DeviceReduce::Min(cub_tmp, tb, xf, of, nf); }) / 1e6;
  row("cub/min/f32", kBytes, kBytes / cub_min / 1e6);
  row("detred/min/f32", kBytes, median_ms([&] { dc::min(static_cast<const float*>(xf), nf, of, ws, ws_bytes); }),
      cub_min, "cub/min");
  const double cub_max = kBytes / median_ms([&] { cub::DeviceReduce::Max(cub_tmp, tb, xf, of, nf); }) / 1e6;
  row("cub/max/f32", kBytes, kBytes / cub_max / 1e6);
  row("detred/max/f32", kBytes, median_ms([&] { dc::max(static_cast<const float*>(xf), nf, of, ws, ws_bytes); }),
      cub_max, "cub/max");
  auto* idx = reinterpret_cast<std::int64_t*>(static_cast<char*>(out) + 1024);
  const double cub_argmin =
      kBytes / median_ms([&] { cub::DeviceReduce::ArgMin(cub_tmp, tb, xf, of, idx, std::int64_t(nf)); }) / 1e6;
  row("cub/argmin/f32", kBytes, kBytes / cub_argmin / 1e6);
  row("detred/argmin/f32", kBytes, median_ms([&] {
        dc::argmin(static_cast<const float*>(xf), nf, reinterpret_cast<std::uint64_t*>(idx), ws, ws_bytes);
      }),
      cub_argmin, "cub/argmin");

  // dot: fp32 (2 GiB read) and bf16 (2 GiB read, fp32 accumulation).
  cublas_api blas;
  const bool have_blas = blas.load();
  {
    auto zip = thrust::make_zip_iterator(xf, yf);
    const double cub_dot =
        2 * kBytes /
        median_ms([&] { cub::DeviceReduce::TransformReduce(cub_tmp, tb, zip, of, nf, plus_f{}, dot_f32{}, 0.0f); }) /
        1e6;
    row("cub/transform_reduce(dot)/f32", 2 * kBytes, 2 * kBytes / cub_dot / 1e6);
    row("detred/dot/f32", 2 * kBytes,
        median_ms([&] { dc::dot(static_cast<const float*>(xf), static_cast<const float*>(yf), nf, of, ws, ws_bytes); }),
        cub_dot, "cub/transform_reduce");
    if (have_blas)
      row("cublas/sdot/f32", 2 * kBytes, median_ms([&] {
            if (const int status = blas.sdot(blas.handle, int(nf), xf, 1, yf, 1, of))
              std::printf("cublasSdot: %d\n", status);
          }),
          cub_dot, "cub/transform_reduce");
  }
  fill_bits<<<4096, 256>>>(static_cast<std::uint32_t*>(a), nf, 1);
  fill_bits<<<4096, 256>>>(static_cast<std::uint32_t*>(b), nf, 1);
  ok(cudaDeviceSynchronize(), "fill");
  {
    const std::size_t nh = kBytes / 2;
    auto* xb = static_cast<__nv_bfloat16*>(a);
    auto* yb = static_cast<__nv_bfloat16*>(b);
    auto zip = thrust::make_zip_iterator(xb, yb);
    const double cub_dot =
        2 * kBytes /
        median_ms([&] { cub::DeviceReduce::TransformReduce(cub_tmp, tb, zip, of, nh, plus_f{}, dot_bf16{}, 0.0f); }) /
        1e6;
    row("cub/transform_reduce(dot)/bf16", 2 * kBytes, 2 * kBytes / cub_dot / 1e6);
    row("detred/dot/bf16->f32", 2 * kBytes, median_ms([&] {
          dc::dot<float>(static_cast<const detred::bfloat16*>(a), static_cast<const detred::bfloat16*>(b), nh, of, ws,
                         ws_bytes);
        }),
        cub_dot, "cub/transform_reduce");
    if (have_blas)
      row("cublas/dotex/bf16(f32 exec)->bf16", 2 * kBytes, median_ms([&] {
            // cuBLAS supports bf16 x bf16 with fp32 execution only with a bf16 result (CUDA_R_16BF = 14).
            const int status = blas.dotex(blas.handle, int(nh), xb, 14, 1, yb, 14, 1, of, 14, 0 /*CUDA_R_32F*/);
            if (status != 0) std::printf("cublasDotEx returned %d\n", status);
          }),
          cub_dot, "cub/transform_reduce");
  }
  if (!have_blas) std::printf("cublas: not found (set DETRED_CUBLAS to a libcublas.so); its rows are skipped\n");

  // The worked examples against the read ceiling: MSSP over int32, the 2x2 uint32 matrix product.
  fill_bits<<<4096, 256>>>(static_cast<std::uint32_t*>(a), nf, 2);
  ok(cudaDeviceSynchronize(), "fill");
  {
    auto* node = reinterpret_cast<ex::mssp_node*>(static_cast<char*>(out) + 2048);
    row("detred/mssp/i32", kBytes, median_ms([&] {
          dc::transform_reduce(static_cast<const std::int32_t*>(a), nf, node, ex::mssp_node{}, ex::mssp_leaf{},
                               ex::mssp_op{}, ws, ws_bytes);
        }));
    // int32 extrema (issue 14's integer inputs) against CUB on the same int32 data.
    const auto* xi = static_cast<const std::int32_t*>(a);
    auto* oi = reinterpret_cast<std::int32_t*>(static_cast<char*>(out) + 3072);
    const double cub_min_i = kBytes / median_ms([&] { cub::DeviceReduce::Min(cub_tmp, tb, xi, oi, nf); }) / 1e6;
    row("cub/min/i32", kBytes, kBytes / cub_min_i / 1e6);
    row("detred/min/i32", kBytes, median_ms([&] { dc::min(xi, nf, oi, ws, ws_bytes); }), cub_min_i, "cub/min");
    const double cub_argmin_i =
        kBytes / median_ms([&] { cub::DeviceReduce::ArgMin(cub_tmp, tb, xi, oi, idx, std::int64_t(nf)); }) / 1e6;
    row("cub/argmin/i32", kBytes, kBytes / cub_argmin_i / 1e6);
    row("detred/argmin/i32", kBytes,
        median_ms([&] { dc::argmin(xi, nf, reinterpret_cast<std::uint64_t*>(idx), ws, ws_bytes); }), cub_argmin_i,
        "cub/argmin");
    auto* m = reinterpret_cast<ex::mat2*>(static_cast<char*>(out) + 2048);
    row("detred/matrix2x2/u32", kBytes, median_ms([&] {
          dc::reduce(static_cast<const ex::mat2*>(a), kBytes / 16, m, ex::mat2_identity, ex::mat2_op{}, ws, ws_bytes);
        }));
  }
  ok(cudaDeviceSynchronize(), "end");
  return 0;
}
