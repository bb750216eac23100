// Runs every algorithm of a registry on one data set and measures what the report promises: error against the exact
// sum, the a-priori bound, time, and the number of distinct results over repeated runs, configurations and orders.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "dataset.hpp"
#include "registry.hpp"
#include "report.hpp"

namespace detred::audit {

struct audit_options {
  unsigned repeat = 5;   // runs in the default configuration (timing median, run-to-run spread)
  unsigned permute = 0;  // random orders of the input, beyond the input's own
  bool configs = false;  // run every configuration of every algorithm once
  std::uint64_t permute_seed = 1;
};

// Called after each step: (steps done, steps in all, what ran).
using progress_callback = std::function<void(std::uint64_t done, std::uint64_t total, const std::string& what)>;

// Audits `data` with the algorithms `registry` selects. The promises checked (a broken one is a `failure`):
// - run_to_run or stronger: one bit pattern over the --repeat runs;
// - gpu_to_gpu or stronger: one bit pattern over every configuration (--configs);
// - cpu_gpu: the bits of the twin on the other device (gpu/x = cpu/x), when both ran;
// - exact: the correctly rounded sum, in every order (--permute).
// Different results over random orders are reported, never a failure: only `exact` promises order independence.
// Exceptions from a backend propagate (with the algorithm and configuration in the message).
input_report audit_dataset(const dataset& data, const registry_options& registry, const audit_options& options,
                           const progress_callback& progress = {});

// The same with a given table of algorithms (T must be data's element type): what audit_dataset runs, and what the
// tests run with planted faulty algorithms.
template <floating_input T>
input_report audit_with(const dataset& data, const std::vector<algorithm<T>>& table, const audit_options& options,
                        const progress_callback& progress = {});

}  // namespace detred::audit
