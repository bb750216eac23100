// How the CPU backend may run a call. Nothing here changes a result bit: every CPU algorithm gives the same bits
// for every thread count (docs/ORDER.md says why), so these are speed knobs only.
// cpu_options is a plain value: copy it freely between threads. threads = 0 lets each call pick: up to
// hardware_concurrency (read once per process), at least four 2^16-element chunks per thread, and on a machine whose
// cores are busy (a helper thread that starts late) the caller alone for the next calls; an explicit count (or
// DETRED_NUM_THREADS) is obeyed, at most one thread per two chunks. docs/PERFORMANCE.md, "CPU backend under load".
#pragma once

namespace detred {

struct cpu_options {
  // Worker threads. 0 = the DETRED_NUM_THREADS environment variable if set, else std::thread::hardware_concurrency.
  unsigned threads = 0;
};

}  // namespace detred
