// pairwise_accumulator: a streaming accumulator that adds in the canonical order (docs/ORDER.md).
//
// add(x_0), add(x_1), ..., add(x_{n-1}) then result() gives bit for bit what detred's tree sum gives for the same n
// with the same inner accumulator, on every backend: it is the sequential reference implementation of the order.
// Memory: 64 inner accumulators; time: amortised one merge per add.
// Error with the plain inner accumulator: <= gamma_{h(n)} sum|x_i| (h from canonical_depth); with neumaier, see
// neumaier.hpp. An empty accumulator gives the inner accumulator's empty result (-0.0).
#pragma once

#include "detred/accumulators/plain.hpp"
#include "detred/config.hpp"
#include "detred/order.hpp"

namespace detred {

struct merge_accumulators {
  template <class Acc>
  constexpr DETRED_HD void operator()(Acc& left, const Acc& right) const {
    left.merge(right);
  }
};

template <class Inner>
class pairwise_accumulator {
 public:
  using value_type = typename Inner::value_type;

  constexpr DETRED_HD void add(value_type x) { counter_.push(Inner::from_value(x), 0); }
  // Appends the root of a complete canonical subtree over the next 2^level inputs (count() % 2^level == 0).
  constexpr DETRED_HD void add_subtree(const Inner& root, int level) { counter_.push(root, level); }

  constexpr DETRED_HD std::uint64_t count() const { return counter_.count(); }
  constexpr DETRED_HD Inner root() const { return counter_.empty() ? Inner{} : counter_.fold(); }
  constexpr DETRED_HD value_type result() const { return root().result(); }

 private:
  binary_counter<Inner, merge_accumulators> counter_;
};

}  // namespace detred
