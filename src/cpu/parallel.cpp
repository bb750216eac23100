// The CPU backend's thread fan-out (detail/parallel.hpp). Threads are started per call: the calls that use them
// move at least two 64 Ki-element chunks, so the start-up (tens of microseconds) is small beside the work.
#include "detred/detail/parallel.hpp"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "detred/errors.hpp"

namespace detred::detail {

unsigned resolve_threads(const cpu_options& options) {
  if (options.threads > 0) return options.threads;
  if (const char* env = std::getenv("DETRED_NUM_THREADS"); env != nullptr && *env != '\0') {
    char* end = nullptr;
    const unsigned long value = std::strtoul(env, &end, 10);
    if (*end != '\0' || value == 0 || value > 4096) {
      throw_invalid("cpu_options",
                    std::string("DETRED_NUM_THREADS must be an integer in [1, 4096], got '") + env + "'");
    }
    return static_cast<unsigned>(value);
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

void parallel_for_chunks(std::size_t chunk_count, const cpu_options& options,
                         const std::function<void(std::size_t chunk)>& work) {
  const std::size_t threads = std::min<std::size_t>(resolve_threads(options), chunk_count);
  if (threads <= 1) {
    for (std::size_t c = 0; c < chunk_count; ++c) work(c);
    return;
  }
  // Contiguous runs of chunks per thread: thread t takes [t * count / threads, (t + 1) * count / threads).
  std::vector<std::exception_ptr> failure(threads);
  auto run = [&](std::size_t t) {
    try {
      for (std::size_t c = t * chunk_count / threads, end = (t + 1) * chunk_count / threads; c < end; ++c) work(c);
    } catch (...) {
      failure[t] = std::current_exception();
    }
  };
  {
    std::vector<std::jthread> pool;
    pool.reserve(threads - 1);
    for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(run, t);
    run(0);
  }  // jthreads join here
  for (const std::exception_ptr& e : failure) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace detred::detail
