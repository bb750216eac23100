// The CPU backend's thread fan-out (detail/parallel.hpp): one persistent pool of worker threads per process, started
// lazily and grown on demand (never a thread created per call once warm).
//
// A call hands out its chunks through an atomic counter. The calling thread claims chunks too, so a call never waits
// for a worker to be scheduled: on a loaded machine a worker that wakes late finds nothing left and the caller has
// done the work alone (it waits only for chunks a worker has already claimed). Helpers are asked for only where the
// work pays for them: at least min_chunks_per_thread chunks per thread (2^17 elements). Several host threads may call
// at once: each call is its own job; workers serve the jobs in the order they were posted.
#include "detred/detail/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "detred/errors.hpp"

namespace detred::detail {

namespace {

// Each thread of a call gets at least this many chunks (of cpu_chunk_size elements): below that, waking a helper
// costs about what it saves (docs/PERFORMANCE.md, "CPU backend under load").
constexpr std::size_t min_chunks_per_thread = 2;
constexpr std::size_t default_min_chunks_per_thread = 4;  // with the default thread count (threads = 0)
// The most worker threads the pool keeps (a larger `threads` option is served by these).
constexpr std::size_t max_workers = 64;
// Chunks a helper leaves to the caller at the end of a job (see job::participate).
constexpr std::size_t helper_reserve = 1;
// With the default thread count (cpu_options::threads = 0; an explicit count is obeyed as given), a helper that starts
// later than this after the job was posted finds the machine busy: it claims nothing, and the default calls of the
// process that start within skip_window run on their callers alone (then helpers are tried again). A window of time,
// not a number of calls: 63 skipped calls of 2^26 terms each would have run serially for a second or more. On a loaded
// machine, waking helpers costs the caller its core and makes it wait for preempted helpers; this keeps the default
// no slower than one thread there. 100 us, not less: with 20 us, helpers on the idle cores of a 2-core VM were
// counted late and the default never used them (docs/PERFORMANCE.md, "CPU backend under load").
constexpr auto late_start = std::chrono::microseconds(100);
constexpr auto skip_window = std::chrono::milliseconds(5);
std::atomic<std::chrono::steady_clock::rep> skip_until{0};  // steady_clock ticks; helpers are not asked before it

// hardware_concurrency reads files on Linux: asked once per process.
unsigned cached_hardware_concurrency() {
  static const unsigned value = std::max(1u, std::thread::hardware_concurrency());
  return value;
}

struct job {
  const std::function<void(std::size_t)>* work = nullptr;
  std::size_t chunk_count = 0;
  std::atomic<std::size_t> next{0};  // the next unclaimed chunk
  std::chrono::steady_clock::time_point posted;
  std::atomic<bool> helper_was_late{false};
  bool adaptive = true;    // the default thread count (not an explicit cpu_options::threads): late helpers back off
  std::size_t active = 0;  // workers inside the job (guarded by the pool's mutex)
  std::mutex failure_mutex;
  std::size_t failed_chunk = SIZE_MAX;  // the lowest chunk whose work threw, and its exception
  std::exception_ptr failure;

  // Claims and runs chunks until none is left. A helper leaves the last `helper_reserve` chunks to the caller, so
  // that the caller, which never waits to start, does not end up waiting for a helper that started late (or was
  // preempted) on the last chunk.
  void participate(bool helper) {
    // Late, and the caller has already claimed half of the chunks: the machine is busy. A late helper of a long job
    // (most chunks still unclaimed) still joins: what it saves there outweighs the wait for a preempted chunk.
    if (helper && adaptive && std::chrono::steady_clock::now() - posted > late_start &&
        2 * next.load(std::memory_order_relaxed) >= chunk_count) {
      helper_was_late.store(true, std::memory_order_relaxed);
      return;
    }
    for (;;) {
      std::size_t c = next.load(std::memory_order_relaxed);
      if (helper) {
        do {
          if (c + helper_reserve >= chunk_count) return;
        } while (!next.compare_exchange_weak(c, c + 1, std::memory_order_relaxed));
      } else {
        c = next.fetch_add(1, std::memory_order_relaxed);
        if (c >= chunk_count) return;
      }
      try {
        (*work)(c);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (c < failed_chunk) {
          failed_chunk = c;
          failure = std::current_exception();
        }
      }
    }
  }
};

class thread_pool {
 public:
  // Runs the job on the calling thread and up to `helpers` workers; returns when every chunk is done.
  void run(job& j, std::size_t helpers) {
    helpers = std::min(helpers, max_workers);
    {
      const std::lock_guard lock(mutex_);
      while (workers_.size() < helpers) workers_.emplace_back([this] { serve(); });
      for (std::size_t h = 0; h < helpers; ++h) tickets_.push_back(&j);
      j.posted = std::chrono::steady_clock::now();
    }
    if (helpers == 1)
      work_ready_.notify_one();
    else
      work_ready_.notify_all();
    j.participate(false);
    std::unique_lock lock(mutex_);
    // Tickets no worker took are withdrawn: every chunk is claimed, so they would find nothing to do.
    std::erase(tickets_, &j);
    job_left_.wait(lock, [&] { return j.active == 0; });
  }

 private:
  void serve() {
    std::unique_lock lock(mutex_);
    for (;;) {
      work_ready_.wait(lock, [&] { return !tickets_.empty(); });
      job* j = tickets_.front();
      tickets_.pop_front();
      ++j->active;
      lock.unlock();
      j->participate(true);
      lock.lock();
      if (--j->active == 0) job_left_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable job_left_;
  std::deque<job*> tickets_;
  std::vector<std::thread> workers_;  // detached at exit: the pool is never destroyed
};

thread_pool& pool() {
  static thread_pool* const instance = new thread_pool;  // never destroyed: workers may be blocked at exit
  return *instance;
}

}  // namespace

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
  return cached_hardware_concurrency();
}

void parallel_for_chunks(std::size_t chunk_count, const cpu_options& options,
                         const std::function<void(std::size_t chunk)>& work) {
  if (chunk_count < 2 * min_chunks_per_thread) {  // one thread: no system call, no pool
    for (std::size_t c = 0; c < chunk_count; ++c) work(c);
    return;
  }
  const unsigned asked = resolve_threads(options);  // also checks DETRED_NUM_THREADS
  // The default asks for more work per thread than an explicit count: on shared cores a helper must pay for itself.
  const std::size_t useful =
      chunk_count / (options.threads == 0 ? default_min_chunks_per_thread : min_chunks_per_thread);
  std::size_t threads = std::min<std::size_t>(asked, useful);
  if (threads > 1 && options.threads == 0 &&
      std::chrono::steady_clock::now().time_since_epoch().count() < skip_until.load(std::memory_order_relaxed))
    threads = 1;  // busy cores lately: this call runs on its caller alone
  if (threads <= 1) {
    for (std::size_t c = 0; c < chunk_count; ++c) work(c);
    return;
  }
  job j;
  j.work = &work;
  j.chunk_count = chunk_count;
  j.adaptive = options.threads == 0;
  pool().run(j, threads - 1);
  if (j.helper_was_late.load(std::memory_order_relaxed))
    skip_until.store((std::chrono::steady_clock::now() + skip_window).time_since_epoch().count(),
                     std::memory_order_relaxed);
  if (j.failure) std::rethrow_exception(j.failure);
}

}  // namespace detred::detail
