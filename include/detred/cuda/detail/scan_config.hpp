// The launch shape of a device scan: the caller's scan_options, their zero fields filled from the device's tuning.
// Pure (no CUDA calls), so that the choice is tested on the host. Speed only: every shape gives the same bits.
#pragma once

#include <cstddef>

#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/scan.hpp"
#include "detred/errors.hpp"

namespace detred::cuda::detail {

// Checks the caller's fields (check_scan_options) and fills those left 0 from `tuning` by the size of the scanned
// value: block_threads_4 x items_per_thread_4 for 4 bytes or fewer, block_threads_8 x items_per_thread_8 for 8 bytes,
// 256 x 8 up to 16 bytes, 256 x 4 beyond. Throws invalid_argument, naming `what`, where the result has 32 items per
// thread on 32 threads.
inline scan_options choose_scan_config(scan_options c, std::size_t value_bytes, const scan_tuning& tuning = {},
                                       const char* what = "cuda scan") {
  check_scan_options(c, what);
  if (c.block_threads == 0)
    c.block_threads = value_bytes <= 4 ? tuning.block_threads_4 : value_bytes == 8 ? tuning.block_threads_8 : 256;
  if (c.items_per_thread == 0)
    c.items_per_thread = value_bytes <= 4    ? tuning.items_per_thread_4
                         : value_bytes == 8  ? tuning.items_per_thread_8
                         : value_bytes <= 16 ? 8
                                             : 4;
  if (c.items_per_thread == 32 && c.block_threads == 32)
    detred::detail::throw_invalid(what, "scan_options: 32 items per thread need block_threads of 64 or more");
  return c;
}

}  // namespace detred::cuda::detail
