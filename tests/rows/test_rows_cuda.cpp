// The GPU's row and column reductions (detred/cuda/rows.hpp) against their CPU twins (detred/rows.hpp), bit for bit,
// and batch invariance: f(x[:k]) == f(x)[:k] for many k, rows permuted, rows placed at other positions among other
// rows, padding rows of specials after them; over at least 20 launch configurations, unaligned rows, row lengths
// around every tile boundary, cols from 1 to 2^20, special values. Label gpu: the GPU tests skip, saying why, without
// a device; the RowsApi tests (argument checks of the call shape, on both twins) need none. Plain C++ against the host
// API.
#include <gtest/gtest.h>

#include <cuda_runtime.h>  // the typed cudaMalloc that tests/support/device_array.hpp uses

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "detred/cuda/error.hpp"
#include "detred/cuda/norms.hpp"
#include "detred/cuda/rows.hpp"
#include "detred/cuda/workspace.hpp"
#include "detred/norms.hpp"
#include "detred/rows.hpp"
#include "tests/rows/row_inputs.hpp"
#include "tests/support/device_array.hpp"
#include "tests/support/device_rows.hpp"

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
      row_sum(x.data(), out.data(), shape, sum_method::tree);
      break;
    case op::sum_neumaier:
      row_sum(x.data(), out.data(), shape, sum_method::tree_neumaier);
      break;
    case op::max:
      row_max(x.data(), out.data(), shape);
      break;
    case op::mean:
      row_mean_variance(x.data(), out.data(), other.data(), shape);
      break;
    case op::variance:
      row_mean_variance(x.data(), other.data(), out.data(), shape);
      break;
    case op::logsumexp:
      row_logsumexp(x.data(), out.data(), shape);
      break;
  }
  return out;
}

// The GPU's results, x copied to the device at an element offset (offset 1: rows not 16-byte aligned).
template <class T>
std::vector<float> gpu_rows(op o, const std::vector<T>& x, row_shape shape, cuda::row_options options = {},
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
  options.method = o == op::sum_neumaier ? sum_method::tree_neumaier : sum_method::tree;
  const std::size_t bytes = test::with_workspace([&](void* ws, std::size_t& ws_bytes) {
    switch (o) {
      case op::sum:
      case op::sum_neumaier:
        cuda::row_sum(ws, ws_bytes, d, dout.ptr, shape, nullptr, options);
        break;
      case op::max:
        cuda::row_max(ws, ws_bytes, d, dout.ptr, shape, nullptr, options);
        break;
      case op::mean:
        cuda::row_mean_variance(ws, ws_bytes, d, dout.ptr, dother.ptr, shape, nullptr, options);
        break;
      case op::variance:
        cuda::row_mean_variance(ws, ws_bytes, d, dother.ptr, dout.ptr, shape, nullptr, options);
        break;
      case op::logsumexp:
        cuda::row_logsumexp(ws, ws_bytes, d, dout.ptr, shape, nullptr, options);
        break;
    }
  });
  EXPECT_EQ(bytes, detred::cuda::min_workspace_bytes)
      << "the row reductions need no workspace: the query answers the least";
  std::vector<float> out(shape.rows);
  cuda::check(cudaMemcpy(out.data(), dout.ptr, shape.rows * sizeof(float), cudaMemcpyDeviceToHost), "copy out");
  return out;
}

bool quick() { return test::rows_quick(); }

#define SKIP_WITHOUT_GPU() \
  if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device: the GPU row reductions are not tested here"

// 20 launch configurations: block sizes 32 .. 256, one row per warp or few blocks (grid-stride).
std::vector<cuda::row_options> launches() {
  std::vector<cuda::row_options> l;
  for (int threads : {32, 64, 128, 256})
    for (int grid : {0, 1, 3, 7, 17}) l.push_back({.block_threads = threads, .grid_blocks = grid});
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
    expect_bits_equal<T>(gpu_rows(o, x, shape, {.block_threads = 128, .grid_blocks = 5}, 1), cpu, name(o),
                         &lengths);  // unaligned rows
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
      for (const cuda::row_options& l : launches()) {
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
    const std::vector<float> e = gpu_rows(o, embedded, big, {.block_threads = 64});
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
  const row_shape shape{rows, cols, stride};
  const std::vector<T> x = test::random_values<T>(rows * stride + 1, rows * 7 + cols);
  std::vector<float> cpu(cols);
  column_sum(x.data(), cpu.data(), shape);
  device_array<T> dx(x.size() + offset + 1);
  const T* d = test::to_device(dx, x, offset);
  device_array<float> dout(cols);
  int configurations = 0;
  const std::vector<int> levels = quick() ? std::vector<int>{0, 3, 9} : std::vector<int>{0, 3, 4, 5, 8, 9, 10, 13};
  for (int level : levels)
    for (int threads : {0, 32, 256, 512})
      for (int grid_rows : {0, 1, 5}) {
        const cuda::column_options options{level, threads, grid_rows};
        const std::size_t bytes = test::with_workspace([&](void* ws, std::size_t& ws_bytes) {
          cuda::column_sum(ws, ws_bytes, d, dout.ptr, shape, nullptr, options);
        });
        const int k = level != 0 ? level : 3;  // the chosen level is in [3, 10]: its roots at most rows / 8
        const std::size_t roots = std::max((rows >> k) * cols * sizeof(float), cuda::min_workspace_bytes);
        if (level != 0) {
          EXPECT_EQ(bytes, roots);
        } else {
          EXPECT_LE(bytes, roots);
        }
        std::vector<float> gpu = cuda::to_host(dout.ptr, cols);
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

// The call shape of docs/API.md, on both twins: every check below throws before any device work, so these tests run
// without a GPU too. `field` must appear in the message (the argument it names).
template <class F>
void expect_invalid(const F& f, const std::string& field) {
  try {
    f();
    ADD_FAILURE() << "no invalid_argument; expected one naming " << field;
  } catch (const detred::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what() << " does not name " << field;
  }
}

// A workspace pointer for calls that must throw before using it (never dereferenced).
void* not_a_query() {
  static unsigned char byte;
  return &byte;
}

// detred/cuda/rows.hpp: the row reductions need none (the size query answers the least, min_workspace_bytes);
// column_sum's query gives its chunk roots and a smaller workspace is refused. A query writes the bytes and returns
// before checking the data pointers.
TEST(RowsApi, SizeQueryAnswersAndTooSmallAWorkspaceIsRefused) {
  const row_shape shape = dense_rows(1000, 64);
  std::size_t bytes = 12345;
  cuda::row_sum<float>(nullptr, bytes, nullptr, nullptr, shape);
  EXPECT_EQ(bytes, detred::cuda::min_workspace_bytes);
  bytes = 12345;
  cuda::softmax_forward<float>(nullptr, bytes, nullptr, nullptr, shape);
  EXPECT_EQ(bytes, detred::cuda::min_workspace_bytes);
  bytes = 0;
  cuda::column_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, {.chunk_level = 5});
  EXPECT_EQ(bytes, (1000u >> 5) * 64 * sizeof(float));
  std::size_t backward = 0;
  cuda::rmsnorm_backward<float>(nullptr, backward, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, shape);
  EXPECT_GT(backward, 0u);  // dweight's chunk roots
  std::size_t fewer = bytes - 1;
  expect_invalid(
      [&] {
        cuda::column_sum<float>(not_a_query(), fewer, reinterpret_cast<const float*>(not_a_query()),
                                reinterpret_cast<float*>(not_a_query()), shape, nullptr, {.chunk_level = 5});
      },
      "workspace_bytes");
  fewer = backward - 1;
  expect_invalid(
      [&] {
        cuda::rmsnorm_backward<float>(not_a_query(), fewer, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      shape);
      },
      "workspace_bytes");
}

// detred/cuda/rows.hpp, row_options: "row_sum: tree or tree_neumaier; every other call: tree only".
TEST(RowsApi, AMethodTheCallDoesNotHaveIsRefused) {
  const row_shape shape = dense_rows(4, 8);
  std::size_t bytes = 0;
  const cuda::row_options neumaier{.method = sum_method::tree_neumaier}, exact{.method = sum_method::exact};
  expect_invalid([&] { cuda::row_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, exact); },
                 "row_options.method");
  expect_invalid([&] { cuda::row_max<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, neumaier); },
                 "row_options.method");
  expect_invalid(
      [&] { cuda::row_mean_variance<float>(nullptr, bytes, nullptr, nullptr, nullptr, shape, nullptr, neumaier); },
      "row_options.method");
  expect_invalid([&] { cuda::row_logsumexp<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, neumaier); },
                 "row_options.method");
  expect_invalid(
      [&] {
        cuda::layernorm_forward<float>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, shape,
                                       1e-5f, nullptr, neumaier);
      },
      "row_options.method");
  expect_invalid(
      [&] {
        cuda::rmsnorm_forward<float>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, shape, 1e-5f, nullptr,
                                     neumaier);
      },
      "row_options.method");
  expect_invalid(
      [&] {
        cuda::rmsnorm_backward<float>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, shape,
                                      nullptr, neumaier);
      },
      "row_options.method");
  expect_invalid([&] { cuda::softmax_forward<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, neumaier); },
                 "row_options.method");
  cuda::row_options fill;
  fill.fill_past_length = true;  // softmax_forward and log_softmax_forward only
  expect_invalid([&] { cuda::row_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, fill); },
                 "row_options.fill_past_length");
  expect_invalid([&] { cuda::row_logsumexp<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, fill); },
                 "row_options.fill_past_length");
  std::vector<float> x(32), out(4);
  expect_invalid([&] { row_sum(x.data(), out.data(), shape, sum_method::exact); }, "method");
}

TEST(RowsApi, LaunchFieldsOutOfRangeAreRefused) {
  const row_shape shape = dense_rows(4, 8);
  std::size_t bytes = 0;
  for (int threads : {16, 48, 288, -32})
    expect_invalid(
        [&] { cuda::row_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, {.block_threads = threads}); },
        "row_options.block_threads");
  expect_invalid([&] { cuda::row_max<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, {.grid_blocks = -1}); },
                 "row_options.grid_blocks");
  for (int level : {-1, 1, 2, 14})
    expect_invalid(
        [&] { cuda::column_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, {.chunk_level = level}); },
        "column_options.chunk_level");
  for (int threads : {16, 100, 544})
    expect_invalid(
        [&] { cuda::column_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, {.block_threads = threads}); },
        "column_options.block_threads");
  for (int grid : {-1, 65536})
    expect_invalid(
        [&] { cuda::column_sum<float>(nullptr, bytes, nullptr, nullptr, shape, nullptr, {.grid_rows = grid}); },
        "column_options.grid_rows");
}

// detred/cuda/norms.hpp: LayerNorm and RMSNorm take a dense shape, "lengths, causal_period and stride != cols are
// rejected, naming the field"; columns read full rows. Both twins refuse the same shapes.
TEST(RowsApi, ShapesACallDoesNotSupportAreRefusedByBothTwins) {
  const std::int32_t lengths[4] = {1, 2, 3, 4};
  const row_shape strided{4, 8, 12}, with_lengths{4, 8, 8, lengths}, causal{4, 8, 8, nullptr, 4};
  std::vector<float> x(64), w(8), out(64), stats(8);
  std::size_t bytes = 0;
  for (const auto& [shape, field] :
       {std::pair{strided, "row_shape.stride"}, std::pair{with_lengths, "row_shape.lengths"},
        std::pair{causal, "row_shape.causal_period"}}) {
    SCOPED_TRACE(field);
    expect_invalid(
        [&] {
          cuda::layernorm_forward<float>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, shape);
        },
        field);
    expect_invalid([&] { cuda::rmsnorm_forward<float>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, shape); },
                   field);
    expect_invalid(
        [&] {
          cuda::rmsnorm_backward<float>(nullptr, bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, shape);
        },
        field);
    expect_invalid(
        [&] { layernorm_forward(x.data(), w.data(), w.data(), out.data(), stats.data(), stats.data(), shape); }, field);
    expect_invalid([&] { rmsnorm_forward(x.data(), w.data(), out.data(), stats.data(), shape); }, field);
    expect_invalid(
        [&] { rmsnorm_backward(x.data(), x.data(), w.data(), stats.data(), out.data(), stats.data(), shape); }, field);
    if (shape.stride != shape.cols) continue;  // columns accept a stride
    expect_invalid([&] { cuda::column_sum<float>(nullptr, bytes, nullptr, nullptr, shape); }, field);
    expect_invalid([&] { column_sum(x.data(), out.data(), shape); }, field);
  }
  const row_shape narrow{4, 8, 6};  // stride < cols
  expect_invalid([&] { cuda::row_sum<float>(nullptr, bytes, nullptr, nullptr, narrow); }, "row_shape.stride");
  expect_invalid([&] { row_sum(x.data(), out.data(), narrow); }, "row_shape.stride");
  expect_invalid([&] { cuda::column_sum<float>(nullptr, bytes, nullptr, nullptr, narrow); }, "row_shape.stride");
  expect_invalid([&] { column_sum(x.data(), out.data(), narrow); }, "row_shape.stride");
  const row_shape short_causal{4, 3, 8, nullptr, 4};  // cols below the longest causal row
  expect_invalid([&] { cuda::softmax_forward<float>(nullptr, bytes, nullptr, nullptr, short_causal); },
                 "row_shape.cols");
  expect_invalid([&] { softmax_forward(x.data(), out.data(), short_causal); }, "row_shape.cols");
}

// docs/API.md: "invalid_argument for a bad argument (null pointer with n > 0 ...)": checked after the size query.
TEST(RowsApi, NullDataIsRefused) {
  const row_shape shape = dense_rows(4, 8);
  std::size_t bytes = 0;
  auto* p = reinterpret_cast<float*>(not_a_query());
  expect_invalid([&] { cuda::row_sum<float>(not_a_query(), bytes, nullptr, p, shape); }, "d_x");
  expect_invalid([&] { cuda::row_sum<float>(not_a_query(), bytes, p, nullptr, shape); }, "d_out");
  expect_invalid([&] { cuda::row_mean_variance<float>(not_a_query(), bytes, p, p, nullptr, shape); }, "d_variance");
  expect_invalid([&] { cuda::softmax_forward<float>(not_a_query(), bytes, p, nullptr, shape); }, "d_out");
  expect_invalid([&] { cuda::layernorm_forward<float>(not_a_query(), bytes, p, p, nullptr, p, p, p, shape); },
                 "d_bias");
  expect_invalid([&] { cuda::rmsnorm_forward<float>(not_a_query(), bytes, p, p, p, nullptr, shape); }, "d_rstd");
  std::size_t column_bytes = 1 << 20;
  expect_invalid([&] { cuda::column_sum<float>(not_a_query(), column_bytes, nullptr, p, shape); }, "d_x");
  // Empty shapes read and write nothing: null data is accepted (no launch either).
  cuda::row_sum<float>(not_a_query(), bytes, nullptr, nullptr, dense_rows(0, 8));
  cuda::layernorm_forward<float>(not_a_query(), bytes, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                 dense_rows(5, 0));
}

}  // namespace
