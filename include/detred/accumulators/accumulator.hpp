// What detred calls an accumulator, as concepts, and the family of built-in ones.
//
// A sequential_accumulator adds terms one at a time (add) and reports its value (result).
// A mergeable_accumulator can also be built from one term (from_value) and combine with another (merge, this being
// the left operand); the canonical tree needs exactly these two operations, so any mergeable accumulator, detred's or
// a user's, can run in the canonical order on every backend.
//
// Thread safety: accumulators are plain values (no shared state): one object per thread, or external locking; merging
// objects filled on different threads is how the parallel backends use them.
#pragma once

#include <concepts>

#include "detred/accumulators/error_free.hpp"
#include "detred/accumulators/kahan.hpp"
#include "detred/accumulators/neumaier.hpp"
#include "detred/accumulators/pairwise.hpp"
#include "detred/accumulators/plain.hpp"

namespace detred {

template <class Acc>
concept sequential_accumulator = requires(Acc acc, const Acc cacc, typename Acc::value_type x) {
  {acc.add(x)};
  { cacc.result() } -> std::same_as<typename Acc::value_type>;
};

template <class Acc>
concept mergeable_accumulator = sequential_accumulator<Acc> && std::default_initializable<Acc> &&
    requires(Acc acc, const Acc other, typename Acc::value_type x) {
  { Acc::from_value(x) } -> std::same_as<Acc>;
  {acc.merge(other)};
};

static_assert(mergeable_accumulator<plain_accumulator<float>>);
static_assert(mergeable_accumulator<neumaier_accumulator<double>>);
static_assert(sequential_accumulator<kahan_accumulator<float>>);
static_assert(!mergeable_accumulator<kahan_accumulator<float>>);

}  // namespace detred
