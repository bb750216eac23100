// cuda::layernorm_backward against its CPU twin (detred/norms.hpp) bit for bit, every output (dx, dweight, dbias), over
// widths, launch shapes (row_options block_threads x grid_blocks), float / bfloat16 / half, dense, strided and
// misaligned rows; batch invariance of dx on the device (the first k rows give the bits of a batch of k; a row's bits
// do not move with its position); and the half instantiations of the forward norms and rmsnorm_backward against their
// twins. Label gpu: skipped, saying why, without a device; the argument checks need none and always run.
#include <gtest/gtest.h>

#include <cuda_runtime.h>  // the typed cudaMalloc that tests/support/device_array.hpp uses

#include <cstdint>
#include <string>
#include <vector>

#include "detred/cuda/norms.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "tests/rows/gradient_inputs.hpp"
#include "tests/rows/row_inputs.hpp"
#include "tests/support/device_array.hpp"
#include "tests/support/device_rows.hpp"
#include "tests/support/gpu_test.hpp"

namespace {
using namespace detred;
using test::device_array;
using test::to_device;
using test::with_workspace;

template <class T>
void expect_same_bits(const std::vector<T>& gpu, const std::vector<T>& cpu, const std::string& what) {
  ASSERT_EQ(gpu.size(), cpu.size());
  const long long at = test::first_bit_difference(gpu.data(), cpu.data(), gpu.size());
  EXPECT_EQ(at, -1) << what << ": first differing element";
}

// layernorm_backward on [rows x c] rows `stride` apart, the device's inputs `offset` elements past an aligned start
// (offset 0: 16-byte aligned rows where the stride allows), against the CPU twin.
template <class T>
void layernorm_backward_equal_cpu(std::uint64_t rows, std::uint64_t c, std::uint64_t stride, std::uint64_t offset,
                                  const cuda::row_options& launch) {
  SCOPED_TRACE(testing::Message() << float_traits<T>::name << " " << rows << " x " << c << " stride " << stride
                                  << " offset " << offset << " block " << launch.block_threads << " grid "
                                  << launch.grid_blocks);
  const std::uint64_t n = rows * stride;
  const std::vector<T> x = test::values_in<T>(n, rows + c, -3, 5), dy = test::values_in<T>(n, stride, -2, 2);
  const std::vector<T> w = test::values_in<T>(c, 4, -2, 2);
  std::vector<float> mean(rows), rstd(rows);
  for (std::uint64_t t = 0; t < rows; ++t)
    mean[t] = 1.0f - 0.125f * float(t % 7), rstd[t] = 0.5f + 0.25f * float(t % 5);
  std::vector<T> dx(n, test::make<T>(3.0));
  std::vector<float> dweight(c), dbias(c);
  layernorm_backward(dy.data(), x.data(), w.data(), mean.data(), rstd.data(), dx.data(), dweight.data(), dbias.data(),
                     row_shape{rows, c, stride});

  device_array<T> d_x(n + offset + 1), d_dy(n + offset + 1), d_w(c + offset + 1), d_dx(n + offset + 1);
  device_array<float> d_mean(rows + 1), d_rstd(rows + 1), d_dw(c + 1), d_db(c + 1);
  const T* px = to_device(d_x, x, offset);
  const T* pdy = to_device(d_dy, dy, offset);
  const T* pw = to_device(d_w, w, offset);
  T* pdx = to_device(d_dx, std::vector<T>(n, test::make<T>(3.0)), offset);
  to_device(d_mean, mean), to_device(d_rstd, rstd);
  with_workspace([&](void* ws, std::size_t& bytes) {
    cuda::layernorm_backward(ws, bytes, pdy, px, pw, d_mean.ptr, d_rstd.ptr, pdx, d_dw.ptr, d_db.ptr,
                             row_shape{rows, c, stride}, nullptr, launch);
  });
  expect_same_bits(cuda::to_host(pdx, n), dx, "dx");
  expect_same_bits(cuda::to_host(d_dw.ptr, c), dweight, "dweight");
  expect_same_bits(cuda::to_host(d_db.ptr, c), dbias, "dbias");
}

TEST(LayerNormBackwardCuda, SameBitsAsTheCpuOverShapesAndLaunches) {
  DETRED_SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  for (std::uint64_t c : {1ull, 7ull, 64ull, 768ull, 1000ull, 4096ull, 8195ull}) {
    if (quick && c != 768 && c != 8195) continue;
    layernorm_backward_equal_cpu<float>(37, c, c, 0, {});
    layernorm_backward_equal_cpu<bfloat16>(37, c, c, 0, {});
    layernorm_backward_equal_cpu<half>(37, c, c, 0, {});
  }
  for (int threads : {32, 64, 128, 256})
    for (int grid : {0, 1, 5, 11}) {
      if (quick && grid != 1) continue;
      layernorm_backward_equal_cpu<bfloat16>(70, 768, 768, 0, {.block_threads = threads, .grid_blocks = grid});
      layernorm_backward_equal_cpu<half>(45, 200, 208, 0, {.block_threads = threads, .grid_blocks = grid});
    }
  // Strided rows (aligned and not), misaligned starts, and enough rows for several column chunks.
  layernorm_backward_equal_cpu<float>(19, 100, 104, 0, {});
  layernorm_backward_equal_cpu<float>(19, 100, 103, 0, {});
  layernorm_backward_equal_cpu<bfloat16>(19, 250, 256, 1, {});
  layernorm_backward_equal_cpu<half>(19, 13, 21, 3, {});
  layernorm_backward_equal_cpu<bfloat16>(5000, 64, 64, 0, {});
  layernorm_backward_equal_cpu<float>(0, 64, 64, 0, {});
}

// Row counts below, at and past 32 and 256 (the column reduction's chunks and the finish's leftover rows), rows of
// register-resident widths with and without a tail up to the largest (4344 bfloat16), strided rows, grid-strided
// launches: the CPU's bits.
TEST(LayerNormBackwardCuda, RegisterWidthsOverRowCountsSameBitsAsTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  for (std::uint64_t rows : {31ull, 32ull, 97ull, 256ull, 1000ull, 2083ull})
    for (std::uint64_t c : {264ull, 2048ull, 4096ull, 4344ull}) {
      if (quick && !(rows == 97 || rows == 1000)) continue;
      layernorm_backward_equal_cpu<bfloat16>(rows, c, c, 0, {});
      layernorm_backward_equal_cpu<float>(rows, c / 2, c / 2, 0, {});
    }
  layernorm_backward_equal_cpu<bfloat16>(300, 4096, 4104, 0, {});
  layernorm_backward_equal_cpu<bfloat16>(300, 1032, 1032, 0, {.grid_blocks = 3});
  layernorm_backward_equal_cpu<half>(129, 2048, 2048, 0, {.grid_blocks = 2});
}

TEST(LayerNormBackwardCuda, BatchInvariantAndPositionFree) {
  DETRED_SKIP_WITHOUT_GPU();
  const std::uint64_t rows = 257, c = 4096, shift = 3;
  const std::uint64_t n = (rows + shift) * c;
  const std::vector<bfloat16> x = test::values_in<bfloat16>(n, 1, -3, 3), dy = test::values_in<bfloat16>(n, 2, -1, 1),
                              w = test::values_in<bfloat16>(c, 3, -2, 2);
  std::vector<float> mean(rows + shift), rstd(rows + shift);
  for (std::uint64_t t = 0; t < rows + shift; ++t) mean[t] = 0.125f * float(t % 3), rstd[t] = 1.0f + float(t % 4);
  device_array<bfloat16> d_x(n), d_dy(n), d_w(c), d_dx(n);
  device_array<float> d_mean(rows + shift), d_rstd(rows + shift), d_dw(c), d_db(c);
  to_device(d_x, x), to_device(d_dy, dy), to_device(d_w, w), to_device(d_mean, mean), to_device(d_rstd, rstd);
  // Rows [first, first + k) of the inputs.
  const auto run = [&](std::uint64_t first, std::uint64_t k) {
    cuda::check(cudaMemset(d_dx.ptr, 0, n * sizeof(bfloat16)), "memset");
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::layernorm_backward(ws, bytes, d_dy.ptr + first * c, d_x.ptr + first * c, d_w.ptr, d_mean.ptr + first,
                               d_rstd.ptr + first, d_dx.ptr, d_dw.ptr, d_db.ptr, dense_rows(k, c));
    });
    return cuda::to_host(d_dx.ptr, k * c);
  };
  const std::vector<bfloat16> all = run(shift, rows);
  for (std::uint64_t k : {1ull, 2ull, 5ull, 8ull, 63ull, 64ull, 65ull, 128ull, 256ull}) {
    const std::vector<bfloat16> part = run(shift, k);
    ASSERT_EQ(test::first_bit_difference(part.data(), all.data(), k * c), -1) << "k " << k;
  }
  const std::vector<bfloat16> shifted = run(0, rows + shift);
  ASSERT_EQ(test::first_bit_difference(shifted.data() + shift * c, all.data(), rows * c), -1) << "shifted rows";
}

// The half instantiations of the forward norms, rmsnorm_backward and softmax_forward against their twins.
TEST(NormsHalfCuda, SameBitsAsTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  for (std::uint64_t c : {7ull, 256ull, 1000ull, 4096ull, 8200ull}) {
    SCOPED_TRACE(testing::Message() << "C " << c);
    const std::uint64_t rows = 21, n = rows * c;
    const std::vector<half> x = test::values_in<half>(n, c, -3, 3), dy = test::values_in<half>(n, c + 1, -1, 1),
                            w = test::values_in<half>(c, 2, -2, 2), b = test::values_in<half>(c, 3, -1, 1);
    std::vector<half> out(n), dx(n);
    std::vector<float> mean(rows), rstd(rows), dweight(c);
    device_array<half> d_x(n), d_dy(n), d_w(c), d_b(c), d_out(n), d_dx(n);
    device_array<float> d_mean(rows), d_rstd(rows), d_dw(c);
    to_device(d_x, x), to_device(d_dy, dy), to_device(d_w, w), to_device(d_b, b);
    const row_shape shape = dense_rows(rows, c);
    layernorm_forward(x.data(), w.data(), b.data(), out.data(), mean.data(), rstd.data(), shape);
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::layernorm_forward(ws, bytes, d_x.ptr, d_w.ptr, d_b.ptr, d_out.ptr, d_mean.ptr, d_rstd.ptr, shape);
    });
    expect_same_bits(cuda::to_host(d_out.ptr, n), out, "layernorm out");
    expect_same_bits(cuda::to_host(d_rstd.ptr, rows), rstd, "layernorm rstd");
    rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), shape);
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::rmsnorm_forward(ws, bytes, d_x.ptr, d_w.ptr, d_out.ptr, d_rstd.ptr, shape);
    });
    expect_same_bits(cuda::to_host(d_out.ptr, n), out, "rmsnorm out");
    expect_same_bits(cuda::to_host(d_rstd.ptr, rows), rstd, "rmsnorm rstd");
    rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), shape);
    with_workspace([&](void* ws, std::size_t& bytes) {
      cuda::rmsnorm_backward(ws, bytes, d_dy.ptr, d_x.ptr, d_w.ptr, d_rstd.ptr, d_dx.ptr, d_dw.ptr, shape);
    });
    expect_same_bits(cuda::to_host(d_dx.ptr, n), dx, "rmsnorm dx");
    expect_same_bits(cuda::to_host(d_dw.ptr, c), dweight, "rmsnorm dweight");
    softmax_forward(x.data(), out.data(), shape);
    with_workspace([&](void* ws, std::size_t& bytes) { cuda::softmax_forward(ws, bytes, d_x.ptr, d_out.ptr, shape); });
    expect_same_bits(cuda::to_host(d_out.ptr, n), out, "softmax out");
  }
}

// The workspace idiom and the argument checks (no device needed): the size query answers the column reductions'
// roots (at least min_workspace_bytes); bad shapes and options throw naming the field.
TEST(LayerNormBackwardApi, SizeQueryAndArgumentChecks) {
  std::size_t bytes = 0;
  const float* none = nullptr;
  cuda::layernorm_backward<float>(nullptr, bytes, none, none, none, none, none, nullptr, nullptr, nullptr,
                                  dense_rows(1 << 16, 1024));
  EXPECT_GE(bytes, std::size_t{(1u << 16) >> 10} * 1024 * sizeof(float));
  cuda::layernorm_backward<float>(nullptr, bytes, none, none, none, none, none, nullptr, nullptr, nullptr,
                                  dense_rows(3, 5));
  EXPECT_GE(bytes, cuda::min_workspace_bytes);
  EXPECT_THROW(cuda::layernorm_backward<float>(nullptr, bytes, none, none, none, none, none, nullptr, nullptr, nullptr,
                                               row_shape{4, 8, 8, nullptr, 8}),
               invalid_argument);
  EXPECT_THROW(cuda::layernorm_backward<float>(nullptr, bytes, none, none, none, none, none, nullptr, nullptr, nullptr,
                                               row_shape{4, 8, 7}),
               invalid_argument);
  EXPECT_THROW(cuda::layernorm_backward<float>(nullptr, bytes, none, none, none, none, none, nullptr, nullptr, nullptr,
                                               dense_rows(4, 8), nullptr, {.method = sum_method::tree_neumaier}),
               invalid_argument);
  EXPECT_THROW(cuda::layernorm_backward<float>(nullptr, bytes, none, none, none, none, none, nullptr, nullptr, nullptr,
                                               dense_rows(4, 8), nullptr, {.block_threads = 48}),
               invalid_argument);
  unsigned char ws[64];
  std::size_t given = sizeof ws;
  EXPECT_THROW(cuda::layernorm_backward<float>(ws, given, none, none, none, none, none, nullptr, nullptr, nullptr,
                                               dense_rows(4, 8)),
               invalid_argument);  // null data with a non-empty shape
}

}  // namespace
