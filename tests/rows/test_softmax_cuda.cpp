// cuda::log_softmax_forward, softmax_backward, log_softmax_backward and row_logsumexp_backward against their CPU twins
// (detred/norms.hpp) bit for bit, over full rows of many widths (around every segment and tile boundary), strided,
// per-row-length and causal rows, misaligned starts, launch shapes (row_options block_threads x grid_blocks) and
// float / bfloat16 / half; batch invariance on the device (the first k rows give the bits of a batch of k; a row's bits
// do not move with its position). Label gpu: skipped, saying why, without a device; the argument checks need none and
// always run.
#include <gtest/gtest.h>

#include <cuda_runtime.h>  // the typed cudaMalloc that tests/support/device_array.hpp uses

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "detred/rows.hpp"
#include "detred/rows/specified_math.hpp"
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

// The four calls on one shape (host_shape.lengths a host pointer, device_shape.lengths its device copy), inputs
// `offset` elements past an aligned start, every output against the twin's bits (entries past a row's length hold the
// fill on both sides).
template <class T>
void softmax_family_equal_cpu(const row_shape& host_shape, const row_shape& device_shape, std::uint64_t offset,
                              const cuda::row_options& launch, const char* name) {
  SCOPED_TRACE(testing::Message() << float_traits<T>::name << " " << name << " " << host_shape.rows << " x "
                                  << host_shape.cols << " stride " << host_shape.stride << " period "
                                  << host_shape.causal_period << " offset " << offset << " block "
                                  << launch.block_threads << " grid " << launch.grid_blocks);
  const std::uint64_t rows = host_shape.rows, n = rows * host_shape.stride;
  const std::vector<T> x = test::values_in<T>(n, n + 1, -8, 8), dy = test::values_in<T>(n, n + 2, -1, 1);
  const std::vector<T> fill(n, test::make<T>(3.0));
  std::vector<float> lse(rows), dout(rows);
  for (std::uint64_t r = 0; r < rows; ++r) dout[r] = 0.25f + float(r % 5);
  row_logsumexp(x.data(), lse.data(), host_shape);
  std::vector<T> y = fill, ly = fill, dx = fill, ldx = fill, edx = fill;
  softmax_forward(x.data(), y.data(), host_shape);
  log_softmax_forward(x.data(), ly.data(), host_shape);
  softmax_backward(y.data(), dy.data(), dx.data(), host_shape);
  log_softmax_backward(ly.data(), dy.data(), ldx.data(), host_shape);
  row_logsumexp_backward(x.data(), lse.data(), dout.data(), edx.data(), host_shape);

  device_array<T> d_x(n + offset + 1), d_y(n + offset + 1), d_ly(n + offset + 1), d_dy(n + offset + 1),
      d_out(n + offset + 1);
  device_array<float> d_lse(rows + 1), d_dout(rows + 1);
  const T* px = to_device(d_x, x, offset);
  const T* py = to_device(d_y, y, offset);
  const T* ply = to_device(d_ly, ly, offset);
  const T* pdy = to_device(d_dy, dy, offset);
  to_device(d_lse, lse), to_device(d_dout, dout);
  const auto check_call = [&](const std::vector<T>& expected, const char* what, const auto& call) {
    T* out = to_device(d_out, fill, offset);
    with_workspace([&](void* ws, std::size_t& bytes) { call(ws, bytes, out); });
    const std::vector<T> got = cuda::to_host(out, n);
    EXPECT_EQ(test::first_bit_difference(got.data(), expected.data(), n), -1) << what << ": first differing element";
  };
  check_call(ly, "log_softmax_forward", [&](void* ws, std::size_t& bytes, T* out) {
    cuda::log_softmax_forward(ws, bytes, px, out, device_shape, nullptr, launch);
  });
  check_call(dx, "softmax_backward", [&](void* ws, std::size_t& bytes, T* out) {
    cuda::softmax_backward(ws, bytes, py, pdy, out, device_shape, nullptr, launch);
  });
  check_call(ldx, "log_softmax_backward", [&](void* ws, std::size_t& bytes, T* out) {
    cuda::log_softmax_backward(ws, bytes, ply, pdy, out, device_shape, nullptr, launch);
  });
  check_call(edx, "row_logsumexp_backward", [&](void* ws, std::size_t& bytes, T* out) {
    cuda::row_logsumexp_backward(ws, bytes, px, d_lse.ptr, d_dout.ptr, out, device_shape, nullptr, launch);
  });
}

template <class T>
void full_rows_equal_cpu(std::uint64_t rows, std::uint64_t c, std::uint64_t stride, std::uint64_t offset,
                         const cuda::row_options& launch = {}) {
  const row_shape shape{rows, c, stride};
  softmax_family_equal_cpu<T>(shape, shape, offset, launch, "full");
}

template <class T>
void causal_rows_equal_cpu(std::uint64_t blocks, std::uint64_t period, std::uint64_t cols,
                           const cuda::row_options& launch = {}) {
  const row_shape shape{blocks * period, cols, cols, nullptr, period};
  softmax_family_equal_cpu<T>(shape, shape, 0, launch, "causal");
}

// Rows of every length of boundary_lengths<T>() (around every segment and tile of the warp's row reduction).
template <class T>
void length_rows_equal_cpu(std::uint64_t offset) {
  const std::vector<std::int32_t> lengths = test::boundary_lengths<T>();
  std::int32_t longest = 0;
  for (std::int32_t l : lengths) longest = l > longest ? l : longest;
  device_array<std::int32_t> d_lengths(lengths.size());
  to_device(d_lengths, lengths);
  const row_shape host{lengths.size(), std::uint64_t(longest), std::uint64_t(longest), lengths.data()};
  row_shape device = host;
  device.lengths = d_lengths.ptr;
  softmax_family_equal_cpu<T>(host, device, offset, {}, "lengths");
}

TEST(SoftmaxFamilyCuda, FullAndStridedRowsSameBitsAsTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  for (std::uint64_t c : {1ull, 7ull, 64ull, 257ull, 1000ull, 4096ull, 8195ull, 32768ull}) {
    if (quick && c != 257 && c != 8195) continue;
    full_rows_equal_cpu<float>(c > 4096 ? 9 : 37, c, c, 0);
    full_rows_equal_cpu<bfloat16>(c > 4096 ? 9 : 37, c, c, 0);
    full_rows_equal_cpu<half>(c > 4096 ? 9 : 37, c, c, 0);
  }
  full_rows_equal_cpu<float>(13, 100, 104, 0);     // strided, aligned rows
  full_rows_equal_cpu<float>(13, 100, 101, 0);     // strided, unaligned rows
  full_rows_equal_cpu<bfloat16>(13, 250, 256, 1);  // misaligned start
  full_rows_equal_cpu<half>(13, 13, 24, 3);
}

TEST(SoftmaxFamilyCuda, CausalAndLengthRowsSameBitsAsTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  causal_rows_equal_cpu<float>(3, 64, 64);
  causal_rows_equal_cpu<bfloat16>(2, 1024, 1024);
  causal_rows_equal_cpu<half>(2, 300, 304);  // cols above the period
  if (!quick) {
    causal_rows_equal_cpu<float>(1, 4200, 4200);  // rows past a warp tile
    length_rows_equal_cpu<float>(0);
    length_rows_equal_cpu<bfloat16>(1);
  }
  length_rows_equal_cpu<half>(0);
}

TEST(SoftmaxFamilyCuda, SameBitsOverLaunchShapes) {
  DETRED_SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  for (int threads : {32, 64, 128, 256})
    for (int grid : {0, 1, 5, 11}) {
      if (quick && grid != 1) continue;
      const cuda::row_options launch{.block_threads = threads, .grid_blocks = grid};
      full_rows_equal_cpu<bfloat16>(70, 768, 768, 0, launch);
      full_rows_equal_cpu<float>(40, 9000, 9000, 0, launch);
      causal_rows_equal_cpu<half>(2, 100, 100, launch);
    }
}

// The shared-memory block-a-row kernel (src/cuda/rows/block_row_logsumexp.cuh) behind softmax_forward,
// log_softmax_forward and row_logsumexp of rows of two 4 KiB regions or more: the CPU's bits for every block size of
// the tuning (warps taking several regions each, or idle), rows with a tail past the last region, rows that end in
// a partial 16-byte vector, and rows too long for shared memory (the one-warp-a-row kernels).
template <class T>
void block_row_calls_equal_cpu(std::uint64_t rows, std::uint64_t c, std::uint64_t stride) {
  SCOPED_TRACE(testing::Message() << float_traits<T>::name << " " << rows << " x " << c << " stride " << stride);
  const row_shape shape{rows, c, stride};
  const std::uint64_t n = rows * stride;
  const std::vector<T> x = test::values_in<T>(n, c + 11, -30, 30), fill(n, test::make<T>(3.0));
  std::vector<T> y = fill, ly = fill;
  std::vector<float> lse(rows);
  softmax_forward(x.data(), y.data(), shape);
  log_softmax_forward(x.data(), ly.data(), shape);
  row_logsumexp(x.data(), lse.data(), shape);
  device_array<T> d_x(n), d_out(n);
  device_array<float> d_lse(rows);
  to_device(d_x, x);
  to_device(d_out, fill);
  with_workspace([&](void* ws, std::size_t& bytes) { cuda::softmax_forward(ws, bytes, d_x.ptr, d_out.ptr, shape); });
  EXPECT_EQ(test::first_bit_difference(cuda::to_host(d_out.ptr, n).data(), y.data(), n), -1) << "softmax_forward";
  to_device(d_out, fill);
  with_workspace(
      [&](void* ws, std::size_t& bytes) { cuda::log_softmax_forward(ws, bytes, d_x.ptr, d_out.ptr, shape); });
  EXPECT_EQ(test::first_bit_difference(cuda::to_host(d_out.ptr, n).data(), ly.data(), n), -1) << "log_softmax_forward";
  with_workspace([&](void* ws, std::size_t& bytes) { cuda::row_logsumexp(ws, bytes, d_x.ptr, d_lse.ptr, shape); });
  EXPECT_EQ(test::first_bit_difference(cuda::to_host(d_lse.ptr, rows).data(), lse.data(), rows), -1) << "row_logsumexp";
}

TEST(SoftmaxFamilyCuda, SharedMemoryRowsSameBitsOverBlockSizes) {
  DETRED_SKIP_WITHOUT_GPU();
  const bool quick = test::rows_quick();
  for (const char* threads : {"", "rows.block_threads=64", "rows.block_threads=256", "rows.block_threads=1024"}) {
    if (quick && std::string(threads) == "rows.block_threads=256") continue;
    SCOPED_TRACE(threads);
    ASSERT_TRUE(cuda::detail::set_tuning_overrides(threads));
    block_row_calls_equal_cpu<float>(5, 32768, 32768);
    block_row_calls_equal_cpu<float>(7, 2048 * 9 + 517, 2048 * 10);  // a tail past the last region
    block_row_calls_equal_cpu<bfloat16>(6, 32768 + 3, 32768 + 8);    // a partial last vector
    block_row_calls_equal_cpu<half>(3, 100000, 100000);              // 49 regions
    if (!quick) {
      block_row_calls_equal_cpu<float>(3, 56000, 56000);     // near the shared-memory limit
      block_row_calls_equal_cpu<float>(2, 70000, 70000);     // past it: one warp a row
      block_row_calls_equal_cpu<bfloat16>(300, 4096, 4096);  // more rows than a wave of blocks
    }
  }
  ASSERT_TRUE(cuda::detail::set_tuning_overrides(""));
}

// The kernels' exponentials (the shared-memory kernel's exp_float_lite_one_step where a row's minimum less its
// maximum is at least exp_float_lite_one_step_min, exp_float_lite_nonpositive otherwise) and their two roundings (the
// hardware's where the row's maximum is finite, T::from_float otherwise) against the CPU twins, on rows of c elements
// at a stride of whole 16-byte vectors (8192: the shared-memory kernel; 1024 and 1021: the warp-resident one, whole
// segments only and a last vector the row's end cuts, whose entries past the row must stay untouched): rows whose
// ranges lie just inside and just outside the one-step bound, rows with -Inf, +Inf and NaN entries, all -Inf, and
// rows whose softmax outputs are subnormal in T or round to zero.
template <class T>
void row_ranges_equal_cpu(std::uint64_t c) {
  const std::uint64_t stride = (c + 7) / 8 * 8;
  const double bound = -double(specified::exp_float_lite_one_step_min);
  const std::vector<std::vector<double>> rows = {
      {-40.0, 40.0},                   // range 80: one step
      {-50.0, 50.0},                   // range 100: general
      {-bound / 2, bound / 2},         // range exactly at the bound
      {-bound / 2 - 0.25, bound / 2},  // just past it
      {-8.0, 8.0, -INFINITY},          // -Inf entries: general
      {-INFINITY},                     // every entry -Inf: NaN rows
      {-8.0, 8.0, NAN},                // a NaN
      {-8.0, 8.0, INFINITY},           // +Inf
      {-87.5, 0.0},                    // past the bound, where exp_float_lite's results turn subnormal
      {-86.0, 0.0},                    // softmax outputs near float's least normal
      {-20.0, 0.0, 14.0},              // 16-bit softmax outputs underflowing
  };
  std::vector<T> x;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const std::vector<double>& v = rows[r];
    for (std::uint64_t j = 0; j < stride; ++j) {
      double value;
      if (j >= c)
        value = 5.0;  // between the row's end and the next row: never read
      else if (v.size() == 1)
        value = v[0];
      else if (v.size() == 3 && j % 1000 == 7)
        value = v[2];  // the special entry, a few times a row
      else
        value = v[0] + (v[1] - v[0]) * double((j * 2654435761u) % 4096) / 4095.0;  // both ends included
      x.push_back(test::make<T>(value));
    }
  }
  const std::uint64_t n = x.size(), count = rows.size();
  const row_shape shape{count, c, stride};
  const std::vector<T> fill(n, test::make<T>(3.0));
  std::vector<T> y = fill, ly = fill;
  softmax_forward(x.data(), y.data(), shape);
  log_softmax_forward(x.data(), ly.data(), shape);
  device_array<T> d_x(n), d_out(n);
  to_device(d_x, x);
  for (int log = 0; log < 2; ++log) {
    to_device(d_out, fill);
    with_workspace([&](void* ws, std::size_t& bytes) {
      if (log)
        cuda::log_softmax_forward(ws, bytes, d_x.ptr, d_out.ptr, shape);
      else
        cuda::softmax_forward(ws, bytes, d_x.ptr, d_out.ptr, shape);
    });
    const std::vector<T> got = cuda::to_host(d_out.ptr, n);
    const std::int64_t at = test::first_bit_difference(got.data(), (log ? ly : y).data(), n);
    EXPECT_EQ(at, -1) << float_traits<T>::name << (log ? " log_softmax" : " softmax") << " rows of " << c
                      << ": first difference in row " << (at < 0 ? 0 : at / std::int64_t(stride));
  }
}

TEST(SoftmaxFamilyCuda, SharedMemoryRowsOfEveryRangeSameBitsAsTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  row_ranges_equal_cpu<float>(8192);
  row_ranges_equal_cpu<bfloat16>(8192);
  row_ranges_equal_cpu<half>(8192);
}

TEST(SoftmaxFamilyCuda, WarpResidentRowsOfEveryRangeSameBitsAsTheCpu) {
  DETRED_SKIP_WITHOUT_GPU();
  for (const std::uint64_t c : {1024, 1021}) {
    row_ranges_equal_cpu<float>(c);
    row_ranges_equal_cpu<bfloat16>(c);
    row_ranges_equal_cpu<half>(c);
  }
}

// The first k rows of a batch give the bits of a batch of k, and the same rows after other rows give the same bits,
// for every call of the family (causal rows shifted by whole periods, so that each keeps its length).
template <class T>
void device_batch_invariant(std::uint64_t rows, std::uint64_t c, std::uint64_t period, std::uint64_t shift) {
  SCOPED_TRACE(testing::Message() << float_traits<T>::name << " C " << c << " period " << period);
  const std::uint64_t n = (rows + shift) * c;
  const std::vector<T> x = test::values_in<T>(n, 1, -8, 8), dy = test::values_in<T>(n, 2, -1, 1);
  std::vector<float> lse(rows + shift), dout(rows + shift);
  for (std::uint64_t r = 0; r < rows + shift; ++r) lse[r] = 4.0f + float(r % 3), dout[r] = 1.0f + float(r % 2);
  device_array<T> d_x(n), d_dy(n), d_out(n);
  device_array<float> d_lse(rows + shift), d_dout(rows + shift);
  to_device(d_x, x), to_device(d_dy, dy), to_device(d_lse, lse), to_device(d_dout, dout);
  // Call `call` of the family on rows [first, first + k).
  const auto run = [&](int call, std::uint64_t first, std::uint64_t k) {
    cuda::check(cudaMemset(d_out.ptr, 0, n * sizeof(T)), "memset");
    const row_shape shape{k, c, c, nullptr, period};
    const T* a = d_x.ptr + first * c;
    const T* g = d_dy.ptr + first * c;
    with_workspace([&](void* ws, std::size_t& bytes) {
      if (call == 0) cuda::log_softmax_forward(ws, bytes, a, d_out.ptr, shape);
      if (call == 1) cuda::softmax_backward(ws, bytes, a, g, d_out.ptr, shape);
      if (call == 2) cuda::log_softmax_backward(ws, bytes, a, g, d_out.ptr, shape);
      if (call == 3)
        cuda::row_logsumexp_backward(ws, bytes, a, d_lse.ptr + first, d_dout.ptr + first, d_out.ptr, shape);
    });
    return cuda::to_host(d_out.ptr, k * c);
  };
  for (int call = 0; call < 4; ++call) {
    const std::vector<T> all = run(call, shift, rows);
    for (std::uint64_t k : {std::uint64_t{1}, std::uint64_t{5}, std::uint64_t{64}, rows - 1}) {
      const std::vector<T> part = run(call, shift, k);
      ASSERT_EQ(test::first_bit_difference(part.data(), all.data(), k * c), -1) << "call " << call << " k " << k;
    }
    const std::vector<T> shifted = run(call, 0, rows + shift);
    ASSERT_EQ(test::first_bit_difference(shifted.data() + shift * c, all.data(), rows * c), -1)
        << "call " << call << " shifted";
  }
}

TEST(SoftmaxFamilyCuda, BatchInvariantAndPositionFree) {
  DETRED_SKIP_WITHOUT_GPU();
  device_batch_invariant<bfloat16>(257, 4096, 0, 3);
  device_batch_invariant<float>(130, 1000, 0, 1);
  device_batch_invariant<half>(256, 128, 128, 128);
}

// The workspace idiom and the argument checks (no device needed).
TEST(SoftmaxFamilyApi, SizeQueryAndArgumentChecks) {
  std::size_t bytes = 0;
  const float* none = nullptr;
  float* out = nullptr;
  cuda::softmax_backward<float>(nullptr, bytes, none, none, out, dense_rows(100, 100));
  EXPECT_EQ(bytes, cuda::min_workspace_bytes);
  unsigned char ws[64];
  std::size_t given = sizeof ws;
  EXPECT_THROW(cuda::log_softmax_forward<float>(ws, given, none, out, dense_rows(2, 3)), invalid_argument);
  EXPECT_THROW(cuda::log_softmax_backward<float>(ws, given, none, none, out, row_shape{2, 3, 2}), invalid_argument);
  EXPECT_THROW(
      cuda::row_logsumexp_backward<float>(ws, given, none, nullptr, nullptr, out, row_shape{2, 3, 3, nullptr, 4}),
      invalid_argument);
  EXPECT_THROW(
      cuda::softmax_backward<float>(ws, given, none, none, out, dense_rows(2, 3), nullptr, {.grid_blocks = -1}),
      invalid_argument);
  // Nothing to read or write: no pointer is needed.
  EXPECT_NO_THROW(cuda::softmax_backward<float>(ws, given, none, none, out, dense_rows(0, 3)));
}

}  // namespace
