// How the CPU backend may run a call. Nothing here changes a result bit: every CPU algorithm gives the same bits
// for every thread count (docs/ORDER.md says why), so these are speed knobs only.
#pragma once

namespace detred {

struct cpu_options {
  // Worker threads. 0 = the DETRED_NUM_THREADS environment variable if set, else std::thread::hardware_concurrency.
  unsigned threads = 0;
};

}  // namespace detred
