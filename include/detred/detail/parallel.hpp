// The CPU backend's only parallel primitive: run work(chunk) for every chunk index, on several threads.
// Each chunk writes only its own output slot, so the schedule never shows in a result. Exceptions thrown by work
// (on any thread) are rethrown on the calling thread: the one of the lowest-numbered chunk that threw; every chunk
// runs even then. Threads come from one persistent pool (src/cpu/parallel.cpp); the caller works too, and helpers are
// used only from four chunks per thread up (two with an explicit thread count). Thread-safe: any number of host threads
// may call at once.
#pragma once

#include <cstddef>
#include <functional>

#include "detred/execution.hpp"

namespace detred::detail {

// The thread count asked for: options.threads, else DETRED_NUM_THREADS, else hardware_concurrency (>= 1, read once
// per process). A call uses fewer where it has fewer than two chunks per thread.
unsigned resolve_threads(const cpu_options& options);

void parallel_for_chunks(std::size_t chunk_count, const cpu_options& options,
                         const std::function<void(std::size_t chunk)>& work);

}  // namespace detred::detail
