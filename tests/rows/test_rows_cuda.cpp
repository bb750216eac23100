// The GPU's row and column reductions (detred/cuda/rows.hpp) against their CPU twins (detred/rows.hpp), bit for bit,
// and batch invariance: f(x[:k]) == f(x)[:k] for many k, rows permuted, rows placed at other positions among other
// rows, padding rows of specials after them; over at least 20 launch configurations, unaligned rows, row lengths
// around every tile boundary, cols from 1 to 2^20, special values. Label gpu: skipped, saying why, without a device.
// Plain C++ against the host API.
#include <gtest/gtest.h>

#include <cuda_runtime.h>  // the typed cudaMalloc that tests/support/device_array.hpp uses

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/rows.hpp"
#include "tests/rows/row_inputs.hpp"
#include "tests/support/device_array.hpp"

namespace {
using namespace detred;
using test::device_array;

enum class op { sum, sum_neumaier, max, mean, variance, logsumexp };
constexpr op all_ops[] = {op::sum, op::sum_neumaier, op::max, op::mean, op::variance, op::logsumexp};
const char* name(op o) {
  switch (o) {
    case op::sum:
      return "sum";
    case op::sum_neumaier:
      return "sum_neumaier";
    case op::max:
      return "max";
    case op::mean:
      return "mean";
    case op::variance:
      return "variance";
    default:
      return "logsumexp";
  }
}

template <class T>
std::vector<float> cpu_rows(op o, const std::vector<T>& x, const row_shape& shape) {
  std::vector<float> out(shape.rows), other(shape.rows);
  switch (o) {
    case op::sum:
      row_sum(x.data(), shape, out.data(), sum_method::tree);
      break;
    case op::sum_neumaier:
      row_sum(x.data(), shape, out.data(), sum_method::tree_neumaier);
      break;
    case op::max:
      row_max(x.data(), shape, out.data());
      break;
    case op::mean:
      row_mean_variance(x.data(), shape, out.data(), other.data());
      break;
    case op::variance:
      row_mean_variance(x.data(), shape, other.data(), out.data());
      break;
    case op::logsumexp:
      row_logsumexp(x.data(), shape, out.data());
      break;
  }
  return out;
}

// The GPU's results, x copied to the device at an element offset (offset 1: rows not 16-byte aligned).
template <class T>
std::vector<float> gpu_rows(op o, const std::vector<T>& x, row_shape shape, const cuda::row_launch& launch = {},
                            std::size_t offset = 0) {
  device_array<T> dx(x.size() + offset + 1);
  device_array<float> dout(shape.rows + 1), dother(shape.rows + 1);
  cuda::check(cudaMemcpy(dx.ptr + offset, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice), "copy in");
  std::vector<std::int32_t> lengths;
  device_array<std::int32_t> dlengths(shape.rows + 1);
  if (shape.lengths != nullptr) {
    cuda::check(cudaMemcpy(dlengths.ptr, shape.lengths, shape.rows * 4, cudaMemcpyHostToDevice), "copy lengths");
    shape.lengths = dlengths.ptr;
  }
  const T* d = dx.ptr + offset;
  switch (o) {
    case op::sum:
      cuda::row_sum(d, shape, dout.ptr, sum_method::tree, nullptr, launch);
      break;
    case op::sum_neumaier:
      cuda::row_sum(d, shape, dout.ptr, sum_method::tree_neumaier, nullptr, launch);
      break;
    case op::max:
      cuda::row_max(d, shape, dout.ptr, nullptr, launch);
      break;
    case op::mean:
      cuda::row_mean_variance(d, shape, dout.ptr, dother.ptr, nullptr, launch);
      break;
    case op::variance:
      cuda::row_mean_variance(d, shape, dother.ptr, dout.ptr, nullptr, launch);
      break;
    case op::logsumexp:
      cuda::row_logsumexp(d, shape, dout.ptr, nullptr, launch);
      break;
  }
  std::vector<float> out(shape.rows);
  cuda::check(cudaMemcpy(out.data(), dout.ptr, shape.rows * sizeof(float), cudaMemcpyDeviceToHost), "copy out");
  return out;
}

// DETRED_GPU_TEST_QUICK=1 (for compute-sanitizer, which slows kernels 10-100x): fewer launches, types and sizes.
bool quick() {
  const char* q = std::getenv("DETRED_GPU_TEST_QUICK");
  return q != nullptr && q[0] == '1';
}

#define SKIP_WITHOUT_GPU() \
  if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device: the GPU row reductions are not tested here"

// 20 launch configurations: block sizes 32 .. 256, one row per warp or few blocks (grid-stride).
std::vector<cuda::row_launch> launches() {
  std::vector<cuda::row_launch> l;
  for (int threads : {32, 64, 128, 256})
    for (int grid : {0, 1, 3, 7, 17}) l.push_back({threads, grid});
  if (quick()) l.resize(3);
  return l;
}

template <class T>
void expect_bits_equal(const std::vector<float>& gpu, const std::vector<float>& cpu, const char* what,
                       const std::vector<std::int32_t>* lengths = nullptr) {
  ASSERT_EQ(gpu.size(), cpu.size());
  int failures = 0;
  for (std::size_t r = 0; r < gpu.size() && failures < 10; ++r)
    if (bits_of(gpu[r]) != bits_of(cpu[r])) {
      ++failures;
      ADD_FAILURE() << what << " row " << r << (lengths ? " length " + std::to_string((*lengths)[r]) : "") << ": GPU "
                    << std::hexfloat << gpu[r] << " CPU " << cpu[r];
    }
}

template <class T>
void boundary_lengths_equal_cpu(bool specials) {
  std::vector<std::int32_t> lengths = test::boundary_lengths<T>();
  const std::int32_t longest = *std::max_element(lengths.begin(), lengths.end());
  const row_shape shape{lengths.size(), 0, std::uint64_t(longest) + 8, lengths.data(), 0};
  const std::vector<T> x = test::random_values<T>(shape.rows * shape.stride, 11, specials);
  for (op o : all_ops) {
    const std::vector<float> cpu = cpu_rows(o, x, shape);
    expect_bits_equal<T>(gpu_rows(o, x, shape), cpu, name(o), &lengths);
    expect_bits_equal<T>(gpu_rows(o, x, shape, {128, 5}, 1), cpu, name(o), &lengths);  // unaligned rows
  }
}

TEST(RowsCuda, EveryBoundaryLengthEqualsTheCpuBits) {
  SKIP_WITHOUT_GPU();
  boundary_lengths_equal_cpu<float>(false);
  if (quick()) return;
  boundary_lengths_equal_cpu<bfloat16>(false);
  boundary_lengths_equal_cpu<half>(false);
}

TEST(RowsCuda, SpecialValuesEqualTheCpuBits) {
  SKIP_WITHOUT_GPU();
  boundary_lengths_equal_cpu<float>(true);
  if (quick()) return;
  boundary_lengths_equal_cpu<bfloat16>(true);
  boundary_lengths_equal_cpu<half>(true);
}

template <class T>
void launch_configurations_equal_cpu() {
  for (std::uint64_t cols : {1ull, 5ull, 256ull, 1000ull, 4096ull, 4099ull, 12345ull}) {
    const row_shape shape{67, cols, cols + (cols % 2)};
    const std::vector<T> x = test::random_values<T>(shape.rows * shape.stride, cols);
    for (op o : all_ops) {
      const std::vector<float> cpu = cpu_rows(o, x, shape);
      for (const cuda::row_launch& l : launches()) {
        SCOPED_TRACE(testing::Message() << name(o) << " cols " << cols << " block " << l.block_threads << " grid "
                                        << l.grid_blocks);
        expect_bits_equal<T>(gpu_rows(o, x, shape, l), cpu, name(o));
      }
    }
  }
}

TEST(RowsCuda, TwentyLaunchConfigurationsEqualTheCpuBits) {
  SKIP_WITHOUT_GPU();
  launch_configurations_equal_cpu<float>();
  if (quick()) return;
  launch_configurations_equal_cpu<bfloat16>();
  launch_configurations_equal_cpu<half>();
}

TEST(RowsCuda, ColsFromOneToTwoToThe20) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t most = quick() ? (1u << 13) : (1u << 20);
  for (std::uint64_t cols = 1; cols <= most; cols *= 2) {
    for (std::uint64_t c : {cols - 1, cols, cols + 1}) {
      if (c == 0 || c > (1u << 20)) continue;
      const row_shape shape{3, c, c};
      const std::vector<float> x = test::random_values<float>(3 * c, c);
      for (op o : {op::sum, op::sum_neumaier, op::variance, op::logsumexp})
        expect_bits_equal<float>(gpu_rows(o, x, shape), cpu_rows(o, x, shape), name(o));
      const std::vector<bfloat16> y = test::random_values<bfloat16>(3 * c, c);
      expect_bits_equal<bfloat16>(gpu_rows(op::sum, y, shape), cpu_rows(op::sum, y, shape), "bf16 sum");
    }
  }
}

// f(x[:k]) == f(x)[:k]; rows permuted; the same rows among others at another position; padding rows of specials.
template <class T>
void batch_invariance(std::uint64_t cols, std::uint64_t period) {
  const std::uint64_t rows = 300;
  const row_shape full{rows, cols, cols, nullptr, period};
  const std::vector<T> x = test::random_values<T>(rows * cols, 99 + cols);
  for (op o : all_ops) {
    SCOPED_TRACE(testing::Message() << name(o) << " cols " << cols << " causal period " << period);
    const std::vector<float> all = gpu_rows(o, x, full);
    for (std::uint64_t k : {1ull, 2ull, 3ull, 7ull, 8ull, 31ull, 32ull, 33ull, 64ull, 100ull, 255ull, 256ull, 299ull}) {
      row_shape prefix = full;
      prefix.rows = k;
      const std::vector<float> part = gpu_rows(o, std::vector<T>(x.begin(), x.begin() + k * cols), prefix);
      for (std::uint64_t r = 0; r < k; ++r) ASSERT_EQ(bits_of(part[r]), bits_of(all[r])) << "k " << k << " row " << r;
    }
    if (period != 0) continue;  // for causal rows the length is tied to the position
    std::vector<std::uint64_t> perm(rows);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937_64(cols));
    std::vector<T> permuted(x.size());
    for (std::uint64_t r = 0; r < rows; ++r) std::copy_n(x.begin() + perm[r] * cols, cols, permuted.begin() + r * cols);
    const std::vector<float> p = gpu_rows(o, permuted, full);
    for (std::uint64_t r = 0; r < rows; ++r) ASSERT_EQ(bits_of(p[r]), bits_of(all[perm[r]])) << "permuted row " << r;
    // 57 rows of other data, then x, then 41 padding rows of specials.
    const std::vector<T> before = test::random_values<T>(57 * cols, 5),
                         after = test::random_values<T>(41 * cols, 6, true);
    std::vector<T> embedded(before);
    embedded.insert(embedded.end(), x.begin(), x.end());
    embedded.insert(embedded.end(), after.begin(), after.end());
    row_shape big = full;
    big.rows = 57 + rows + 41;
    const std::vector<float> e = gpu_rows(o, embedded, big, {64, 0});
    for (std::uint64_t r = 0; r < rows; ++r) ASSERT_EQ(bits_of(e[57 + r]), bits_of(all[r])) << "embedded row " << r;
  }
}

TEST(RowsCuda, BatchInvariance) {
  SKIP_WITHOUT_GPU();
  for (std::uint64_t cols : {1ull, 100ull, 768ull, 4096ull, 5000ull}) {
    if (quick() && cols > 768) break;
    batch_invariance<float>(cols, 0);
    batch_invariance<bfloat16>(cols, 0);
  }
  batch_invariance<float>(300, 300);  // causal rows 1 .. 300
  batch_invariance<bfloat16>(300, 300);
}

template <class T>
void columns_equal_cpu(std::uint64_t rows, std::uint64_t cols, std::uint64_t stride, std::size_t offset) {
  const std::vector<T> x = test::random_values<T>(rows * stride + 1, rows * 7 + cols);
  std::vector<float> cpu(cols);
  column_sum(x.data(), rows, cols, stride, cpu.data());
  device_array<T> dx(x.size() + offset + 1);
  cuda::check(cudaMemcpy(dx.ptr + offset, x.data(), x.size() * sizeof(T), cudaMemcpyHostToDevice), "copy in");
  device_array<float> dout(cols);
  int configurations = 0;
  const std::vector<int> levels = quick() ? std::vector<int>{0, 3, 9} : std::vector<int>{0, 3, 4, 5, 8, 9, 10, 13};
  for (int level : levels)
    for (int threads : {0, 32, 256, 512})
      for (int grid_rows : {0, 1, 5}) {
        const cuda::column_launch l{level, threads, grid_rows};
        const std::size_t bytes = cuda::column_sum_workspace_bytes(rows, cols, l);
        device_array<unsigned char> ws(bytes + 1);
        cuda::column_sum(dx.ptr + offset, rows, cols, stride, dout.ptr, ws.ptr, bytes, nullptr, l);
        std::vector<float> gpu(cols);
        cuda::check(cudaMemcpy(gpu.data(), dout.ptr, cols * 4, cudaMemcpyDeviceToHost), "copy out");
        SCOPED_TRACE(testing::Message() << rows << " x " << cols << " stride " << stride << " offset " << offset
                                        << " level " << level << " threads " << threads << " grid " << grid_rows);
        expect_bits_equal<T>(gpu, cpu, "column_sum");
        ++configurations;
      }
  EXPECT_GE(configurations, quick() ? 20 : 90);
}

TEST(ColumnsCuda, EveryLaunchEqualsTheCpuBits) {
  SKIP_WITHOUT_GPU();
  for (std::uint64_t rows : {0ull, 1ull, 7ull, 8ull, 100ull, 1024ull, 4099ull, 20000ull}) {
    columns_equal_cpu<float>(rows, 64, 64, 0);
    columns_equal_cpu<float>(rows, 37, 40, 1);
    columns_equal_cpu<bfloat16>(rows, 136, 136, 0);
    columns_equal_cpu<half>(rows, 24, 32, 0);
  }
}

}  // namespace
