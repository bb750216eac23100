// Scans on the CPU backend, in the canonical up-sweep/down-sweep association (docs/ORDER.md):
//   inclusive_scan: out[i] = reduce(x[0..i]),   exclusive_scan: out[i] = reduce(x[0..i)), out[0] = identity,
// where reduce is the canonical reduce, bit for bit: every prefix equals what reduce() returns for that prefix
// alone, so the last inclusive output equals reduce() of the whole input, and a prefix's results do not depend on
// what follows it. O(n) work (one combine per output plus the up-sweep). Same bits for every thread count.
// Operands are never swapped: op need not be commutative. out may be the same buffer as in (in-place); any other
// overlap, or sizes that differ, throws detred::invalid_argument.
//
// Thread safety: as reduce.hpp: any number of host threads may scan at once (distinct output buffers); the user's
// operator is called from several threads at once unless threads = 1; its exceptions reach the caller.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <ranges>

#include "detred/detail/canonical_engine.hpp"
#include "detred/errors.hpp"
#include "detred/execution.hpp"
#include "detred/reduce.hpp"
#include "detred/types/float_traits.hpp"

namespace detred {

namespace detail {
inline void check_scan_buffers(const void* in, std::size_t in_bytes, const void* out, std::size_t out_bytes,
                               std::size_t n, const char* function) {
  require_data(in, n, function);
  require_data(out, n, function);
  if (n == 0 || in == out) return;
  const auto a = reinterpret_cast<std::uintptr_t>(in);
  const auto b = reinterpret_cast<std::uintptr_t>(out);
  if (a < b + out_bytes && b < a + in_bytes)
    throw_invalid(function, "input and output overlap without being the same buffer");
}

template <class In, class Out, class Op>
void generic_scan(const In* in, Out* out, std::size_t n, const Out* identity, Op op, const cpu_options& options,
                  const char* function) {
  check_scan_buffers(in, n * sizeof(In), out, n * sizeof(Out), n, function);
  auto combine = [&op](Out& left, const Out& right) { left = op(left, right); };
  canonical_scan<Out>(
      n, [in](std::size_t i) { return Out(in[i]); }, combine, [out](std::size_t i, Out&& v) { out[i] = std::move(v); },
      identity, options);
}

template <class A, class T>
void sum_scan(const T* in, A* out, std::size_t n, bool exclusive, const cpu_options& options, const char* function) {
  check_scan_buffers(in, n * sizeof(T), out, n * sizeof(A), n, function);
  const A identity = negative_zero<A>();
  canonical_scan<A>(
      n, [in](std::size_t i) { return widen<A>(in[i]); }, [](A& left, const A& right) { left = left + right; },
      [out](std::size_t i, A&& v) { out[i] = canonicalize_nan(v); }, exclusive ? &identity : nullptr, options);
}

template <class R>
void require_same_size(const R& in, std::size_t out_size, const char* function) {
  if (std::ranges::size(in) != out_size) throw_invalid(function, "input and output sizes differ");
}
}  // namespace detail

// Generic scans over a user operator op(left, right) -> T (associative; commutativity not needed).
template <class T, class Op>
void inclusive_scan(const T* in, T* out, std::size_t n, Op op, const cpu_options& options = {}) {
  detail::generic_scan<T, T>(in, out, n, nullptr, op, options, "inclusive_scan");
}
template <class T, class Op>
void exclusive_scan(const T* in, T* out, std::size_t n, T identity, Op op, const cpu_options& options = {}) {
  detail::generic_scan<T, T>(in, out, n, &identity, op, options, "exclusive_scan");
}
template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out, class Op>
void inclusive_scan(const In& in, Out&& out, Op op, const cpu_options& options = {}) {
  detail::require_same_size(in, std::ranges::size(out), "inclusive_scan");
  inclusive_scan(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in), op, options);
}
template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out, class Op>
void exclusive_scan(const In& in, Out&& out, detail::range_value<In> identity, Op op, const cpu_options& options = {}) {
  detail::require_same_size(in, std::ranges::size(out), "exclusive_scan");
  exclusive_scan(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in), std::move(identity), op,
                 options);
}

// Floating-point prefix sums, accumulated in A (exact widening), plain additions in the canonical association:
// out[i] is bit for bit sum<A>(x[0..i], sum_method::tree) (inclusive) or sum<A>(x[0..i), sum_method::tree)
// (exclusive; out[0] = -0.0). NaN outputs are canonical NaNs. Bound per output: gamma_{h(i+1)} sum|x_0..x_i|.
template <floating_accumulation A, floating_input T>
requires accumulable<T, A>
void inclusive_sum_scan(const T* in, A* out, std::size_t n, const cpu_options& options = {}) {
  detail::sum_scan(in, out, n, false, options, "inclusive_sum_scan");
}
template <floating_accumulation A, floating_input T>
requires accumulable<T, A>
void exclusive_sum_scan(const T* in, A* out, std::size_t n, const cpu_options& options = {}) {
  detail::sum_scan(in, out, n, true, options, "exclusive_sum_scan");
}
template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
void inclusive_sum_scan(const In& in, Out&& out, const cpu_options& options = {}) {
  detail::require_same_size(in, std::ranges::size(out), "inclusive_sum_scan");
  inclusive_sum_scan(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in), options);
}
template <std::ranges::contiguous_range In, std::ranges::contiguous_range Out>
void exclusive_sum_scan(const In& in, Out&& out, const cpu_options& options = {}) {
  detail::require_same_size(in, std::ranges::size(out), "exclusive_sum_scan");
  exclusive_sum_scan(std::ranges::data(in), std::ranges::data(out), std::ranges::size(in), options);
}

}  // namespace detred
