// The GPU reduce family against its peers in one program run (docs/PERFORMANCE.md, "GPU reduce family"): product,
// min, max, argmin of fp32 against CUB DeviceReduce with the same operator; the generic reduce with plus<float>
// against CUB Sum; MSSP over int32 and the 2x2 int32 matrix product against the read ceiling; int32 min and argmin
// against CUB; dot of fp32 and of bf16 (fp32 accumulation) against CUB TransformReduce over the same bytes, cuBLAS dot
// beside when a libcublas can be loaded (DETRED_CUBLAS=/path/libcublas.so.N, else the default search path; skipped
// with a note otherwise).
//
// Timing (bench/support/bench_support.hpp): one call between two CUDA events, 2 untimed warm-up calls, the median of
// --reps (default 30) timings. --sweep adds the generic reduce under several launch shapes (reduce_options). Inputs:
// 1 GiB per input array (20x the H100's L2), workspaces sized by each call's size query and allocated once. Output:
// one line per row, GB/s of input bytes read, the ratio to the read ceiling and to the row's peer.
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <thrust/iterator/zip_iterator.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_reduce.cuh>

#include "bench/support/bench_support.hpp"
#include "detred/cuda/blas.hpp"
#include "detred/cuda/extrema.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/cuda/transform_reduce.cuh"
#include "examples/worked/operators.hpp"

namespace {
namespace dc = detred::cuda;
namespace ex = detred::examples;
namespace db = detred::bench;

constexpr std::size_t kBytes = db::one_gib;
int reps = 30;

// The reduce family's data, from a hash of the index: kind 0: fp32 values 1 + k 2^-23, k < 2^16 (a product of 2^28 of
// them stays finite); kind 1: pairs of bf16 in [0.5, 2); kind 2: int32 in [-1000, 1000] (MSSP, int32 extrema).
__global__ void fill_reduce_data(std::uint32_t* x, std::size_t words, std::uint32_t kind) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < words;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const std::uint32_t r = std::uint32_t(db::index_hash(i + 1, kind * 0x1234567ull) >> 32);
    if (kind == 0)
      x[i] = 0x3f800000u | (r & 0x0000ffffu);
    else if (kind == 1)
      x[i] = ((0x3f00u | (r & 0x7fu)) << 16) | (0x3f00u | ((r >> 8) & 0x7fu));
    else
      x[i] = std::uint32_t(int(r % 2001) - 1000);
  }
}
void fill(void* d_x, std::size_t bytes, std::uint32_t kind) {
  fill_reduce_data<<<4096, 256>>>(static_cast<std::uint32_t*>(d_x), bytes / 4, kind);
  db::check(cudaDeviceSynchronize(), "fill_reduce_data");
}

double median_ms(const std::function<void()>& call) { return db::single_call_seconds(call, reps) * 1e3; }

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

// One workspace for every detred call of the program: grown to the largest size query (before any timing).
struct shared_workspace {
  db::device_buffer<unsigned char> buffer;
  std::size_t bytes = 0;
  template <class Query>
  void fit(const Query& query) {
    std::size_t need = 0;
    query(need);
    bytes = std::max(bytes, need);
  }
  void allocate() { buffer = db::device_buffer<unsigned char>(bytes); }
  void* get() const { return buffer.get(); }
};

}  // namespace

int main(int argc, char** argv) {
  bool sweep = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--reps" && i + 1 < argc) reps = std::atoi(argv[++i]);
    if (std::string(argv[i]) == "--sweep") sweep = true;
  }
  cudaDeviceProp prop{};
  db::check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; 1 GiB per input; median of %d single-call timings\n", prop.name,
              prop.multiProcessorCount, reps);
  db::device_buffer<unsigned char> a(kBytes), b(kBytes), out(4096);
  const std::size_t cub_bytes = 64 << 20;
  db::device_buffer<unsigned char> cub_buffer(cub_bytes);
  void* cub_tmp = cub_buffer.get();
  std::size_t tb = cub_bytes;
  auto* xf = reinterpret_cast<float*>(a.get());
  auto* yf = reinterpret_cast<float*>(b.get());
  const float* cxf = xf;
  const float* cyf = yf;
  const std::size_t nf = kBytes / 4, nh = kBytes / 2;
  float* of = reinterpret_cast<float*>(out.get());
  auto* idx = reinterpret_cast<std::uint64_t*>(out.get() + 1024);
  auto* node = reinterpret_cast<ex::mssp_node*>(out.get() + 2048);
  auto* mat = reinterpret_cast<ex::mat2*>(out.get() + 2048);
  auto* oi = reinterpret_cast<std::int32_t*>(out.get() + 3072);
  const auto* xb = reinterpret_cast<const detred::bfloat16*>(a.get());
  const auto* yb = reinterpret_cast<const detred::bfloat16*>(b.get());
  const auto* xi = reinterpret_cast<const std::int32_t*>(a.get());
  const auto* xm = reinterpret_cast<const ex::mat2*>(a.get());

  // Every call's size query (a function of n and the types only), before any timing.
  shared_workspace ws;
  ws.fit([&](std::size_t& q) { dc::sum(nullptr, q, cxf, of, nf); });
  ws.fit([&](std::size_t& q) { dc::reduce(nullptr, q, cxf, of, nf, -0.0f, plus_f{}); });
  ws.fit([&](std::size_t& q) { dc::product(nullptr, q, cxf, of, nf); });
  ws.fit([&](std::size_t& q) { dc::argmin(nullptr, q, cxf, idx, nf); });
  ws.fit([&](std::size_t& q) { dc::dot(nullptr, q, cxf, cyf, of, nf); });
  ws.fit([&](std::size_t& q) { dc::dot<float>(nullptr, q, xb, yb, of, nh); });
  ws.fit([&](std::size_t& q) {
    dc::transform_reduce(nullptr, q, xi, node, nf, ex::mssp_node{}, ex::mssp_op{}, ex::mssp_leaf{});
  });
  ws.fit([&](std::size_t& q) { dc::argmin(nullptr, q, xi, idx, nf); });
  ws.fit([&](std::size_t& q) { dc::reduce(nullptr, q, xm, mat, kBytes / 16, ex::mat2_identity, ex::mat2_op{}); });
  ws.allocate();
  void* w = ws.get();
  std::size_t wb = ws.bytes;

  fill(a.get(), kBytes, 0);
  fill(b.get(), kBytes, 0);
  ceiling_gbs = kBytes / median_ms([&] { db::read_bytes(a.get(), kBytes, of + 512); }) / 1e6;
  row("read ceiling", kBytes, kBytes / ceiling_gbs / 1e6);

  // Sum-type rows (fp32): CUB Sum, detred::cuda::sum, the generic reduce with plus<float>.
  const double cub_sum = kBytes / median_ms([&] { cub::DeviceReduce::Sum(cub_tmp, tb, xf, of, nf); }) / 1e6;
  row("cub/sum/f32", kBytes, kBytes / cub_sum / 1e6);
  row("detred/dc::sum/f32", kBytes, median_ms([&] { dc::sum(w, wb, cxf, of, nf); }), cub_sum, "cub/sum");
  row("detred/reduce<plus<float>>", kBytes, median_ms([&] { dc::reduce(w, wb, cxf, of, nf, -0.0f, plus_f{}); }),
      cub_sum, "cub/sum");

  // --sweep: the generic reduce's launch shapes; the bits are the same for every one.
  if (sweep)
    for (int block : {128, 256})
      for (int tiles : {1, 2, 4, 8, 16}) {
        const std::string name = "sweep/reduce<plus<float>> b" + std::to_string(block) + " t" + std::to_string(tiles);
        const dc::reduce_options o{.block_threads = block, .tiles_per_chunk = tiles};
        row(name.c_str(), kBytes, median_ms([&] { dc::reduce(w, wb, cxf, of, nf, -0.0f, plus_f{}, nullptr, o); }),
            cub_sum, "cub/sum");
      }

  // Product, min, max, argmin.
  const double cub_prod =
      kBytes / median_ms([&] { cub::DeviceReduce::Reduce(cub_tmp, tb, xf, of, nf, mul_f{}, 1.0f); }) / 1e6;
  row("cub/reduce(multiplies)/f32", kBytes, kBytes / cub_prod / 1e6);
  row("detred/product/f32", kBytes, median_ms([&] { dc::product(w, wb, cxf, of, nf); }), cub_prod,
      "cub/reduce(multiplies)");
  const double cub_min = kBytes / median_ms([&] { cub::DeviceReduce::Min(cub_tmp, tb, xf, of, nf); }) / 1e6;
  row("cub/min/f32", kBytes, kBytes / cub_min / 1e6);
  row("detred/min/f32", kBytes, median_ms([&] { dc::min(w, wb, cxf, of, nf); }), cub_min, "cub/min");
  const double cub_max = kBytes / median_ms([&] { cub::DeviceReduce::Max(cub_tmp, tb, xf, of, nf); }) / 1e6;
  row("cub/max/f32", kBytes, kBytes / cub_max / 1e6);
  row("detred/max/f32", kBytes, median_ms([&] { dc::max(w, wb, cxf, of, nf); }), cub_max, "cub/max");
  auto* cub_idx = reinterpret_cast<std::int64_t*>(idx);
  const double cub_argmin =
      kBytes / median_ms([&] { cub::DeviceReduce::ArgMin(cub_tmp, tb, xf, of, cub_idx, std::int64_t(nf)); }) / 1e6;
  row("cub/argmin/f32", kBytes, kBytes / cub_argmin / 1e6);
  row("detred/argmin/f32", kBytes, median_ms([&] { dc::argmin(w, wb, cxf, idx, nf); }), cub_argmin, "cub/argmin");

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
    row("detred/dot/f32", 2 * kBytes, median_ms([&] { dc::dot(w, wb, cxf, cyf, of, nf); }), cub_dot,
        "cub/transform_reduce");
    if (have_blas)
      row("cublas/sdot/f32", 2 * kBytes, median_ms([&] {
            if (const int status = blas.sdot(blas.handle, int(nf), xf, 1, yf, 1, of))
              std::printf("cublasSdot: %d\n", status);
          }),
          cub_dot, "cub/transform_reduce");
  }
  fill(a.get(), kBytes, 1);
  fill(b.get(), kBytes, 1);
  {
    auto* zb = reinterpret_cast<__nv_bfloat16*>(a.get());
    auto* wb16 = reinterpret_cast<__nv_bfloat16*>(b.get());
    auto zip = thrust::make_zip_iterator(zb, wb16);
    const double cub_dot =
        2 * kBytes /
        median_ms([&] { cub::DeviceReduce::TransformReduce(cub_tmp, tb, zip, of, nh, plus_f{}, dot_bf16{}, 0.0f); }) /
        1e6;
    row("cub/transform_reduce(dot)/bf16", 2 * kBytes, 2 * kBytes / cub_dot / 1e6);
    row("detred/dot/bf16->f32", 2 * kBytes, median_ms([&] { dc::dot<float>(w, wb, xb, yb, of, nh); }), cub_dot,
        "cub/transform_reduce");
    if (have_blas)
      row("cublas/dotex/bf16(f32 exec)->bf16", 2 * kBytes, median_ms([&] {
            // cuBLAS supports bf16 x bf16 with fp32 execution only with a bf16 result (CUDA_R_16BF = 14).
            const int status = blas.dotex(blas.handle, int(nh), zb, 14, 1, wb16, 14, 1, of, 14, 0 /*CUDA_R_32F*/);
            if (status != 0) std::printf("cublasDotEx returned %d\n", status);
          }),
          cub_dot, "cub/transform_reduce");
  }
  if (!have_blas) std::printf("cublas: not found (set DETRED_CUBLAS to a libcublas.so); its rows are skipped\n");

  // The worked examples against the read ceiling (MSSP over int32, the 2x2 uint32 matrix product); int32 extrema
  // against CUB on the same int32 data.
  fill(a.get(), kBytes, 2);
  {
    row("detred/mssp/i32", kBytes,
        median_ms([&] { dc::transform_reduce(w, wb, xi, node, nf, ex::mssp_node{}, ex::mssp_op{}, ex::mssp_leaf{}); }));
    const double cub_min_i = kBytes / median_ms([&] { cub::DeviceReduce::Min(cub_tmp, tb, xi, oi, nf); }) / 1e6;
    row("cub/min/i32", kBytes, kBytes / cub_min_i / 1e6);
    row("detred/min/i32", kBytes, median_ms([&] { dc::min(w, wb, xi, oi, nf); }), cub_min_i, "cub/min");
    const double cub_argmin_i =
        kBytes / median_ms([&] { cub::DeviceReduce::ArgMin(cub_tmp, tb, xi, oi, cub_idx, std::int64_t(nf)); }) / 1e6;
    row("cub/argmin/i32", kBytes, kBytes / cub_argmin_i / 1e6);
    row("detred/argmin/i32", kBytes, median_ms([&] { dc::argmin(w, wb, xi, idx, nf); }), cub_argmin_i, "cub/argmin");
    row("detred/matrix2x2/u32", kBytes,
        median_ms([&] { dc::reduce(w, wb, xm, mat, kBytes / 16, ex::mat2_identity, ex::mat2_op{}); }));
  }
  db::check(cudaDeviceSynchronize(), "end");
  return 0;
}
