// LayerNorm, RMSNorm (forward, backward) and softmax on the GPU (detred/cuda/norms.hpp) against the CPU references
// (detred/norms.hpp), bit for bit, over shapes, launch configurations and batch sizes (batch invariance: the first k
// rows of a batch give the bits of a batch of k). Label gpu: skipped, saying why, without a device.
#include <gtest/gtest.h>

#include <cuda_runtime.h>  // the typed cudaMalloc that tests/support/device_array.hpp uses

#include <cstdint>
#include <cstring>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "tests/rows/row_inputs.hpp"
#include "tests/support/device_array.hpp"
#include "tests/support/device_rows.hpp"

namespace {
using namespace detred;
using test::device_array;

#define SKIP_WITHOUT_GPU() \
  if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device: the GPU norms are not tested here"

using test::to_device;
using test::with_workspace;

template <class T>
std::vector<T> to_host(const T* d, std::size_t n) {
  return cuda::to_host(d, n);
}
template <class T>
void expect_same_bits(const std::vector<T>& gpu, const std::vector<T>& cpu, const char* what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  int failures = 0;
  for (std::size_t i = 0; i < gpu.size() && failures < 8; ++i)
    if (bits_of(gpu[i]) != bits_of(cpu[i])) ++failures, ADD_FAILURE() << what << " element " << i;
}

template <class T>
void norms_equal_cpu(std::uint64_t rows, std::uint64_t c, const cuda::row_options& launch) {
  SCOPED_TRACE(testing::Message() << rows << " x " << c << " block " << launch.block_threads << " grid "
                                  << launch.grid_blocks);
  const std::vector<T> x = test::random_values<T>(rows * c, rows + c), dy = test::random_values<T>(rows * c, 3);
  std::vector<T> w = test::random_values<T>(c, 4), b = test::random_values<T>(c, 5);
  std::vector<T> out(rows * c), dx(rows * c);
  std::vector<float> mean(rows), rstd(rows), dweight(c);
  device_array<T> dxx(rows * c + 1), ddy(rows * c + 1), dw(c + 1), db(c + 1), dout(rows * c + 1), ddx(rows * c + 1);
  device_array<float> dmean(rows + 1), drstd(rows + 1), ddw(c + 1);
  to_device(dxx, x), to_device(ddy, dy), to_device(dw, w), to_device(db, b);

  const row_shape shape = dense_rows(rows, c);
  layernorm_forward(x.data(), w.data(), b.data(), out.data(), mean.data(), rstd.data(), shape);
  EXPECT_EQ(with_workspace([&](void* ws, std::size_t& bytes) {
              cuda::layernorm_forward(ws, bytes, dxx.ptr, dw.ptr, db.ptr, dout.ptr, dmean.ptr, drstd.ptr, shape, 1e-5f,
                                      nullptr, launch);
            }),
            cuda::min_workspace_bytes);
  expect_same_bits(to_host(dout.ptr, rows * c), out, "layernorm out");
  expect_same_bits(to_host(dmean.ptr, rows), mean, "layernorm mean");
  expect_same_bits(to_host(drstd.ptr, rows), rstd, "layernorm rstd");

  rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), shape);
  EXPECT_EQ(with_workspace([&](void* ws, std::size_t& bytes) {
              cuda::rmsnorm_forward(ws, bytes, dxx.ptr, dw.ptr, dout.ptr, drstd.ptr, shape, 1e-5f, nullptr, launch);
            }),
            cuda::min_workspace_bytes);
  expect_same_bits(to_host(dout.ptr, rows * c), out, "rmsnorm out");
  expect_same_bits(to_host(drstd.ptr, rows), rstd, "rmsnorm rstd");

  rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), shape);
  with_workspace([&](void* ws, std::size_t& bytes) {
    cuda::rmsnorm_backward(ws, bytes, ddy.ptr, dxx.ptr, dw.ptr, drstd.ptr, ddx.ptr, ddw.ptr, shape, nullptr, launch);
  });
  expect_same_bits(to_host(ddx.ptr, rows * c), dx, "rmsnorm dx");
  expect_same_bits(to_host(ddw.ptr, c), dweight, "rmsnorm dweight");

  for (std::uint64_t period : {std::uint64_t{0}, c}) {
    const row_shape rows_shape{rows, c, c, nullptr, period};
    std::vector<T> s(rows * c, T{}), sg(rows * c, T{});
    cuda::check(cudaMemset(dout.ptr, 0, rows * c * sizeof(T)), "memset");
    softmax_forward(x.data(), s.data(), rows_shape);
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::softmax_forward(ws, bytes, dxx.ptr, dout.ptr, rows_shape, nullptr, launch);
    });
    expect_same_bits(to_host(dout.ptr, rows * c), s, period ? "causal softmax" : "softmax");
    // fill_past_length: the masked entries written too (+0, -Inf), over outputs full of 3s on both sides.
    cuda::row_options fill = launch;
    fill.fill_past_length = true;
    const std::vector<T> threes(rows * c, test::make<T>(3.0));
    std::vector<T> fs = threes, fl = threes;
    softmax_forward(x.data(), fs.data(), rows_shape, true);
    log_softmax_forward(x.data(), fl.data(), rows_shape, true);
    to_device(dout, threes);
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::softmax_forward(ws, bytes, dxx.ptr, dout.ptr, rows_shape, nullptr, fill);
    });
    expect_same_bits(to_host(dout.ptr, rows * c), fs, period ? "causal softmax, filled" : "softmax, filled");
    to_device(dout, threes);
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::log_softmax_forward(ws, bytes, dxx.ptr, dout.ptr, rows_shape, nullptr, fill);
    });
    expect_same_bits(to_host(dout.ptr, rows * c), fl, period ? "causal log_softmax, filled" : "log_softmax, filled");
    if (period) {  // the fill reached every masked entry: row t of each matrix ends with c - (t % c) - 1 of them
      const T zero = norms::softmax_fill<T>();
      for (std::uint64_t r = 0; r < rows; ++r)
        for (std::uint64_t i = r % c + 1; i < c; ++i)
          ASSERT_EQ(std::memcmp(&fs[r * c + i], &zero, sizeof(T)), 0) << "row " << r << " entry " << i;
    }
  }
}

TEST(NormsCuda, SameBitsAsTheCpuOverShapesAndLaunches) {
  SKIP_WITHOUT_GPU();
  // 32768 and 70001: softmax's block-per-row kernel with every warp a region, and a row longer than the block's
  // regions.
  for (std::uint64_t c : {1ull, 7ull, 64ull, 768ull, 1000ull, 4096ull, 8195ull, 32768ull, 70001ull}) {
    norms_equal_cpu<float>(c > 10000 ? 5 : 37, c, {});
    norms_equal_cpu<bfloat16>(c > 10000 ? 5 : 37, c, {});
  }
  for (int threads : {32, 64, 128, 256})
    for (int grid : {0, 1, 5, 11}) norms_equal_cpu<bfloat16>(70, 768, {.block_threads = threads, .grid_blocks = grid});
}

// The register-resident LayerNorm / RMSNorm kernels (rows of at most 8, 16 or 32 full segments of 32 V elements,
// 16-byte aligned) against the CPU bits: every capacity, full and partial capacities, with and without a tail (c not
// a multiple of a segment), and the first shape past them (the streaming kernel), over launch configurations.
TEST(NormsCuda, RegisterResidentRowsSameBitsAsTheCpu) {
  SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();  // under compute-sanitizer: fewer shapes, 2 launches
  for (std::uint64_t c :
       {8ull, 248ull, 256ull, 264ull, 2048ull, 2056ull, 2304ull, 4096ull, 4352ull, 8192ull, 8200ull, 8448ull}) {
    if (quick && c != 264 && c != 4096 && c != 4352 && c != 8200 && c != 8448) continue;
    norms_equal_cpu<bfloat16>(19, c, {});
    norms_equal_cpu<float>(19, c / 2, {});
  }
  for (int threads : {32, 96, 256})
    for (int grid : {0, 1, 3, 7}) {
      if (quick && !((threads == 32 && grid == 1) || (threads == 256 && grid == 0))) continue;
      norms_equal_cpu<bfloat16>(41, 4096, {.block_threads = threads, .grid_blocks = grid});
      norms_equal_cpu<float>(41, 1032, {.block_threads = threads, .grid_blocks = grid});
    }
}

// rmsnorm_backward's one-pass form (register-resident rows, dweight reduced over aligned chunks of 32 rows in the dx
// kernel, a second level of chunks over their roots, the last partial chunk's rows from dy and x): the CPU's bits
// for row counts below, at and past a chunk and past the second level, with and without a tail, grid-strided.
TEST(NormsCuda, RmsNormOnePassBackwardSameBitsAsTheCpu) {
  SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  for (std::uint64_t rows : {31ull, 32ull, 97ull, 256ull, 1000ull, 2083ull}) {
    if (quick && rows != 97 && rows != 1000) continue;
    for (std::uint64_t c : {264ull, 2048ull, 4096ull}) {
      SCOPED_TRACE(testing::Message() << rows << " x " << c);
      const std::uint64_t n = rows * c;
      const std::vector<bfloat16> x = test::random_values<bfloat16>(n, rows + c),
                                  dy = test::random_values<bfloat16>(n, 5), w = test::random_values<bfloat16>(c, 9);
      std::vector<float> rstd(rows), dweight(c);
      std::vector<bfloat16> out(n), dx(n);
      rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), dense_rows(rows, c), 1e-5f);
      rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), dense_rows(rows, c));
      device_array<bfloat16> d_x(n), d_dy(n), d_w(c), d_dx(n);
      device_array<float> d_rstd(rows), d_dw(c);
      to_device(d_x, x), to_device(d_dy, dy), to_device(d_w, w), to_device(d_rstd, rstd);
      for (int grid : {0, 3}) {
        if (quick && grid != 0) continue;
        with_workspace([&](void* ws, std::size_t& bytes) {
          cuda::rmsnorm_backward(ws, bytes, d_dy.ptr, d_x.ptr, d_w.ptr, d_rstd.ptr, d_dx.ptr, d_dw.ptr,
                                 dense_rows(rows, c), nullptr, {.grid_blocks = grid});
        });
        expect_same_bits(to_host(d_dx.ptr, n), dx, "rmsnorm dx");
        expect_same_bits(to_host(d_dw.ptr, c), dweight, "rmsnorm dweight");
      }
      // float rows of the same bytes (half the elements): the float instantiation of the one-pass form.
      const std::uint64_t cf = c / 2, nf = rows * cf;
      const std::vector<float> xf = test::random_values<float>(nf, rows), dyf = test::random_values<float>(nf, 7),
                               wf = test::random_values<float>(cf, 11);
      std::vector<float> outf(nf), dxf(nf), rstdf(rows), dwf(cf);
      rmsnorm_forward(xf.data(), wf.data(), outf.data(), rstdf.data(), dense_rows(rows, cf), 1e-5f);
      rmsnorm_backward(dyf.data(), xf.data(), wf.data(), rstdf.data(), dxf.data(), dwf.data(), dense_rows(rows, cf));
      device_array<float> d_xf(nf), d_dyf(nf), d_wf(cf), d_dxf(nf), d_rstdf(rows), d_dwf(cf);
      to_device(d_xf, xf), to_device(d_dyf, dyf), to_device(d_wf, wf), to_device(d_rstdf, rstdf);
      with_workspace([&](void* ws, std::size_t& bytes) {
        cuda::rmsnorm_backward(ws, bytes, d_dyf.ptr, d_xf.ptr, d_wf.ptr, d_rstdf.ptr, d_dxf.ptr, d_dwf.ptr,
                               dense_rows(rows, cf));
      });
      expect_same_bits(to_host(d_dxf.ptr, nf), dxf, "rmsnorm dx (float)");
      expect_same_bits(to_host(d_dwf.ptr, cf), dwf, "rmsnorm dweight (float)");
    }
  }
}

TEST(NormsCuda, BatchInvariantLayerNorm) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t rows = 257, c = 768;
  const std::vector<bfloat16> x = test::random_values<bfloat16>(rows * c, 1);
  const std::vector<bfloat16> w = test::random_values<bfloat16>(c, 2), b = test::random_values<bfloat16>(c, 3);
  device_array<bfloat16> dxx(rows * c), dw(c), db(c), dout(rows * c);
  device_array<float> dmean(rows), drstd(rows);
  to_device(dxx, x), to_device(dw, w), to_device(db, b);
  const auto layernorm = [&](std::uint64_t k) {
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::layernorm_forward(ws, bytes, dxx.ptr, dw.ptr, db.ptr, dout.ptr, dmean.ptr, drstd.ptr, dense_rows(k, c));
    });
  };
  layernorm(rows);
  const std::vector<bfloat16> all = to_host(dout.ptr, rows * c);
  for (std::uint64_t k : {1ull, 2ull, 5ull, 8ull, 63ull, 64ull, 65ull, 128ull, 256ull}) {
    cuda::check(cudaMemset(dout.ptr, 0, rows * c * 2), "memset");
    layernorm(k);
    const std::vector<bfloat16> part = to_host(dout.ptr, k * c);
    for (std::uint64_t i = 0; i < k * c; ++i) ASSERT_EQ(part[i].bits, all[i].bits) << "k " << k << " element " << i;
  }
}

}  // namespace
