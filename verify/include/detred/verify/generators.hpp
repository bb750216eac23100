// Seeded input generators for tests, benchmarks and the audit tool: one implementation of each distribution.
//
// Platform-independent: the same (kind, n, seed, condition) gives the same bits on every IEEE 754 machine. They use
// their own generator (xoshiro256** seeded by splitmix64) and their own transforms (a polar Box-Muller with a log and
// an exp written in basic arithmetic), never std:: distributions or libm's transcendental functions, whose results
// differ between standard libraries. Values are computed in double and rounded once (to nearest even) to T, or, for
// the 16-bit types, through float.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "detred/types/float_traits.hpp"

namespace detred::verify {

enum class distribution {
  uniform,    // U(-1, 1)
  normal,     // N(0, 1)
  lognormal,  // random sign times exp(sigma N(0, 1)), sigma chosen so that about 8 sigma spans T's exponent range:
              // magnitudes over many decades
  same_sign,  // U(0, 1): condition number 1
  cancel,     // heavy cancellation: half the values are the negatives of the other half (shuffled), each perturbed
              // by about 2^-(p/2) of its size
  ill,        // a requested condition number sum|x_i| / |sum x_i| (1 .. 1e30), in the manner of Ogita, Rump and
              // Oishi's GenSum (Accurate sum and dot product, 2005, Algorithm 6.1, adapted to sums); see generate()
  specials,   // U(-1, 1) mixed with NaN (of both signs), +-Inf, +-0, subnormals, +-MAX and the smallest normal
};

std::string_view to_string(distribution d);
std::optional<distribution> parse_distribution(std::string_view name);  // accepts the to_string names

struct generator_options {
  distribution kind = distribution::uniform;
  std::uint64_t n = 0;
  std::uint64_t seed = 1;
  double condition = 1e16;  // target condition number for `ill` (1 .. 1e30)
};

// n values of the requested distribution, a pure function of the options.
//
// `ill`: a first part of random signs and magnitudes 2^e over an exponent range of about log2(condition), then a few
// terms with decreasing exponents, each cancelling the exact running sum down to its own size, and a last term that
// places the exact sum s where sum|x_i| / |s| equals the target; then all are shuffled. The achieved condition number
// is within a few percent of the target when T's exponent range allows it: for binary16 it is at most about 2^38 n.
// No sum of the values, in any order, overflows the accumulation type (for float and double inputs, magnitudes are
// kept below MAX / n). Needs n >= 3 for a meaningful condition number.
template <floating_input T>
std::vector<T> generate(const generator_options& options);

}  // namespace detred::verify
