// GPU benchmark of detred's batch-invariant row and column reductions and norms against peers in the same program:
// cub::DeviceSegmentedReduce::Sum (two-phase call, workspace preallocated) for row sums, the read ceiling for column
// sums, the copy ceiling (read + write of the same bytes) for the norms, and the course's GPT-2 kernels (one thread per
// row; the two-stage block kernel) beside detred's. Data and timing from bench/support/bench_support.hpp: uniform
// [-1, 1) data, one call between two CUDA events after two untimed warm-ups, median of `reps` (30); GB/s = bytes that
// must move / time. Usage: bench_rows [reps].
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_segmented_reduce.cuh>
#include <functional>
#include <utility>

#include "bench/support/bench_support.hpp"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/types/bfloat16.hpp"

namespace {
using detred::cuda::check;
namespace bench = detred::bench;
int reps = 30;

// Milliseconds of one call (median of `reps`, bench_support's single-call timing).
double median_ms(const std::function<void()>& f) { return bench::single_call_seconds(f, reps) * 1e3; }

__global__ void offsets_kernel(int* o, int rows, int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= rows) o[i] = i * cols;
}

void report(const char* what, double bytes, double ms, double peer_gbs, const char* peer) {
  const double gbs = bytes / ms / 1e6;
  std::printf("%-58s %9.4f ms %8.1f GB/s  %.3fx %s\n", what, ms, gbs, peer_gbs > 0 ? gbs / peer_gbs : 0.0, peer);
}

// A workspace for the calls that need none (the size query answers 0; the pointer must not be null to run).
void* no_workspace() {
  static bench::device_buffer<unsigned char> byte(1);
  return byte.get();
}
std::size_t zero_bytes = 0;

// The course's kernels (GPT-2 layernorm_forward / softmax_forward), written for this comparison from their
// description: the naive one thread per row, and the two-stage warp reduction (a block per row: warp shuffles, warp
// results through shared memory, one warp finishes). Neither is deterministic across block sizes or batch-invariant
// by contract; they are the speed reference.
__global__ void layernorm_naive(const float* x, const float* w, const float* b, float* out, float* mean, float* rstd,
                                int rows, int c) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= rows) return;
  const float* row = x + std::size_t(t) * c;
  float m = 0;
  for (int i = 0; i < c; ++i) m += row[i];
  m /= c;
  float v = 0;
  for (int i = 0; i < c; ++i) v += (row[i] - m) * (row[i] - m);
  const float s = rsqrtf(v / c + 1e-5f);
  for (int i = 0; i < c; ++i) out[std::size_t(t) * c + i] = (row[i] - m) * s * w[i] + b[i];
  mean[t] = m, rstd[t] = s;
}

__device__ float block_sum(float v, float* shared) {
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x / 32) ? shared[lane] : 0.0f;
  for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
  __syncthreads();
  return v;
}

__global__ void layernorm_two_stage(const float* x, const float* w, const float* b, float* out, float* mean,
                                    float* rstd, int c) {
  __shared__ float shared[32];
  const float* row = x + std::size_t(blockIdx.x) * c;
  float s = 0;
  for (int i = threadIdx.x; i < c; i += blockDim.x) s += row[i];
  const float m = block_sum(s, shared) / c;
  float q = 0;
  for (int i = threadIdx.x; i < c; i += blockDim.x) q += (row[i] - m) * (row[i] - m);
  const float r = rsqrtf(block_sum(q, shared) / c + 1e-5f);
  for (int i = threadIdx.x; i < c; i += blockDim.x)
    out[std::size_t(blockIdx.x) * c + i] = (row[i] - m) * r * w[i] + b[i];
  if (threadIdx.x == 0) mean[blockIdx.x] = m, rstd[blockIdx.x] = r;
}

// Causal softmax over rows of length (row % T) + 1: naive one thread per row (max, sum of exp, write).
__global__ void softmax_naive(const float* x, float* out, int rows, int t_len) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const int n = r % t_len + 1;
  const float* row = x + std::size_t(r) * t_len;
  float m = -INFINITY;
  for (int i = 0; i < n; ++i) m = fmaxf(m, row[i]);
  float s = 0;
  for (int i = 0; i < n; ++i) s += expf(row[i] - m);
  for (int i = 0; i < n; ++i) out[std::size_t(r) * t_len + i] = expf(row[i] - m) / s;
}

__device__ float block_max(float v, float* shared) {
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) shared[warp] = v;
  __syncthreads();
  v = lane < int(blockDim.x / 32) ? shared[lane] : -INFINITY;
  for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  __syncthreads();
  return v;
}

__global__ void softmax_two_stage(const float* x, float* out, int t_len) {
  __shared__ float shared[32];
  const int n = int(blockIdx.x % t_len) + 1;
  const float* row = x + std::size_t(blockIdx.x) * t_len;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += blockDim.x) m = fmaxf(m, row[i]);
  m = block_max(m, shared);
  float s = 0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += expf(row[i] - m);
  s = block_sum(s, shared);
  for (int i = threadIdx.x; i < n; i += blockDim.x) out[std::size_t(blockIdx.x) * t_len + i] = expf(row[i] - m) / s;
}

__global__ void rmsnorm_two_stage_bf16(const detred::bfloat16* x, const detred::bfloat16* w, detred::bfloat16* out,
                                       float* rstd, int c) {
  __shared__ float shared[32];
  const detred::bfloat16* row = x + std::size_t(blockIdx.x) * c;
  float q = 0;
  for (int i = threadIdx.x; i < c; i += blockDim.x) q += row[i].to_float() * row[i].to_float();
  const float r = rsqrtf(block_sum(q, shared) / c + 1e-5f);
  for (int i = threadIdx.x; i < c; i += blockDim.x)
    out[std::size_t(blockIdx.x) * c + i] = detred::bfloat16::from_float(row[i].to_float() * r * w[i].to_float());
  if (threadIdx.x == 0) rstd[blockIdx.x] = r;
}

__global__ void layernorm_two_stage_bf16(const detred::bfloat16* x, const detred::bfloat16* w,
                                         const detred::bfloat16* b, detred::bfloat16* out, float* mean, float* rstd,
                                         int c) {
  __shared__ float shared[32];
  const detred::bfloat16* row = x + std::size_t(blockIdx.x) * c;
  float s = 0;
  for (int i = threadIdx.x; i < c; i += blockDim.x) s += row[i].to_float();
  const float m = block_sum(s, shared) / c;
  float q = 0;
  for (int i = threadIdx.x; i < c; i += blockDim.x) q += (row[i].to_float() - m) * (row[i].to_float() - m);
  const float r = rsqrtf(block_sum(q, shared) / c + 1e-5f);
  for (int i = threadIdx.x; i < c; i += blockDim.x)
    out[std::size_t(blockIdx.x) * c + i] =
        detred::bfloat16::from_float((row[i].to_float() - m) * r * w[i].to_float() + b[i].to_float());
  if (threadIdx.x == 0) mean[blockIdx.x] = m, rstd[blockIdx.x] = r;
}

void bench_norms(float* x, float* y) {
  bench::device_buffer<float> w_buffer(2 * 4096), stats_buffer(2 * 16384 * 16);
  float *w = w_buffer.get(), *stats = stats_buffer.get();
  bench::fill_uniform(w, 2 * 4096, 7);
  {  // GPT-2 LayerNorm, fp32: B = 8, T = 1024, C = 768.
    const int rows = 8 * 1024, c = 768;
    const double bytes = 2.0 * rows * c * 4;
    const double copy_ms = median_ms([&] { bench::copy_bytes(x, y, std::size_t(rows) * c * 4); });
    const double copy_gbs = bytes / copy_ms / 1e6;
    report("copy, GPT-2 LayerNorm bytes (fp32 8192 x 768, r+w)", bytes, copy_ms, copy_gbs, "copy");
    report("naive LayerNorm (thread per row) fp32 8192 x 768", bytes,
           median_ms([&] { layernorm_naive<<<rows / 256, 256>>>(x, w, w + 4096, y, stats, stats + rows, rows, c); }),
           copy_gbs, "copy");
    report("two-stage LayerNorm (block per row) fp32 8192 x 768", bytes,
           median_ms([&] { layernorm_two_stage<<<rows, 256>>>(x, w, w + 4096, y, stats, stats + rows, c); }), copy_gbs,
           "copy");
    report("detred::cuda::layernorm_forward fp32 8192 x 768", bytes, median_ms([&] {
             detred::cuda::layernorm_forward(no_workspace(), zero_bytes, x, w, w + 4096, y, stats, stats + rows,
                                             detred::dense_rows(rows, c));
           }),
           copy_gbs, "copy");
  }
  {  // GPT-2 causal softmax, fp32: B x NH x T x T = 8 x 12 x 1024 x 1024 (the lower triangle moves).
    const int t_len = 1024, rows = 8 * 12 * t_len;
    const double bytes = 2.0 * 8 * 12 * (double(t_len) * (t_len + 1) / 2) * 4;
    report("naive causal softmax (thread per row) fp32 8x12x1024x1024", bytes,
           median_ms([&] { softmax_naive<<<rows / 256, 256>>>(x, y, rows, t_len); }), 0, "");
    report("two-stage causal softmax (block per row) fp32", bytes,
           median_ms([&] { softmax_two_stage<<<rows, 256>>>(x, y, t_len); }), 0, "");
    const detred::row_shape shape{std::uint64_t(rows), std::uint64_t(t_len), std::uint64_t(t_len), nullptr,
                                  std::uint64_t(t_len)};
    report("detred::cuda::softmax_forward causal fp32", bytes,
           median_ms([&] { detred::cuda::softmax_forward(no_workspace(), zero_bytes, x, y, shape); }), 0, "");
  }
  {  // The bars: LayerNorm and RMSNorm forward, bf16 [16384 x 4096], against the copy bandwidth of the same bytes.
    const int rows = 16384, c = 4096;
    auto* xb = reinterpret_cast<detred::bfloat16*>(x);
    auto* yb = reinterpret_cast<detred::bfloat16*>(y);
    auto* wb = reinterpret_cast<detred::bfloat16*>(w);
    bench::fill_uniform(xb, std::uint64_t(rows) * c, 2);
    bench::fill_uniform(wb, 2 * 4096, 8);
    const double bytes = 2.0 * rows * c * 2;
    const double copy_ms = median_ms([&] { bench::copy_bytes(xb, yb, std::size_t(rows) * c * 2); });
    const double copy_gbs = bytes / copy_ms / 1e6;
    report("copy, bf16 16384 x 4096 (r+w)", bytes, copy_ms, copy_gbs, "copy");
    report("two-stage LayerNorm bf16 16384 x 4096", bytes,
           median_ms([&] { layernorm_two_stage_bf16<<<rows, 256>>>(xb, wb, wb + 4096, yb, stats, stats + rows, c); }),
           copy_gbs, "copy");
    report("detred::cuda::layernorm_forward bf16 16384 x 4096", bytes, median_ms([&] {
             detred::cuda::layernorm_forward(no_workspace(), zero_bytes, xb, wb, wb + 4096, yb, stats, stats + rows,
                                             detred::dense_rows(rows, c));
           }),
           copy_gbs, "copy");
    report("two-stage RMSNorm bf16 16384 x 4096", bytes,
           median_ms([&] { rmsnorm_two_stage_bf16<<<rows, 256>>>(xb, wb, yb, stats, c); }), copy_gbs, "copy");
    report("detred::cuda::rmsnorm_forward bf16 16384 x 4096", bytes, median_ms([&] {
             detred::cuda::rmsnorm_forward(no_workspace(), zero_bytes, xb, wb, yb, stats, detred::dense_rows(rows, c));
           }),
           copy_gbs, "copy");
  }
}

// A workspace of the bytes `call` asks for in its size query (call(d_workspace, bytes)), kept for the timed calls.
template <class Call>
bench::device_buffer<unsigned char> workspace_for(const Call& call, std::size_t& bytes) {
  call(nullptr, bytes);
  return bench::device_buffer<unsigned char>(bytes);
}

// The bars of the row family's forward + backward passes, each against the copy ceiling of the bytes it must move
// (x read and out written by a forward; dy and x (y) read and dx written by a backward; the weight and statistics
// vectors are not counted). The PyTorch peers are measured from Python.
void bench_gradients(float* x, float* y) {
  using detred::bfloat16;
  bench::device_buffer<float> w_buffer(2 * 4096), stats_buffer(2 * 16384), grad_buffer(2 * 4096);
  auto* wb = reinterpret_cast<bfloat16*>(w_buffer.get());
  float *stats = stats_buffer.get(), *grads = grad_buffer.get();
  bench::fill_uniform(wb, 2 * 4096, 9);
  {  // RMSNorm and LayerNorm forward + backward, bf16 [16384 x 4096].
    const std::uint64_t rows = 16384, c = 4096, n = rows * c;
    auto* xb = reinterpret_cast<bfloat16*>(x);
    auto* dyb = xb + n;
    auto* outb = reinterpret_cast<bfloat16*>(y);
    auto* dxb = outb + n;
    bench::fill_uniform(xb, 2 * n, 3);
    const detred::row_shape shape = detred::dense_rows(rows, c);
    const double tensor = double(n) * 2;
    const double copy_gbs = 2 * tensor / median_ms([&] { bench::copy_bytes(xb, outb, std::size_t(tensor)); }) / 1e6;
    report("copy, bf16 16384 x 4096 (r+w)", 2 * tensor, 2 * tensor / copy_gbs / 1e6, copy_gbs, "copy");
    std::size_t rms_bytes = 0, ln_bytes = 0;
    const auto rms_backward = [&](void* ws, std::size_t& bytes) {
      detred::cuda::rmsnorm_backward(ws, bytes, dyb, xb, wb, stats, dxb, grads, shape);
    };
    const auto ln_backward = [&](void* ws, std::size_t& bytes) {
      detred::cuda::layernorm_backward(ws, bytes, dyb, xb, wb, stats, stats + rows, dxb, grads, grads + c, shape);
    };
    const auto rms_ws = workspace_for(rms_backward, rms_bytes);
    const auto ln_ws = workspace_for(ln_backward, ln_bytes);
    report("detred::cuda::rmsnorm_forward + backward bf16 16384 x 4096", 5 * tensor, median_ms([&] {
             detred::cuda::rmsnorm_forward(no_workspace(), zero_bytes, xb, wb, outb, stats, shape);
             rms_backward(rms_ws.get(), rms_bytes);
           }),
           copy_gbs, "copy");
    report("detred::cuda::rmsnorm_backward bf16 16384 x 4096", 3 * tensor,
           median_ms([&] { rms_backward(rms_ws.get(), rms_bytes); }), copy_gbs, "copy");
    report("detred::cuda::layernorm_forward + backward bf16 16384 x 4096", 5 * tensor, median_ms([&] {
             detred::cuda::layernorm_forward(no_workspace(), zero_bytes, xb, wb, wb + c, outb, stats, stats + rows,
                                             shape);
             ln_backward(ln_ws.get(), ln_bytes);
           }),
           copy_gbs, "copy");
    report("detred::cuda::layernorm_backward bf16 16384 x 4096", 3 * tensor,
           median_ms([&] { ln_backward(ln_ws.get(), ln_bytes); }), copy_gbs, "copy");
  }
  {  // log_softmax forward (and backward), a vocabulary-sized row: [16384 x 32768], bf16 and fp32 (2 GiB a tensor).
    const std::uint64_t rows = 16384, c = 32768, n = rows * c;
    const detred::row_shape shape = detred::dense_rows(rows, c);
    bench::device_buffer<float> in(n), out(n);
    bench::fill_uniform(in.get(), n, 4);
    const double copy_gbs = 2.0 * n * 4 / median_ms([&] { bench::copy_bytes(in.get(), out.get(), n * 4); }) / 1e6;
    report("copy, fp32 16384 x 32768 (r+w)", 2.0 * n * 4, 2.0 * n * 4 / copy_gbs / 1e6, copy_gbs, "copy");
    report("detred::cuda::log_softmax_forward fp32 16384 x 32768", 2.0 * n * 4, median_ms([&] {
             detred::cuda::log_softmax_forward(no_workspace(), zero_bytes, in.get(), out.get(), shape);
           }),
           copy_gbs, "copy");
    // The shared-memory block-a-row kernel's block size (tuning key rows.block_threads; 0 = the default).
    const auto sweep = [&](const char* type, auto* input, auto* output, double element_bytes) {
      for (int threads : {128, 256, 512, 1024}) {
        char spec[48], what[96];
        std::snprintf(spec, sizeof spec, "rows.block_threads=%d", threads);
        detred::cuda::detail::set_tuning_overrides(spec);
        std::snprintf(what, sizeof what, "log_softmax_forward %s 16384 x 32768, %d threads a row", type, threads);
        report(what, 2.0 * n * element_bytes,
               median_ms([&] { detred::cuda::log_softmax_forward(no_workspace(), zero_bytes, input, output, shape); }),
               copy_gbs, "copy");
      }
      detred::cuda::detail::set_tuning_overrides("");
    };
    sweep("fp32", in.get(), out.get(), 4.0);
    auto* ib = reinterpret_cast<bfloat16*>(in.get());
    auto* ob = reinterpret_cast<bfloat16*>(out.get());
    bench::fill_uniform(ib, 2 * n, 5);
    report("detred::cuda::log_softmax_forward bf16 16384 x 32768", 2.0 * n * 2,
           median_ms([&] { detred::cuda::log_softmax_forward(no_workspace(), zero_bytes, ib, ob, shape); }), copy_gbs,
           "copy");
    sweep("bf16", ib, ob, 2.0);
    report("detred::cuda::log_softmax_backward bf16 16384 x 32768", 3.0 * n * 2,
           median_ms([&] { detred::cuda::log_softmax_backward(no_workspace(), zero_bytes, ib, ib + n, ob, shape); }),
           copy_gbs, "copy");
  }
  {  // Causal softmax [B=8, NH=12, T=1024] (rows of 1 .. 1024 elements, the lower triangle moves): bf16 and fp32.
    const std::uint64_t t_len = 1024, rows = 8 * 12 * t_len;
    const detred::row_shape shape{rows, t_len, t_len, nullptr, t_len};
    const double moved = 2.0 * 8 * 12 * (double(t_len) * (t_len + 1) / 2);
    auto* xb = reinterpret_cast<bfloat16*>(x);
    auto* yb = reinterpret_cast<bfloat16*>(y);
    bench::fill_uniform(x, rows * t_len, 6);
    report("detred::cuda::softmax_forward causal fp32 8x12x1024x1024", moved * 4,
           median_ms([&] { detred::cuda::softmax_forward(no_workspace(), zero_bytes, x, y, shape); }), 0, "");
    bench::fill_uniform(xb, rows * t_len, 7);
    report("detred::cuda::softmax_forward causal bf16 8x12x1024x1024", moved * 2,
           median_ms([&] { detred::cuda::softmax_forward(no_workspace(), zero_bytes, xb, yb, shape); }), 0, "");
    report("detred::cuda::softmax_backward causal bf16 8x12x1024x1024", moved * 3, median_ms([&] {
             detred::cuda::softmax_backward(no_workspace(), zero_bytes, yb, xb, xb + rows * t_len, shape);
           }),
           0, "");
  }
}
}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc > 1) reps = std::atoi(argv[1]);
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "props");
  std::printf("device %s, %d SMs, median of %d\n", prop.name, prop.multiProcessorCount, reps);
  const std::size_t n = std::size_t{65536} * 4096;  // 1 GiB of fp32
  // out: the mean and variance of 2^20 rows.
  bench::device_buffer<float> x_buffer(n), y_buffer(n), out_buffer(std::size_t{2} << 20), sink(1);
  float *x = x_buffer.get(), *y = y_buffer.get(), *out = out_buffer.get();
  bench::fill_uniform(x, n, 1);

  const double read_ms = median_ms([&] { bench::read_bytes(x, n * 4, sink.get()); });
  const double read_gbs = n * 4.0 / read_ms / 1e6;
  report("read ceiling, 1 GiB fp32", n * 4.0, read_ms, read_gbs, "read");
  const double copy_ms = median_ms([&] { bench::copy_bytes(x, y, n * 2); });
  const double copy_gbs = n * 4.0 / copy_ms / 1e6;  // n/2 floats read + written
  report("copy ceiling, 512 MiB read + 512 MiB written", n * 4.0, copy_ms, copy_gbs, "copy");

  bench::device_buffer<int> offsets_buffer(1048576 + 1);
  int* offsets = offsets_buffer.get();
  bench::device_buffer<unsigned char> temp;
  for (auto [rows, cols] : {std::pair<int, int>{65536, 4096}, {1048576, 256}}) {
    offsets_kernel<<<(rows + 256) / 256, 256>>>(offsets, rows, cols);
    std::size_t need = 0;
    cub::DeviceSegmentedReduce::Sum(nullptr, need, x, out, rows, offsets, offsets + 1);
    if (need > temp.bytes()) temp = bench::device_buffer<unsigned char>(need);
    std::size_t temp_bytes = temp.bytes();
    const double bytes = double(rows) * cols * 4;
    const double cub_ms =
        median_ms([&] { cub::DeviceSegmentedReduce::Sum(temp.get(), temp_bytes, x, out, rows, offsets, offsets + 1); });
    const double cub_gbs = bytes / cub_ms / 1e6;
    char what[128];
    std::snprintf(what, sizeof what, "cub::DeviceSegmentedReduce::Sum fp32 [%d x %d]", rows, cols);
    report(what, bytes, cub_ms, read_gbs, "read ceiling");
    const detred::row_shape shape = detred::dense_rows(std::uint64_t(rows), std::uint64_t(cols));
    void* ws = no_workspace();
    std::snprintf(what, sizeof what, "detred::cuda::row_sum fp32 [%d x %d]", rows, cols);
    report(what, bytes, median_ms([&] { detred::cuda::row_sum(ws, zero_bytes, x, out, shape); }), cub_gbs,
           "CUB segmented");
    std::snprintf(what, sizeof what, "detred::cuda::row_sum neumaier fp32 [%d x %d]", rows, cols);
    report(what, bytes, median_ms([&] {
             detred::cuda::row_sum(ws, zero_bytes, x, out, shape, nullptr,
                                   {.method = detred::sum_method::tree_neumaier});
           }),
           cub_gbs, "CUB segmented");
    std::snprintf(what, sizeof what, "detred::cuda::row_max fp32 [%d x %d]", rows, cols);
    report(what, bytes, median_ms([&] { detred::cuda::row_max(ws, zero_bytes, x, out, shape); }), cub_gbs,
           "CUB segmented");
    std::snprintf(what, sizeof what, "detred::cuda::row_mean_variance fp32 [%d x %d]", rows, cols);
    report(what, bytes, median_ms([&] { detred::cuda::row_mean_variance(ws, zero_bytes, x, out, out + rows, shape); }),
           cub_gbs, "CUB segmented");
    std::snprintf(what, sizeof what, "detred::cuda::row_logsumexp fp32 [%d x %d]", rows, cols);
    report(what, bytes, median_ms([&] { detred::cuda::row_logsumexp(ws, zero_bytes, x, out, shape); }), cub_gbs,
           "CUB segmented");
  }
  {
    const detred::row_shape shape = detred::dense_rows(65536, 4096);
    for (int level : {0, 6, 8, 10}) {
      const detred::cuda::column_options options{.chunk_level = level};
      std::size_t bytes = 0;
      detred::cuda::column_sum(nullptr, bytes, x, out, shape, nullptr, options);
      bench::device_buffer<unsigned char> ws(bytes);
      char what[128];
      std::snprintf(what, sizeof what, "detred::cuda::column_sum fp32 [65536 x 4096], chunk level %d", level);
      report(what, double(shape.rows * shape.cols * 4),
             median_ms([&] { detred::cuda::column_sum(ws.get(), bytes, x, out, shape, nullptr, options); }), read_gbs,
             "read ceiling");
    }
  }
  std::printf("copy ceiling %.1f GB/s (for the norms)\n", copy_gbs);
  bench_norms(x, y);
  bench_gradients(x, y);
  return 0;
}
