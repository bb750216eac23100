#include "gpu_algorithms.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>

#include "detred/cuda/device.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "detred/verify/error_bounds.hpp"

namespace detred::audit {

int cuda_device_count() { return detred::cuda::device_count(); }

std::string cuda_device_description() {
  if (cuda_device_count() == 0) return "";
  const auto d = detred::cuda::describe_device(0);
  return d.name + " (sm_" + std::to_string(d.compute_capability_major) + std::to_string(d.compute_capability_minor) +
         ", " + std::to_string(d.multiprocessors) + " SMs)";
}

namespace {

// A launch shape (sum_options without the method) and where the input starts (elements past a 256-byte boundary: 0 is
// the aligned, vectorised path, others the unaligned one). None of these may change a bit of the result.
struct gpu_config {
  detred::cuda::sum_options launch;
  std::size_t offset = 0;
  std::string label() const {
    auto field = [](int v) { return v == 0 ? std::string("auto") : std::to_string(v); };
    return "block=" + field(launch.block_threads) + ",grid=" + field(launch.grid_blocks) +
           ",tiles=" + field(launch.tiles_per_chunk) + ",offset=" + std::to_string(offset);
  }
};

detred::cuda::sum_options shape(int block_threads, int grid_blocks, int tiles_per_chunk) {
  return {.block_threads = block_threads, .grid_blocks = grid_blocks, .tiles_per_chunk = tiles_per_chunk};
}

const std::vector<gpu_config>& gpu_configs() {
  static const std::vector<gpu_config> configs = {
      {shape(0, 0, 0), 0},   {shape(128, 0, 1), 0}, {shape(256, 1, 16), 0},    {shape(64, 7, 2), 0},
      {shape(256, 0, 4), 1}, {shape(32, 3, 8), 0},  {shape(128, 1000, 16), 0}, {shape(256, 0, 0), 3},
  };
  return configs;
}

constexpr std::size_t max_offset_elements = 8;

}  // namespace

class gpu_session {
 public:
  gpu_session() = default;
  gpu_session(const gpu_session&) = delete;
  gpu_session& operator=(const gpu_session&) = delete;
  ~gpu_session() {
    // Destructors must not throw: release what was allocated, ignoring errors of a device already torn down.
    if (input_) cudaFree(input_);
    if (output_) cudaFree(output_);
    if (workspace_) cudaFree(workspace_);
    if (start_) cudaEventDestroy(start_);
    if (stop_) cudaEventDestroy(stop_);
  }

  // Copies `bytes` (n elements of element_size) to the device at `offset` elements past the buffer's start, unless
  // that copy is already there.
  const void* load(const void* host, std::size_t n, std::size_t element_size, std::uint64_t version,
                   std::size_t offset) {
    const std::size_t needed = (n + max_offset_elements) * element_size;
    if (needed > input_bytes_) {
      if (input_) detred::cuda::check(cudaFree(input_), "detred-audit: cudaFree");
      input_ = nullptr;
      detred::cuda::check(cudaMalloc(&input_, needed), "detred-audit: cudaMalloc (input)");
      input_bytes_ = needed;
      loaded_ = false;
    }
    if (sum_workspace_size(n) > workspace_bytes_) {
      if (workspace_) detred::cuda::check(cudaFree(workspace_), "detred-audit: cudaFree");
      workspace_ = nullptr;
      workspace_bytes_ = sum_workspace_size(n);
      detred::cuda::check(cudaMalloc(&workspace_, workspace_bytes_), "detred-audit: cudaMalloc (workspace)");
    }
    if (!output_) detred::cuda::check(cudaMalloc(&output_, sizeof(double)), "detred-audit: cudaMalloc (result)");
    if (!start_) detred::cuda::check(cudaEventCreate(&start_), "detred-audit: cudaEventCreate");
    if (!stop_) detred::cuda::check(cudaEventCreate(&stop_), "detred-audit: cudaEventCreate");
    char* at = static_cast<char*>(input_) + offset * element_size;
    if (!loaded_ || version != version_ || offset != offset_ || n != n_) {
      detred::cuda::check(cudaMemcpy(at, host, n * element_size, cudaMemcpyHostToDevice), "detred-audit: upload");
      loaded_ = true;
      version_ = version;
      offset_ = offset;
      n_ = n;
    }
    return at;
  }

  // Runs the canonical sum of the loaded input in configuration `config`; the time is the kernels' alone.
  template <class A, class T>
  timed_sum run(std::span<const T> data, std::uint64_t version, sum_method method, const gpu_config& config) {
    const T* d_in = static_cast<const T*>(load(data.data(), data.size(), sizeof(T), version, config.offset));
    A* d_out = static_cast<A*>(output_);
    detred::cuda::check(cudaEventRecord(start_, nullptr), "detred-audit: cudaEventRecord");
    detred::cuda::sum_options options = config.launch;
    options.method = method;
    std::size_t bytes = workspace_bytes_;
    detred::cuda::sum<A>(workspace_, bytes, d_in, d_out, data.size(), nullptr, options);
    detred::cuda::check(cudaEventRecord(stop_, nullptr), "detred-audit: cudaEventRecord");
    detred::cuda::check(cudaEventSynchronize(stop_), "detred-audit: cudaEventSynchronize");
    float milliseconds = 0;
    detred::cuda::check(cudaEventElapsedTime(&milliseconds, start_, stop_), "detred-audit: cudaEventElapsedTime");
    A value{};
    detred::cuda::check(cudaMemcpy(&value, d_out, sizeof(A), cudaMemcpyDeviceToHost), "detred-audit: download");
    return timed_sum{value, double(milliseconds) / 1e3};
  }

  std::uint64_t current_version = 0;  // the version the runner last announced through load()

 private:
  // The most workspace any GPU method needs for n elements (the size query of each).
  static std::size_t sum_workspace_size(std::size_t n) {
    std::size_t most = 0;
    for (sum_method m : {sum_method::tree, sum_method::tree_neumaier, sum_method::exact}) {
      std::size_t bytes = 0;
      detred::cuda::sum(nullptr, bytes, static_cast<const double*>(nullptr), static_cast<double*>(nullptr), n, nullptr,
                        {.method = m});
      most = std::max(most, bytes);
    }
    return most;
  }

  void* input_ = nullptr;
  std::size_t input_bytes_ = 0;
  void* output_ = nullptr;
  void* workspace_ = nullptr;
  std::size_t workspace_bytes_ = 0;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
  bool loaded_ = false;
  std::uint64_t version_ = 0;
  std::size_t offset_ = 0;
  std::size_t n_ = 0;
};

std::shared_ptr<gpu_session> make_gpu_session() { return std::make_shared<gpu_session>(); }

namespace {

template <class A, floating_input T>
algorithm<T> gpu_entry(sum_method method, const std::string& suffix, const std::shared_ptr<gpu_session>& session) {
  algorithm<T> entry;
  entry.name = "gpu/" + std::string(to_string(method)) + suffix;
  entry.device = "gpu";
  entry.method = std::string(to_string(method));
  entry.accumulation = std::is_same_v<A, float> ? element_type::f32 : element_type::f64;
  entry.guarantee = method == sum_method::exact ? determinism::exact : determinism::cpu_gpu;
  entry.twin = "cpu/" + std::string(to_string(method)) + suffix;
  for (const gpu_config& c : gpu_configs()) entry.configs.push_back(c.label());
  entry.load = [session](std::span<const T>, std::uint64_t version) { session->current_version = version; };
  entry.run = [session, method](std::span<const T> data, std::size_t config) {
    return session->run<A, T>(data, session->current_version, method, gpu_configs().at(config));
  };
  entry.bound = [method](const verify::exact_sum& s, const verify::exact_sum& magnitudes) {
    return verify::error_bound<A>(method, s, magnitudes);
  };
  return entry;
}

}  // namespace

template <floating_input T>
std::vector<algorithm<T>> gpu_algorithms(const std::shared_ptr<gpu_session>& session) {
  using default_acc = default_accumulation_t<T>;
  std::vector<algorithm<T>> table;
  for (sum_method method : {sum_method::tree, sum_method::tree_neumaier})
    table.push_back(gpu_entry<default_acc, T>(method, "", session));
  if constexpr (!std::is_same_v<default_acc, double>) {
    for (sum_method method : {sum_method::tree, sum_method::tree_neumaier})
      table.push_back(gpu_entry<double, T>(method, "@f64", session));
  }
  table.push_back(gpu_entry<default_acc, T>(sum_method::exact, "", session));  // docs/EXACT.md
  return table;
}

template std::vector<algorithm<half>> gpu_algorithms<half>(const std::shared_ptr<gpu_session>&);
template std::vector<algorithm<bfloat16>> gpu_algorithms<bfloat16>(const std::shared_ptr<gpu_session>&);
template std::vector<algorithm<float>> gpu_algorithms<float>(const std::shared_ptr<gpu_session>&);
template std::vector<algorithm<double>> gpu_algorithms<double>(const std::shared_ptr<gpu_session>&);

}  // namespace detred::audit
