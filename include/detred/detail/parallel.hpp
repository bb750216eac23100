// The CPU backend's only parallel primitive: run work(chunk) for every chunk index, on several threads.
// Each chunk writes only its own output slot, so the schedule never shows in a result. Exceptions thrown by work
// are rethrown on the calling thread (the first one, by chunk order).
#pragma once

#include <cstddef>
#include <functional>

#include "detred/execution.hpp"

namespace detred::detail {

// The thread count a call will use: options.threads, else DETRED_NUM_THREADS, else hardware_concurrency (>= 1).
unsigned resolve_threads(const cpu_options& options);

void parallel_for_chunks(std::size_t chunk_count, const cpu_options& options,
                         const std::function<void(std::size_t chunk)>& work);

}  // namespace detred::detail
