// What an audit found, per input and per algorithm: the data every writer (table, JSON, CSV, SVG) prints.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "algorithms.hpp"
#include "dataset.hpp"
#include "detred/determinism.hpp"
#include "detred/verify/error_metrics.hpp"

namespace detred::audit {

// How many distinct bit patterns `runs` results had.
struct spread {
  std::uint64_t runs = 0;  // 0: not measured
  std::uint64_t distinct = 0;
};

struct algorithm_report {
  std::string name;  // stable (algorithms.hpp)
  std::string device;
  std::string method;
  element_type accumulation = element_type::f64;
  determinism guarantee = determinism::not_guaranteed;

  sum_value value;                   // the first run, default configuration, input order
  verify::error_metrics error;       // of `value` against the exact sum
  double bound = 0;                  // a-priori bound on the absolute error (+Inf: none stated)
  double relative_bound = 0;         // bound / |s| (+Inf when s = 0)
  std::optional<bool> within_bound;  // absent when the bound says nothing (non-finite sum or result)

  double median_seconds = 0;  // over the --repeat runs
  double throughput_gbs = 0;  // input bytes / median time, 1e9 bytes per second

  spread repeat;   // the --repeat runs in the default configuration
  spread configs;  // one run per configuration (the default one's first run included)
  std::vector<std::string> config_labels;
  spread permute;                    // the input order and each of the --permute random orders
  double permute_max_abs_error = 0;  // the largest absolute error over those orders

  std::string twin;                  // the algorithm whose bits this one must equal, or ""
  std::optional<bool> matches_twin;  // absent when the twin did not run

  // Each distinct result over the --repeat runs and the configurations, as a signed error in ulps of the exact sum
  // rounded to the accumulation type: what the spread plot (--plot without --sweep) draws.
  std::vector<double> distinct_ulps;

  std::vector<std::string> failures;     // broken promises: each makes the exit status 1
  std::vector<std::string> not_checked;  // promises this run could not check (never counted as kept)
};

struct input_report {
  std::string source;
  element_type dtype = element_type::f64;
  std::vector<std::uint64_t> shape;
  std::uint64_t n = 0;
  std::optional<double> target_condition;  // --sweep and --gen ill: the condition number asked for

  double sum_of_magnitudes = 0;      // sum|x_i|, correctly rounded to double
  double condition_number = 0;       // sum|x_i| / |sum x_i|
  std::string exact_decimal;         // the exact sum, 40 significant digits
  bool finite = true;                // no NaN or Inf among the inputs
  double rounded_f64 = 0;            // the exact sum correctly rounded to double
  std::optional<float> rounded_f32;  // ... and to float, where some algorithm accumulates in float

  std::vector<algorithm_report> results;
};

// True when any algorithm of any input broke a promise.
bool any_failure(const std::vector<input_report>& reports);

}  // namespace detred::audit
