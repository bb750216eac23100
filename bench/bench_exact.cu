// sum_method::exact on the GPU against cub::DeviceReduce::Sum (fp32, fp64) and cub::DeviceReduce::TransformReduce
// widening to float (fp16, bf16) in the same program (docs/PERFORMANCE.md, "Exact sum"). Data: the four exact data
// sets (tests/support/exact_inputs.hpp), 2^22 distinct elements generated on the host and repeated to fill 1 GiB on
// the device (64 to 256 copies: far larger than the L2). The exact result is checked against exact_accumulator
// states (the base block's state merged once per copy), bit for bit, on every timed call. Median of `reps` CUDA-event
// timings of one call each, workspaces preallocated; then the latency at n = 2^16 and 2^20: one call, and five runs
// of 100 back-to-back calls each of the exact sum, CUB and the two-kernel form.
// `bench_exact profile [log2 n]` (for ncu: -k regex:exact): binary64 (and binary32 below 2^22), n = 2^24 by default,
// the uniform, full range and ill-conditioned data sets, one call each (and one of the two-kernel form where the
// library takes the single pass), in the order it prints; the results are checked too.
// `bench_exact sweep [reps]`: kernel 1's launch shapes (the library's, its contiguous partition, its plain loads,
// other steps, blocks an SM and load flavours; sweep() below) against CUB, the calls of every variant and CUB
// interleaved within each repetition, each result checked; medians.
// `bench_exact latency`: the latency block alone, every type. `bench_exact small`: binary64 small sums by other
// steps of kernel 1 on three data sets (and the library's kernel 1, its finishing kernel and an empty launch, each
// alone), and binary32 by other steps, back to back, against CUB; with the host's time to enqueue the calls and the
// device's own time a call (a CUDA graph of 100 calls), the library's and CUB's.
// Usage: bench_exact [reps] (default 15) | bench_exact profile [log2 n] | bench_exact sweep [reps] | bench_exact
// latency
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cub/device/device_reduce.cuh>
#include <functional>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "bench/support/bench_support.hpp"
#include "detred/accumulators/exact.hpp"
#include "detred/cuda/error.hpp"
#include "detred/cuda/sum.hpp"
#include "src/cuda/exact/exact_sum_kernels.cuh"
#include "tests/support/exact_inputs.hpp"

namespace exact_bench {
namespace cuda = detred::cuda;
using detred::bfloat16;
using detred::bits_of;
using detred::exact_accumulator_for;
using detred::half;
using detred::sum_method;
namespace test = detred::test;
using detred::cuda::check;

constexpr std::size_t kBytes = std::size_t{1} << 30;
constexpr std::size_t kBase = std::size_t{1} << 22;

template <class T>
using peer_out = detred::bench::cub_sum_result<T>;

// Median milliseconds of `reps` single calls.
template <class F>
float median_ms(int reps, F call) {
  return float(1e3 * detred::bench::single_call_seconds(call, reps));
}

template <class T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

namespace dd = detred::cuda::detail;
// Kernel 1's algorithm for a large sum of T under the tuning in force (tuning.hpp exact.digits64 for binary64).
template <class T>
const char* large_sum_algorithm() {
  if constexpr (std::same_as<T, double>)
    return dd::current_tuning().exact.digits64 ? "digit columns" : "extract";
  else
    return "bins";
}

// Fills d[0..n) with the base data set (kBase elements) repeated; returns the exact accumulator's rounding of it.
template <class A, class T>
A fill(T* d, std::size_t n, test::exact_dataset set) {
  const std::vector<T> base = test::exact_data<T>(set, kBase, 11);
  check(cudaMemcpy(d, base.data(), kBase * sizeof(T), cudaMemcpyHostToDevice), "copy");
  for (std::size_t have = kBase; have < n; have *= 2)
    check(cudaMemcpy(d + have, d, std::min(have, n - have) * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
  exact_accumulator_for<T> one, all;
  one.add(base.data(), base.size());
  for (std::size_t c = 0; c < n / kBase; ++c) all.merge(one);
  return all.template rounded<A>();
}

// The run and sweep modes' device memory: 1 GiB of T, the exact sum's result and workspace, CUB's result and
// workspace; `exact()` enqueues the library's exact sum of d[0..m).
template <class A, class T>
struct exact_buffers {
  static constexpr std::size_t n = kBytes / sizeof(T);
  detred::bench::device_buffer<T> input{n};
  detred::bench::device_buffer<A> out{1};
  detred::bench::device_buffer<peer_out<T>> peer{1};
  std::size_t ws_bytes = [] {
    std::size_t bytes = 0;
    cuda::sum<A>(nullptr, bytes, static_cast<const T*>(nullptr), static_cast<A*>(nullptr), n, nullptr,
                 cuda::sum_options{.method = sum_method::exact});
    return bytes;
  }();
  detred::bench::device_buffer<unsigned char> ws{ws_bytes};
  detred::bench::cub_sum_peer<T> cub{n};

  void exact(std::size_t m) {
    cuda::sum<A>(ws.get(), ws_bytes, input.get(), out.get(), m, nullptr,
                 cuda::sum_options{.method = sum_method::exact});
  }
  A result() const {
    A got;
    check(cudaMemcpy(&got, out.get(), sizeof(A), cudaMemcpyDeviceToHost), "copy");
    return got;
  }
};

// A type's default tuning with another load flavour (exact_load_kind) and block partition (exact_interleaved): a type
// of the bench's own, so that the bench never instantiates a kernel the library instantiates too (two modules would
// register one host stub, and the shared-memory attribute would reach only one of them).
// load_variant<default, 2, true> is the streamed form's launch.
template <class Base, int Load, bool Interleave>
struct load_variant : Base {
  static constexpr int load = Load;
  static constexpr bool interleave = Interleave;
};

// One launch shape of the exact sum by hand (kernel 1 with Tune, then the finishing kernel): the two-kernel form.
// `wanted`: kernel 1's block count (0: the library's choice).
template <class Tune, class A, class T,
          int FinishThreads = std::same_as<T, double> ? dd::exact_finish_threads_binary64 : dd::exact_finish_threads>
void launch_variant(const T* d, std::size_t n, A* out, void* ws, std::uint64_t wanted = 0) {
  long long* bl = nullptr;
  unsigned* bf = nullptr;
  const int blocks = dd::launch_exact_blocks<T, Tune, void>(d, n, ws, nullptr, bl, bf, nullptr, wanted);
  dd::launch_finishing_block(dd::exact_finish_kernel<A, T, FinishThreads>, FinishThreads, nullptr, "variant finish",
                             static_cast<const long long*>(bl), static_cast<const unsigned*>(bf), blocks,
                             std::uint64_t(n), out);
}

// Back-to-back per-call time at n = 2^log2m, uniform data: five runs, each 100 calls of the library's exact sum,
// of CUB, and of the two-kernel form (kernel 1 then the finishing kernel, what sums above the single-pass size take),
// between two CUDA events, interleaved within each run; one call between two events, median of 51. The exact results
// are checked against the exact accumulator.
template <class A, class T>
bool latency(const char* tname, exact_buffers<A, T>& b, int log2m) {
  const std::size_t m = std::size_t{1} << log2m;
  const std::vector<T> base = test::exact_data<T>(test::exact_dataset::uniform, m, 5);
  check(cudaMemcpy(b.input.get(), base.data(), m * sizeof(T), cudaMemcpyHostToDevice), "copy");
  exact_accumulator_for<T> acc;
  acc.add(base.data(), base.size());
  const A expected = acc.template rounded<A>();
  auto ex = [&] { b.exact(m); };
  auto cb = [&] { b.cub(b.input.get(), b.peer.get(), m); };
  auto two = [&] {
    launch_variant<load_variant<dd::exact_default_tuning<T>, 2, true>, A, T>(b.input.get(), m, b.out.get(), b.ws.get());
  };
  for (int w = 0; w < 10; ++w) {
    ex();
    cb();
    two();
  }
  bool same = raw(b.result()) == raw(expected);
  const float ex_one = 1000.0f * median_ms(51, ex), cb_one = 1000.0f * median_ms(51, cb);
  std::printf("%-5s latency n=2^%d uniform: one call exact %.1f us (CUB %.1f us)\n", tname, log2m, ex_one, cb_one);
  for (int run = 0; run < 5; ++run) {
    const double e = 1e6 * detred::bench::back_to_back_seconds(ex, 1, 100);
    same = same && raw(b.result()) == raw(expected);
    const double c = 1e6 * detred::bench::back_to_back_seconds(cb, 1, 100);
    const double t = 1e6 * detred::bench::back_to_back_seconds(two, 1, 100);
    same = same && raw(b.result()) == raw(expected);
    std::printf(
        "%-5s back to back n=2^%d run %d: exact %.2f us, CUB %.2f us, exact/CUB time %.3f %s; two-kernel form %.2f "
        "us\n",
        tname, log2m, run, e, c, e / c, e <= c ? "<= CUB" : "ABOVE CUB", t);
  }
  std::printf("%-5s latency n=2^%d exact==ref %s\n", tname, log2m, same ? "yes" : "NO");
  return same;
}

template <class A, class T>
bool run(const char* tname, int reps) {
  exact_buffers<A, T> b;
  constexpr std::size_t n = exact_buffers<A, T>::n;
  T* d = b.input.get();
  bool ok = true;
  for (test::exact_dataset set : test::all_exact_datasets) {
    const A expected = fill<A>(d, n, set);
    bool same = true;
    // Correctness outside the timed region, then timing of the call alone.
    for (int r = 0; r < 3; ++r) {
      b.exact(n);
      same = same && raw(b.result()) == raw(expected);
    }
    const float exact_ms = median_ms(reps, [&] { b.exact(n); });
    same = same && raw(b.result()) == raw(expected);
    const float cub_ms = median_ms(reps, [&] { b.cub(d, b.peer.get(), n); });
    const double gb = double(kBytes) / 1e9;
    std::printf(
        "%-5s %-10s n=%zu [%s]  CUB %7.1f GB/s (%.3f ms)  exact %7.1f GB/s (%.3f ms)  exact/CUB %.2f  "
        "exact==ref %s\n",
        tname, test::name_of(set), n, large_sum_algorithm<T>(), gb / (cub_ms * 1e-3), cub_ms, gb / (exact_ms * 1e-3),
        exact_ms, cub_ms / exact_ms, same ? "yes" : "NO");
    ok = ok && same;
  }
  // Latency at n = 2^16 and 2^20 (the uniform data overwrite the buffer's start).
  for (int log2m : {16, 20}) ok = latency<A, T>(tname, b, log2m) && ok;
  return ok;
}
// One call each on 2^log2n terms of the uniform, full-range and ill-conditioned data sets, for a profiler (ncu -k
// regex:exact): the library's path (the single pass up to exact_single_pass_bytes) and, where that is the single pass,
// the two-kernel form as well; the launches come in the order printed. Results checked.
template <class A, class T>
bool profile(const char* tname, int log2n, int& launch) {
  const std::size_t n = std::size_t{1} << log2n;
  detred::bench::device_buffer<T> d(std::max(n, kBase));
  detred::bench::device_buffer<A> out(1);
  const cuda::sum_options exact{.method = sum_method::exact};
  std::size_t ws_bytes = 0;
  cuda::sum<A>(nullptr, ws_bytes, d.get(), out.get(), n, nullptr, exact);
  detred::bench::device_buffer<unsigned char> ws(ws_bytes);
  bool ok = true;
  for (test::exact_dataset set :
       {test::exact_dataset::uniform, test::exact_dataset::full_range, test::exact_dataset::ill}) {
    A expected;
    if (n >= kBase) {
      expected = fill<A>(d.get(), n, set);
    } else {
      const std::vector<T> x = test::exact_data<T>(set, n, 11);
      check(cudaMemcpy(d.get(), x.data(), n * sizeof(T), cudaMemcpyHostToDevice), "copy");
      exact_accumulator_for<T> acc;
      acc.add(x.data(), x.size());
      expected = acc.template rounded<A>();
    }
    auto check_one = [&](const char* form) {
      A got;
      check(cudaMemcpy(&got, out.get(), sizeof(A), cudaMemcpyDeviceToHost), "copy");
      ok = ok && raw(got) == raw(expected);
      std::printf("profile launch %2d: %-4s %-10s n=2^%d %s %s  exact==ref %s\n", launch++, tname, test::name_of(set),
                  log2n, large_sum_algorithm<T>(), form, raw(got) == raw(expected) ? "yes" : "NO");
    };
    cuda::sum<A>(ws.get(), ws_bytes, d.get(), out.get(), n, nullptr, exact);
    check_one(dd::exact_single_pass<T>(n) ? "single pass" : "two kernels");
    if (dd::exact_single_pass<T>(n)) {
      launch_variant<load_variant<dd::exact_default_tuning<T>, 2, true>, A, T>(d.get(), n, out.get(), ws.get());
      check_one("two kernels");
    }
  }
  return ok;
}

// One launch shape in one launch: kernel 1 with Tune, its last block adding the block states and rounding.
template <class Tune, class A, class T>
void launch_single_pass_variant(const T* d, std::size_t n, A* out, void* ws, std::uint64_t wanted = 0) {
  long long* bl = nullptr;
  unsigned* bf = nullptr;
  dd::launch_exact_blocks<T, Tune, A>(d, n, ws, nullptr, bl, bf, out, wanted);
}

// A launch that does nothing: the floor of a launch back to back.
__global__ void empty_kernel() {}
// The same launched with programmatic stream serialization: scheduled while the launch before it ends.
__global__ void empty_dependent_kernel() {
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();
}

// The library's small-sum path with kernel 1 launched plainly (<<<>>>), where the library launches it dependent on
// the kernel before it (programmatic stream serialization, launch_exact_blocks): the difference is the overlap of a
// call's kernel 1 with the last call's finishing kernel.
template <class T>
void library_plain_launch(const T* d, std::size_t n, T* out, void* ws) {
  long long* bl = nullptr;
  unsigned* bf = nullptr;
  if (dd::exact_single_pass<T>(n)) {
    dd::launch_exact_blocks<T, dd::exact_small_tuning<T>, T>(d, n, ws, nullptr, bl, bf, out, 0, false);
    return;
  }
  const int blocks =
      dd::launch_exact_blocks<T, dd::exact_small_path_tuning<T>, void>(d, n, ws, nullptr, bl, bf, nullptr, 0, false);
  constexpr int threads = std::same_as<T, double> ? dd::exact_finish_threads_binary64 : dd::exact_finish_threads;
  dd::launch_finishing_block(dd::exact_finish_kernel<T, T, threads>, threads, nullptr, "plain-launch finish",
                             static_cast<const long long*>(bl), static_cast<const unsigned*>(bf), blocks,
                             std::uint64_t(n), out);
}

// Device time a call: `calls` calls captured in one CUDA graph, the graph launched 5 times (median time a call between
// two events). The host's launches leave the loop, so where this is below the back-to-back time the host bound it.
inline double graph_us(const std::function<void(cudaStream_t)>& f, int calls) {
  cudaStream_t s = nullptr;
  check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "stream");
  f(s);  // outside the capture: attributes and caches are set up here
  check(cudaStreamSynchronize(s), "sync");
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), "begin capture");
  for (int i = 0; i < calls; ++i) f(s);
  check(cudaStreamEndCapture(s, &graph), "end capture");
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0), "instantiate");
  check(cudaGraphLaunch(exec, s), "graph launch");
  check(cudaStreamSynchronize(s), "sync");
  cudaEvent_t start = nullptr, stop = nullptr;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    check(cudaEventRecord(start, s), "record");
    check(cudaGraphLaunch(exec, s), "graph launch");
    check(cudaEventRecord(stop, s), "record");
    check(cudaEventSynchronize(stop), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "elapsed");
    t.push_back(1000.0 * ms / calls);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaStreamDestroy(s);
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

// Host time a call to enqueue `calls` calls back to back (no synchronisation inside the loop), in us: where it
// reaches the per-call time between events, the loop is bound by the host's launches, not by the device.
inline double host_enqueue_us(const std::function<void()>& f, int calls) {
  check(cudaDeviceSynchronize(), "sync");
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) f();
  const auto t1 = std::chrono::steady_clock::now();
  check(cudaDeviceSynchronize(), "sync");
  return std::chrono::duration<double, std::micro>(t1 - t0).count() / calls;
}

// binary64 small sums by the warp-shared window at other steps (the library's: 8 vectors, one block an SM).
template <int Unroll, int MinBlocks = 1>
struct f64_warp_shape : dd::exact_warp_levels_tuning<double, Unroll, MinBlocks> {};

// binary32 at other steps (bins; the library takes 4 vectors a step in its single pass and in its two kernels).
template <int Unroll>
struct f32_shape : dd::exact_streamed_tuning<float> {
  static constexpr int unroll = Unroll;
};

// `bench_exact small`: back-to-back per-call time (100 calls between two events; 3 runs, every shape and CUB
// interleaved within each run) at 2^16 and 2^20 by the library's path and other forms of kernel 1, each result
// checked: binary64 on the uniform, full-range and ill-conditioned data sets, against the two-kernel form with 10
// vectors a step, the 67 rows a thread at 4 vectors ("all rows B256 U4"), and the warp-shared window at other steps,
// block counts (times the workspace's bound) and in one pass; binary32 (uniform) against 8 vectors a step in two
// kernels and in the single pass. Each run also prints the host's time to enqueue 100 calls (host_enqueue_us) of the
// library, its plain launch, an empty launch and CUB, and the device's own time a call of the library and of CUB
// (graph_us).
template <class T>
bool small_shapes_of(const char* tname, test::exact_dataset set) {
  exact_buffers<T, T> b;
  bool ok = true;
  for (int log2m : {16, 20}) {
    const std::size_t m = std::size_t{1} << log2m;
    const std::vector<T> base = test::exact_data<T>(set, m, 5);
    check(cudaMemcpy(b.input.get(), base.data(), m * sizeof(T), cudaMemcpyHostToDevice), "copy");
    exact_accumulator_for<T> acc;
    acc.add(base.data(), base.size());
    const T expected = acc.template rounded<T>();
    std::vector<std::pair<std::string, std::function<void()>>> vs;
    // Forms timed as a CUDA graph of 100 calls too (the device's own time a call): name, call on a stream, and
    // whether it writes a sum to check.
    std::vector<std::tuple<std::string, std::function<void(cudaStream_t)>, bool>> gs;
    vs.push_back({"library", [&] { b.exact(m); }});
    auto add = [&]<class Tune>(const char* name) {
      vs.push_back({name, [&] { launch_variant<Tune, T, T>(b.input.get(), m, b.out.get(), b.ws.get()); }});
    };
    add.template operator()<load_variant<dd::exact_default_tuning<T>, 2, true>>("two kernels default steps");
    if constexpr (std::same_as<T, double>) {
      // The block count relative to the workspace's bound (one block per 4096 terms): x1 is the library's.
      const std::uint64_t bound = dd::exact_block_bound(m);
      add.template operator()<load_variant<dd::exact_small_tuning<T>, 2, true>>("all rows B256 U4");
      // The calls run after this block: they hold the block count by value. `per`: blocks per bound (4: a quarter).
      auto warp = [&]<class Tune, bool OnePass>(const char* name, std::uint64_t times, std::uint64_t per = 1) {
        const std::uint64_t blocks = std::max<std::uint64_t>(1, bound * times / per);
        vs.push_back({name, [&, blocks] {
                        if constexpr (OnePass)
                          launch_single_pass_variant<Tune, T, T>(b.input.get(), m, b.out.get(), b.ws.get(), blocks);
                        else
                          launch_variant<Tune, T, T>(b.input.get(), m, b.out.get(), b.ws.get(), blocks);
                      }});
      };
      warp.template operator()<f64_warp_shape<4>, false>("warp U4 x1", 1);
      warp.template operator()<f64_warp_shape<4>, false>("warp U4 /2", 1, 2);
      warp.template operator()<f64_warp_shape<4>, false>("warp U4 /4", 1, 4);
      warp.template operator()<f64_warp_shape<8>, false>("warp U8 /2", 1, 2);
      warp.template operator()<f64_warp_shape<2>, false>("warp U2 /2", 1, 2);
      vs.push_back({"warp U4 /2 finish 512", [&, bound] {
                      launch_variant<f64_warp_shape<4>, T, T, 512>(b.input.get(), m, b.out.get(), b.ws.get(),
                                                                   std::max<std::uint64_t>(1, bound / 2));
                    }});
      warp.template operator()<f64_warp_shape<4>, true>("warp U4 /2 1 pass", 1, 2);
      // Other steps at the library's block count (8 vectors a step; resident blocks, at most one a chunk).
      vs.push_back({"warp U4 library blocks",
                    [&] { launch_variant<f64_warp_shape<4>, T, T>(b.input.get(), m, b.out.get(), b.ws.get()); }});
      vs.push_back({"warp U16 library blocks",
                    [&] { launch_variant<f64_warp_shape<16>, T, T>(b.input.get(), m, b.out.get(), b.ws.get()); }});
      // Where a call's time goes: the library's kernel 1 alone, its finishing kernel alone (on the states a kernel 1
      // left in the workspace), and an empty launch (the floor of a launch back to back). None writes a sum of its
      // own, so none is checked.
      using library_tune = dd::exact_small_path_tuning<double>;
      long long* states = nullptr;
      unsigned* flags = nullptr;
      const int library_blocks =
          dd::launch_exact_blocks<T, library_tune, void>(b.input.get(), m, b.ws.get(), nullptr, states, flags);
      vs.push_back({"library kernel 1 alone", [&] {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      dd::launch_exact_blocks<T, library_tune, void>(b.input.get(), m, b.ws.get(), nullptr, l, f);
                    }});
      vs.push_back({"library finish alone", [&, states, flags, library_blocks] {
                      dd::launch_finishing_block(dd::exact_finish_kernel<T, T, dd::exact_finish_threads_binary64>,
                                                 dd::exact_finish_threads_binary64, nullptr, "finish alone",
                                                 static_cast<const long long*>(states),
                                                 static_cast<const unsigned*>(flags), library_blocks, std::uint64_t(m),
                                                 b.out.get());
                    }});
      vs.push_back({"warp U4 x1 1 pass", [&] {
                      launch_single_pass_variant<f64_warp_shape<4>, T, T>(b.input.get(), m, b.out.get(), b.ws.get());
                    }});
      gs.push_back({"kernel 1 alone",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      dd::launch_exact_blocks<T, library_tune, void>(b.input.get(), m, b.ws.get(), s, l, f);
                    },
                    false});
      gs.push_back({"finish alone",
                    [&, states, flags, library_blocks](cudaStream_t s) {
                      dd::launch_finishing_block(
                          dd::exact_finish_kernel<T, T, dd::exact_finish_threads_binary64>,
                          dd::exact_finish_threads_binary64, s, "finish alone", static_cast<const long long*>(states),
                          static_cast<const unsigned*>(flags), library_blocks, std::uint64_t(m), b.out.get());
                    },
                    false});
      gs.push_back({"finish alone, 512 threads",
                    [&, states, flags, library_blocks](cudaStream_t s) {
                      dd::launch_finishing_block(dd::exact_finish_kernel<T, T, 512>, 512, s, "finish alone",
                                                 static_cast<const long long*>(states),
                                                 static_cast<const unsigned*>(flags), library_blocks, std::uint64_t(m),
                                                 b.out.get());
                    },
                    false});
      gs.push_back({"finish alone, 256 threads",
                    [&, states, flags, library_blocks](cudaStream_t s) {
                      dd::launch_finishing_block(dd::exact_finish_kernel<T, T, 256>, 256, s, "finish alone",
                                                 static_cast<const long long*>(states),
                                                 static_cast<const unsigned*>(flags), library_blocks, std::uint64_t(m),
                                                 b.out.get());
                    },
                    false});
      gs.push_back({"warp U4 library blocks",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      const int blocks =
                          dd::launch_exact_blocks<T, f64_warp_shape<4>, void>(b.input.get(), m, b.ws.get(), s, l, f);
                      dd::launch_finishing_block(dd::exact_finish_kernel<T, T, dd::exact_finish_threads_binary64>,
                                                 dd::exact_finish_threads_binary64, s, "U4 finish",
                                                 static_cast<const long long*>(l), static_cast<const unsigned*>(f),
                                                 blocks, std::uint64_t(m), b.out.get());
                    },
                    true});
      gs.push_back({"warp U4 half the blocks",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      const int blocks = dd::launch_exact_blocks<T, f64_warp_shape<4>, void>(
                          b.input.get(), m, b.ws.get(), s, l, f, nullptr,
                          std::max<std::uint64_t>(1, library_blocks / 2));
                      dd::launch_finishing_block(dd::exact_finish_kernel<T, T, dd::exact_finish_threads_binary64>,
                                                 dd::exact_finish_threads_binary64, s, "U4 half finish",
                                                 static_cast<const long long*>(l), static_cast<const unsigned*>(f),
                                                 blocks, std::uint64_t(m), b.out.get());
                    },
                    true});
      gs.push_back({"empty launch dependent",
                    [](cudaStream_t s) {
                      dd::launch_dependent(empty_dependent_kernel, dim3(1), dim3(32), 0, s, "empty dependent");
                    },
                    false});
      gs.push_back({"warp U4 x1 1 pass",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      dd::launch_exact_blocks<T, f64_warp_shape<4>, T>(b.input.get(), m, b.ws.get(), s, l, f,
                                                                       b.out.get());
                    },
                    true});
      vs.push_back({"empty launch", [] { empty_kernel<<<1, 32>>>(); }});
      vs.push_back({"empty launch dependent", [] {
                      dd::launch_dependent(empty_dependent_kernel, dim3(1), dim3(32), 0, nullptr, "empty dependent");
                    }});
    }
    vs.push_back(
        {"library, plain launch", [&] { library_plain_launch<T>(b.input.get(), m, b.out.get(), b.ws.get()); }});
    if constexpr (!std::same_as<T, double>) {
      vs.push_back({"bins U8 1 pass", [&] {
                      launch_single_pass_variant<f32_shape<8>, T, T>(b.input.get(), m, b.out.get(), b.ws.get());
                    }});
      vs.push_back({"bins U4 1 pass", [&] {
                      launch_single_pass_variant<f32_shape<4>, T, T>(b.input.get(), m, b.out.get(), b.ws.get());
                    }});
      // The device's own time of the two kernels (4-vector steps) apart, and of the single pass at 4 vectors.
      gs.push_back(
          {"two kernels",
           [&](cudaStream_t s) {
             long long* l = nullptr;
             unsigned* f = nullptr;
             const int blocks = dd::launch_exact_blocks<T, f32_shape<4>, void>(b.input.get(), m, b.ws.get(), s, l, f);
             dd::launch_finishing_block(dd::exact_finish_kernel<T, T, dd::exact_finish_threads>,
                                        dd::exact_finish_threads, s, "f32 finish", static_cast<const long long*>(l),
                                        static_cast<const unsigned*>(f), blocks, std::uint64_t(m), b.out.get());
           },
           true});
      gs.push_back({"kernel 1 alone (4 vectors)",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      dd::launch_exact_blocks<T, f32_shape<4>, void>(b.input.get(), m, b.ws.get(), s, l, f);
                    },
                    false});
      gs.push_back({"U4 1 pass",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      dd::launch_exact_blocks<T, f32_shape<4>, T>(b.input.get(), m, b.ws.get(), s, l, f, b.out.get());
                    },
                    true});
      gs.push_back({"U8 1 pass",
                    [&](cudaStream_t s) {
                      long long* l = nullptr;
                      unsigned* f = nullptr;
                      dd::launch_exact_blocks<T, f32_shape<8>, T>(b.input.get(), m, b.ws.get(), s, l, f, b.out.get());
                    },
                    true});
    }
    auto cb = [&] { b.cub(b.input.get(), b.peer.get(), m); };
    for (auto& v : vs)
      for (int w = 0; w < 5; ++w) v.second();
    for (int run = 0; run < 3; ++run) {
      const double c = 1e6 * detred::bench::back_to_back_seconds(cb, 1, 100);
      std::printf("small %s %s n=2^%d run %d: CUB %.2f us\n", tname, test::name_of(set), log2m, run, c);
      for (auto& v : vs) {
        const double e = 1e6 * detred::bench::back_to_back_seconds(v.second, 1, 100);
        // The rows that time one kernel alone write no result of their own: not checked.
        const bool partial = v.first.find("alone") != std::string::npos || v.first.starts_with("empty launch");
        const bool same = partial || raw(b.result()) == raw(expected);
        ok = ok && same;
        std::printf("small %s %s n=2^%d run %d: %-26s %.2f us  /CUB %.3f  exact==ref %s\n", tname, test::name_of(set),
                    log2m, run, v.first.c_str(), e, e / c,
                    partial ? "(not a sum)"
                    : same  ? "yes"
                            : "NO");
      }
      // Host enqueue time a call (no sync in the loop) of the library, its plain launch, an empty launch and CUB.
      for (const auto& v : vs)
        if (v.first.starts_with("library,") || v.first == "library" || v.first.starts_with("empty launch"))
          std::printf("small %s %s n=2^%d run %d: host enqueue %-24s %.2f us\n", tname, test::name_of(set), log2m, run,
                      v.first.c_str(), host_enqueue_us(v.second, 100));
      std::printf("small %s %s n=2^%d run %d: host enqueue %-24s %.2f us\n", tname, test::name_of(set), log2m, run,
                  "CUB", host_enqueue_us(cb, 100));
      // The device's own time a call (a graph of 100 calls): the library's and CUB's.
      const double lib_graph = graph_us(
          [&](cudaStream_t s) {
            cuda::sum<T>(b.ws.get(), b.ws_bytes, b.input.get(), b.out.get(), m, s,
                         cuda::sum_options{.method = sum_method::exact});
          },
          100);
      const bool graph_same = raw(b.result()) == raw(expected);
      ok = ok && graph_same;
      const double cub_graph = graph_us([&](cudaStream_t s) { b.cub(b.input.get(), b.peer.get(), m, s); }, 100);
      std::printf("small %s %s n=2^%d run %d: graph of 100 calls: library %.2f us (exact==ref %s), CUB %.2f us\n",
                  tname, test::name_of(set), log2m, run, lib_graph, graph_same ? "yes" : "NO", cub_graph);
      for (const auto& [name, call, checked] : gs) {
        const double g = graph_us(call, 100);
        const bool same = !checked || raw(b.result()) == raw(expected);
        ok = ok && same;
        std::printf("small %s %s n=2^%d run %d: graph of 100 calls: %-24s %.2f us%s\n", tname, test::name_of(set),
                    log2m, run, name.c_str(), g,
                    !checked ? " (not a sum)"
                    : same   ? " (exact==ref yes)"
                             : " (exact==ref NO)");
      }
    }
  }
  return ok;
}
bool small_shapes() {
  bool ok = true;
  for (test::exact_dataset set :
       {test::exact_dataset::uniform, test::exact_dataset::full_range, test::exact_dataset::ill})
    ok = small_shapes_of<double>("f64", set) && ok;
  return small_shapes_of<float>("f32", test::exact_dataset::uniform) && ok;
}

// The latency block alone (every type): `bench_exact latency`.
template <class A, class T>
bool latency_only(const char* tname) {
  exact_buffers<A, T> b;
  bool ok = true;
  for (int log2m : {16, 20}) ok = latency<A, T>(tname, b, log2m) && ok;
  return ok;
}

struct variant {
  std::string name;
  std::string tuning;
  std::function<void()> call;
};

// Kernel 1's launch shapes for the sweep: the type's default algorithm with other steps, blocks an SM, load flavour
// (exact_load_kind) and partition (exact_interleaved). Types of the bench's own (see load_variant). The binary32
// family's bins: U vectors a step, the register allocation asked to allow MB blocks of 256 an SM.
template <class T, int U, int MB, int Load, bool Interleave>
struct bins_shape : dd::exact_default_tuning<T> {
  static constexpr int unroll = U;
  static constexpr int min_blocks = MB;
  static constexpr int load = Load;
  static constexpr bool interleave = Interleave;
};
// binary64's extracted levels in the streamed form's partition with U vectors a step and the given load flavour.
template <int U, int Load>
struct levels_shape : dd::exact_streamed_tuning<double> {
  static constexpr int unroll = U;
  static constexpr int load = Load;
};

// `bench_exact sweep [reps]`: the library's streamed form, its contiguous partition (exact.interleave=0), its plain
// loads (exact.load32 = 0) and for binary64 its two kernel-1 algorithms (exact.digits64) against other launch shapes of
// kernel 1 (bins_shape, levels_shape) and CUB, the calls of every variant and CUB interleaved within each repetition,
// each result checked; medians. Each shape's kernel resources are printed first (registers, local memory: a spill shows
// there, resident blocks an SM).
template <class A, class T>
bool sweep(const char* tname, int reps, const std::vector<test::exact_dataset>& sets) {
  exact_buffers<A, T> b;
  constexpr std::size_t n = exact_buffers<A, T>::n;
  T* d = b.input.get();
  A* d_out = b.out.get();
  void* ws = b.ws.get();
  std::vector<variant> vs;
  auto lib = [&] { b.exact(n); };
  vs.push_back({"library", "", lib});
  vs.push_back({"contiguous", "exact.interleave=0", lib});
  // `waves`: kernel 1's block count in waves of its resident blocks (1: the library's choice).
  auto add = [&]<class Tune>(const char* name, int waves = 1) {
    cudaFuncAttributes attr{};
    const void* kernel = reinterpret_cast<const void*>(dd::exact_block_kernel<T, Tune, void>);
    const int resident = dd::exact_resident_blocks<T, Tune, void>();  // also sets the shared-memory attribute
    check(cudaFuncGetAttributes(&attr, kernel), "cudaFuncGetAttributes");
    int sms = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
    std::printf(
        "shape %-4s %-22s U%d B%d min_blocks %d load %d: %d registers, %zu local bytes, %zu shared, %d "
        "blocks an SM\n",
        tname, name, Tune::unroll, Tune::block_threads, Tune::min_blocks, dd::exact_load_kind<Tune>, attr.numRegs,
        std::size_t(attr.localSizeBytes), std::size_t(Tune::shared_bytes), resident / sms);
    const std::uint64_t wanted = waves == 1 ? 0 : std::uint64_t(resident) * std::uint64_t(waves);
    vs.push_back({name, "", [&, n, wanted] { launch_variant<Tune, A, T>(d, n, d_out, ws, wanted); }});
  };
  if constexpr (std::same_as<T, double>) {
    // binary64 above the small sums: digit columns (exact.digits64=1, the high class's default) against the
    // extracted levels with either load flavour.
    vs.push_back({"digit columns", "exact.digits64=1", lib});
    vs.push_back({"levels plain loads", "exact.digits64=0,exact.load64=0", lib});
    vs.push_back({"levels 256B fetches", "exact.digits64=0,exact.load64=2", lib});
  } else {
    vs.push_back({"library plain loads", "exact.load32=0", lib});
  }
  if constexpr (std::same_as<T, double>) {
    add.template operator()<levels_shape<10, 1>>("streamed nc U10");
    add.template operator()<levels_shape<8, 0>>("streamed plain U8");
    add.template operator()<levels_shape<12, 0>>("streamed plain U12");
  } else if constexpr (std::same_as<T, float>) {
    add.template operator()<bins_shape<T, 8, 2, 1, true>>("streamed nc U8");
    add.template operator()<bins_shape<T, 6, 3, 0, true>>("streamed plain U6 mb3");
    add.template operator()<bins_shape<T, 12, 2, 0, true>>("streamed plain U12");
    add.template operator()<bins_shape<T, 8, 2, 0, true>>("streamed plain U8 2 waves", 2);
  } else {
    add.template operator()<bins_shape<T, 8, 2, 1, true>>("streamed nc U8");
  }
  vs.push_back({"library again", "", lib});
  bool ok = true;
  detred::bench::event_pair events;
  for (test::exact_dataset set : sets) {
    const A expected = fill<A>(d, n, set);
    std::vector<std::vector<double>> t(vs.size() + 1);
    std::vector<bool> same(vs.size(), true);
    for (int r = -2; r < reps; ++r) {
      for (std::size_t k = 0; k < vs.size(); ++k) {
        cuda::detail::set_tuning_overrides(vs[k].tuning.c_str());
        const double sec = events.seconds_per_call(vs[k].call, 1, nullptr);
        if (r >= 0) t[k].push_back(sec);
        A got;
        check(cudaMemcpy(&got, d_out, sizeof(A), cudaMemcpyDeviceToHost), "copy");
        same[k] = same[k] && raw(got) == raw(expected);
      }
      const double sec = events.seconds_per_call([&] { b.cub(d, b.peer.get(), n); }, 1, nullptr);
      if (r >= 0) t[vs.size()].push_back(sec);
    }
    cuda::detail::set_tuning_overrides(nullptr);
    const double cub_ms = 1e3 * detred::bench::median(t[vs.size()]);
    const double gb = double(kBytes) / 1e9;
    std::printf("sweep %-4s %-10s CUB %7.1f GB/s (%.4f ms)\n", tname, test::name_of(set), gb / (cub_ms * 1e-3), cub_ms);
    for (std::size_t k = 0; k < vs.size(); ++k) {
      const double ms = 1e3 * detred::bench::median(t[k]);
      std::printf("sweep %-4s %-10s %-22s %7.1f GB/s (%.4f ms)  exact/CUB %.3f  exact==ref %s\n", tname,
                  test::name_of(set), vs[k].name.c_str(), gb / (ms * 1e-3), ms, cub_ms / ms, same[k] ? "yes" : "NO");
      ok = ok && same[k];
    }
  }
  return ok;
}
}  // namespace exact_bench

int main(int argc, char** argv) {
  using namespace exact_bench;
  if (argc > 1 && std::string(argv[1]) == "profile") {
    const int log2n = argc > 2 ? std::atoi(argv[2]) : 24;
    int launch = 0;
    bool ok = profile<double, double>("f64", log2n, launch);
    if (log2n < 22) ok = profile<float, float>("f32", log2n, launch) && ok;
    std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
    return ok ? 0 : 1;
  }
  if (argc > 1 && std::string(argv[1]) == "small") {
    const bool ok = small_shapes();
    std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
    return ok ? 0 : 1;
  }
  if (argc > 1 && std::string(argv[1]) == "latency") {
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
    bool ok = latency_only<float, float>("f32");
    ok = latency_only<double, double>("f64") && ok;
    ok = latency_only<float, detred::half>("f16") && ok;
    ok = latency_only<float, bfloat16>("bf16") && ok;
    std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
    return ok ? 0 : 1;
  }
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    const int reps = argc > 2 ? std::atoi(argv[2]) : 15;
    using test::exact_dataset;
    cudaDeviceProp prop{};
    check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("device: %s, %d SMs; sweep, median of %d\n", prop.name, prop.multiProcessorCount, reps);
    const std::vector<exact_dataset> all(std::begin(test::all_exact_datasets), std::end(test::all_exact_datasets));
    bool ok = sweep<float, float>("f32", reps, all);
    ok = sweep<double, double>("f64", reps, all) && ok;
    ok = sweep<float, detred::half>("f16", reps, {exact_dataset::uniform, exact_dataset::full_range}) && ok;
    ok = sweep<float, bfloat16>("bf16", reps, {exact_dataset::uniform, exact_dataset::full_range}) && ok;
    std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
    return ok ? 0 : 1;
  }
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs; 1 GiB per data set; median of %d CUDA-event timings per figure\n", prop.name,
              prop.multiProcessorCount, reps);
  bool ok = true;
  ok = run<float, float>("f32", reps) && ok;
  ok = run<double, double>("f64", reps) && ok;
  ok = run<float, detred::half>("f16", reps) && ok;
  ok = run<float, bfloat16>("bf16", reps) && ok;
  std::printf("%s\n", ok ? "all exact results equal the reference" : "SOME EXACT RESULT DIFFERS");
  return ok ? 0 : 1;
}
