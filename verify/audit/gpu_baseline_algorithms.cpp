// The GPU baseline rows of the audit (baseline_algorithms.hpp): the classic reduction ladder and the atomic sums of
// detred::baselines, timed with CUDA events on buffers allocated once. Compiled into the GPU rows module
// (gpu_rows_module.hpp), never into detred-audit itself.
#include <cuda_runtime_api.h>

#include <memory>
#include <string>

#include "baseline_algorithms.hpp"
#include "detred/baselines/gpu.hpp"
#include "detred/cuda/error.hpp"

namespace detred::audit {

namespace {

using baseline_detail::accumulation_of;
using baseline_detail::any_order_bound;

// Device buffers shared by the GPU baseline rows: the input (uploaded once per data version), the result, a ladder
// workspace, two events.
class baseline_session {
 public:
  baseline_session() = default;
  baseline_session(const baseline_session&) = delete;
  baseline_session& operator=(const baseline_session&) = delete;
  ~baseline_session() {
    if (input_) cudaFree(input_);
    if (output_) cudaFree(output_);
    if (workspace_) cudaFree(workspace_);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }
  void announce(std::uint64_t version) { version_ = version, loaded_ = false; }

  template <class A, class T, class Launch>
  timed_sum run(std::span<const T> data, Launch launch) {
    using detred::cuda::check;
    const std::size_t n = data.size();
    if (n * sizeof(T) + 16 > input_bytes_) {
      if (input_) check(cudaFree(input_), "detred-audit: cudaFree");
      input_ = nullptr;
      input_bytes_ = n * sizeof(T) + 16;
      check(cudaMalloc(&input_, input_bytes_), "detred-audit: cudaMalloc (input)");
      loaded_ = false;
    }
    if (baselines::ladder_workspace_bytes(n) > workspace_bytes_) {
      if (workspace_) check(cudaFree(workspace_), "detred-audit: cudaFree");
      workspace_ = nullptr;
      workspace_bytes_ = baselines::ladder_workspace_bytes(n);
      check(cudaMalloc(&workspace_, workspace_bytes_), "detred-audit: cudaMalloc (workspace)");
    }
    if (!output_) check(cudaMalloc(&output_, sizeof(double)), "detred-audit: cudaMalloc (result)");
    if (!start_) check(cudaEventCreate(&start_), "detred-audit: cudaEventCreate");
    if (!stop_) check(cudaEventCreate(&stop_), "detred-audit: cudaEventCreate");
    if (!loaded_ || n != n_) {
      if (n) check(cudaMemcpy(input_, data.data(), n * sizeof(T), cudaMemcpyHostToDevice), "detred-audit: upload");
      loaded_ = true;
      n_ = n;
    }
    const T* d_in = static_cast<const T*>(input_);
    A* d_out = static_cast<A*>(output_);
    check(cudaEventRecord(start_, nullptr), "detred-audit: cudaEventRecord");
    launch(d_in, n, d_out, workspace_, workspace_bytes_);
    check(cudaEventRecord(stop_, nullptr), "detred-audit: cudaEventRecord");
    check(cudaEventSynchronize(stop_), "detred-audit: cudaEventSynchronize");
    float milliseconds = 0;
    check(cudaEventElapsedTime(&milliseconds, start_, stop_), "detred-audit: cudaEventElapsedTime");
    A value{};
    check(cudaMemcpy(&value, d_out, sizeof(A), cudaMemcpyDeviceToHost), "detred-audit: download");
    return timed_sum{value, double(milliseconds) / 1e3};
  }

 private:
  void* input_ = nullptr;
  std::size_t input_bytes_ = 0;
  void* output_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  bool loaded_ = false;
  std::uint64_t version_ = 0;
  std::size_t n_ = 0;
};

std::string label(const baselines::gpu_launch& l) {
  return "block=" + std::to_string(l.block_threads) +
         ",grid=" + (l.grid_blocks ? std::to_string(l.grid_blocks) : "auto");
}

// The configurations of the GPU baselines: the textbook default first, then other block and grid sizes.
const std::vector<baselines::gpu_launch>& baseline_launches() {
  static const std::vector<baselines::gpu_launch> launches = {{256, 0},  {128, 0}, {512, 0},
                                                              {1024, 0}, {64, 0},  {256, 100}};
  return launches;
}

template <floating_input T, class Variant>
algorithm<T> gpu_baseline_entry(Variant v, const std::shared_ptr<baseline_session>& session) {
  using A = default_accumulation_t<T>;
  const auto f = baselines::facts(v);
  constexpr bool ladder = std::is_same_v<Variant, baselines::ladder_variant>;
  algorithm<T> entry;
  entry.method = ladder ? "ladder/" + std::string(f.name) : "atomic_" + std::string(f.name);
  entry.name = "gpu/" + entry.method;
  entry.device = "gpu";
  entry.accumulation = accumulation_of<A>();
  entry.guarantee = f.guarantee;
  for (const auto& l : baseline_launches()) entry.configs.push_back(label(l));
  entry.load = [session](std::span<const T>, std::uint64_t version) { session->announce(version); };
  entry.run = [session, v](std::span<const T> data, std::size_t config) {
    const baselines::gpu_launch launch = baseline_launches().at(config);
    return session->run<A, T>(data, [&](const T* d_in, std::size_t n, A* d_out, void* ws, std::size_t ws_bytes) {
      if constexpr (ladder)
        baselines::ladder_sum<A, T>(v, d_in, n, d_out, ws, ws_bytes, nullptr, launch);
      else
        baselines::atomic_sum<A, T>(v, d_in, n, d_out, nullptr, launch);
    });
  };
  entry.bound = any_order_bound<A>();
  return entry;
}
}  // namespace

template <floating_input T>
void append_gpu_baseline_algorithms(std::vector<algorithm<T>>& table) {
  auto session = std::make_shared<baseline_session>();
  for (auto v : baselines::all_ladder_variants) table.push_back(gpu_baseline_entry<T>(v, session));
  for (auto v : baselines::all_atomic_variants) table.push_back(gpu_baseline_entry<T>(v, session));
}

template void append_gpu_baseline_algorithms<half>(std::vector<algorithm<half>>&);
template void append_gpu_baseline_algorithms<bfloat16>(std::vector<algorithm<bfloat16>>&);
template void append_gpu_baseline_algorithms<float>(std::vector<algorithm<float>>&);
template void append_gpu_baseline_algorithms<double>(std::vector<algorithm<double>>&);

}  // namespace detred::audit
