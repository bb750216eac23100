// Reductions on the CPU backend: sum (every method), product, min, max, argmin, argmax, and a generic reduce over a
// user's associative operator. Each takes a contiguous range, or a pointer and a count.
//
// Common contract:
// - Bits: every result is a pure function of the input values and their count. The canonical-order algorithms
//   (sum_method::tree and tree_neumaier, product, reduce) give the same bits for every thread count and backend.
// - NaN: propagates; a NaN result is returned as detred's canonical NaN (types/float_traits.hpp).
// - Inf and overflow: as IEEE 754 arithmetic in the stated order gives them (+Inf + -Inf = NaN).
// - Subnormals are kept (detred needs the default floating-point environment: no FTZ, no DAZ, round to nearest).
// - Empty input gives the identity: -0.0 for sums, 1 for products, +Inf for min, -Inf for max, the caller's identity
//   for reduce, and n (= 0, "not found", like std::min_element's end) for argmin/argmax.
// - A null pointer with n > 0 throws detred::invalid_argument.
//
// Thread safety: every function here may be called from any number of host threads at once (on the same or different
// data, read-only inputs shared): calls share only the CPU backend's persistent worker pool, which serves them all,
// and each call gets the bits it would get alone (tests/test_concurrency.cpp, under ThreadSanitizer in CI). A generic
// reduce calls the user's operator from several threads at once (for threads != 1): it must be safe to do so.
// Exceptions from the operator, on any thread, reach the caller (the lowest-numbered failing chunk's).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <type_traits>

#include "detred/detail/canonical_engine.hpp"
#include "detred/errors.hpp"
#include "detred/execution.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

// Marks "the default accumulation type for this input" (default_accumulation_t) in a template argument list.
struct default_accumulation {};

template <class Acc, class T>
using accumulation_for = std::conditional_t<std::is_same_v<Acc, default_accumulation>, default_accumulation_t<T>, Acc>;

namespace detail {
template <class A, class T>
A sum_n(const T* data, std::size_t n, sum_method method, const cpu_options& options);
template <class A, class T>
A product_n(const T* data, std::size_t n, const cpu_options& options);
template <class T>
T min_n(const T* data, std::size_t n);
template <class T>
T max_n(const T* data, std::size_t n);
template <class T>
std::size_t argmin_n(const T* data, std::size_t n);
template <class T>
std::size_t argmax_n(const T* data, std::size_t n);

// Inputs of min, max, argmin, argmax: the floating inputs and 32- and 64-bit signed integers.
template <class T>
concept extremum_input = floating_input<T> || std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t>;

inline void require_data(const void* data, std::size_t n, const char* function) {
  if (data == nullptr && n > 0) throw_invalid(function, "data is null but n > 0");
}

template <class R>
using range_value = std::remove_cv_t<std::ranges::range_value_t<R>>;
}  // namespace detail

// Sum of x[0..n) by `method` (sum_method.hpp: order, bound and reproducibility of each), accumulated in Acc
// (float or double; default: float for 16-bit inputs, else the input type). Every input converts to Acc exactly.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> sum(const T* data, std::size_t n,
                                                                               sum_method method = sum_method::tree,
                                                                               const cpu_options& options = {}) {
  detail::require_data(data, n, "sum");
  return detail::sum_n<accumulation_for<Acc, T>>(data, n, method, options);
}
template <class Acc = default_accumulation, std::ranges::contiguous_range R>
requires floating_input<detail::range_value<R>> &&
    accumulable<detail::range_value<R>, accumulation_for<Acc, detail::range_value<R>>>
auto sum(const R& x, sum_method method = sum_method::tree, const cpu_options& options = {}) {
  return sum<Acc>(std::ranges::data(x), std::ranges::size(x), method, options);
}

// Product of x[0..n) in the canonical order, accumulated in Acc. Without overflow or underflow,
// |error| <= gamma_{n-1} |product|: every rounding scales the whole product, whatever the order (docs/ACCURACY.md).
// The canonical order buys reproducibility and parallelism here, not accuracy. Empty: 1.
template <class Acc = default_accumulation, floating_input T>
requires accumulable<T, accumulation_for<Acc, T>> accumulation_for<Acc, T> product(const T* data, std::size_t n,
                                                                                   const cpu_options& options = {}) {
  detail::require_data(data, n, "product");
  return detail::product_n<accumulation_for<Acc, T>>(data, n, options);
}
template <class Acc = default_accumulation, std::ranges::contiguous_range R>
requires floating_input<detail::range_value<R>>
auto product(const R& x, const cpu_options& options = {}) {
  return product<Acc>(std::ranges::data(x), std::ranges::size(x), options);
}

// IEEE 754-2019 minimum / maximum of x[0..n): exact, so order-independent. NaN if any input is NaN (canonical NaN);
// -0 is less than +0. Empty: +Inf for min, -Inf for max. int32/int64 inputs: the plain minimum / maximum; empty: the
// type's largest value for min, its smallest for max.
template <detail::extremum_input T>
T min(const T* data, std::size_t n) {
  detail::require_data(data, n, "min");
  return detail::min_n(data, n);
}
template <detail::extremum_input T>
T max(const T* data, std::size_t n) {
  detail::require_data(data, n, "max");
  return detail::max_n(data, n);
}
template <std::ranges::contiguous_range R>
requires detail::extremum_input<detail::range_value<R>>
auto min(const R& x) { return min(std::ranges::data(x), std::ranges::size(x)); }
template <std::ranges::contiguous_range R>
requires detail::extremum_input<detail::range_value<R>>
auto max(const R& x) { return max(std::ranges::data(x), std::ranges::size(x)); }

// The lowest index i at which x[i] is the value min(x) (resp. max(x)) returns: ties go to the lowest index, a NaN
// anywhere makes it the first NaN's index, and -0 beats +0 for argmin (+0 beats -0 for argmax). Empty: returns n.
// int32/int64 inputs: the lowest index of the minimum / maximum.
template <detail::extremum_input T>
std::size_t argmin(const T* data, std::size_t n) {
  detail::require_data(data, n, "argmin");
  return detail::argmin_n(data, n);
}
template <detail::extremum_input T>
std::size_t argmax(const T* data, std::size_t n) {
  detail::require_data(data, n, "argmax");
  return detail::argmax_n(data, n);
}
template <std::ranges::contiguous_range R>
requires detail::extremum_input<detail::range_value<R>> std::size_t argmin(const R& x) {
  return argmin(std::ranges::data(x), std::ranges::size(x));
}
template <std::ranges::contiguous_range R>
requires detail::extremum_input<detail::range_value<R>> std::size_t argmax(const R& x) {
  return argmax(std::ranges::data(x), std::ranges::size(x));
}

// Generic reduce: x[0] (+) x[1] (+) ... in the canonical order, where (+) is op(left, right) -> T. op must be
// associative for the result to mean anything, but need NOT be commutative: operands are never swapped, so matrix
// products, function composition and string concatenation reduce correctly. Returns `identity` when n == 0; the
// identity is never combined with an input. Same bits for every thread count. op may be called concurrently from
// several threads, on distinct operands.
template <class T, class Op>
T reduce(const T* data, std::size_t n, T identity, Op op, const cpu_options& options = {}) {
  detail::require_data(data, n, "reduce");
  auto combine = [&op](T& left, const T& right) { left = op(left, right); };
  std::optional<T> result = detail::canonical_reduce<T>(
      n, [data](std::size_t i) { return data[i]; }, combine, options);
  return result ? std::move(*result) : std::move(identity);
}
template <std::ranges::contiguous_range R, class Op>
auto reduce(const R& x, detail::range_value<R> identity, Op op, const cpu_options& options = {}) {
  return reduce(std::ranges::data(x), std::ranges::size(x), std::move(identity), op, options);
}

}  // namespace detred
