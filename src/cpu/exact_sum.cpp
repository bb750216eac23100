// sum_method::exact on the CPU (exact_sum.hpp): every chunk of 2^20 terms goes into its own exact_accumulator, the
// chunks' states are merged (integer limb additions: any grouping gives the same state value), and the total is
// rounded once.
//
// Fast path (float and double inputs; docs/EXACT.md "The CPU backend"): a block of 256 terms whose largest magnitude
// lies in [2^E, 2^(E+1)), E in [-978, 45] (double layout; [-69, 45] for the float layout), and whose smallest lies in a
// binade >= E - 38 (so no zero) is split term by term into hi = (x + C) - C, x rounded to a multiple of g = 2^(E-44)
// (C = 1.5 * 2^52 * g), and r = x - hi, exact, a multiple of 2^(E-90) (x's last place is) with |r| <= g/2. The sums HI
// of the hi (multiples of g, at most 256 * 2^45 g = 2^53 g) and R of the r (multiples of 2^(E-90), at most 2^53 of
// them) are exact in any order, so the block adds HI / g and R / 2^(E-90) to the limbs as two 64-bit integers. With
// AVX2 (checked at run time) four terms per instruction, the same operations. A NaN makes HI or R NaN, which sends the
// block back. Any other block takes the term-by-term path: for binary64, exponent bins after xsum's large
// superaccumulator (exponent_bins in exact_blocks.hpp); otherwise the accumulator's add(). After a block fails the fast
// path, the next 1, 2, 4 .. 16 blocks skip the attempt. Every path adds the exact value, so which one runs never shows
// in a bit.
#include "src/cpu/exact_sum.hpp"

#include <cstdint>
#include <memory>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/detail/parallel.hpp"
#include "src/cpu/exact_blocks.hpp"
#include "src/distributed/partial_sums.hpp"

namespace detred::detail {

namespace {
using cpu::exact::add_block_fast;
using cpu::exact::block;
using cpu::exact::exponent_bins;
#if DETRED_EXACT_AVX2
using cpu::exact::add_block_fast_avx2;
#endif
constexpr std::size_t exact_chunk = std::size_t{1} << 20;

template <class State, class T>
void add_range(State& s, const T* x, std::size_t n) {
  if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
    std::size_t i = 0;
    std::uint64_t fast_blocks = 0;
    // The term-by-term path: exponent bins for binary64 (made on first use), the state's add() otherwise.
    std::unique_ptr<exponent_bins<State>> bins;
    auto slow = [&](const T* p, std::size_t count) {
      if constexpr (std::same_as<T, double> && State::is_double) {
        if (!bins) bins = std::make_unique<exponent_bins<State>>();
        bins->add(s, p, count);
      } else {
        s.add(p, count);
      }
    };
    // After a block that fails the fast path, the next `skip` blocks go straight to the slow path (1, 2, 4 .. 16
    // after consecutive failures; a success resets it): full-range data do not pay for a fast attempt on every block.
    // Either path adds the exact value, so this changes the speed only.
    unsigned skip = 0, backoff = 0;
    auto one_block = [&](const T* p, auto&& fast) {
      if (skip) {
        --skip;
        slow(p, block);
      } else if (fast(p)) {
        ++fast_blocks;
        backoff = 0;
      } else {
        slow(p, block);
        backoff = backoff ? (backoff < 16 ? 2 * backoff : 16) : 1;
        skip = backoff;
      }
    };
#if DETRED_EXACT_AVX2
    if (cpu::avx2::available())
      for (; i + block <= n; i += block) one_block(x + i, [&](const T* p) { return add_block_fast_avx2(s, p); });
#endif
    for (; i + block <= n; i += block) one_block(x + i, [&](const T* p) { return add_block_fast(s, p); });
    if (i < n) slow(x + i, n - i);
    std::uint64_t added = fast_blocks * block;
    bool not_only_negative_zero = fast_blocks != 0;  // a fast block has no zero
    if (bins) {
      bins->fold(s);
      added += bins->terms;
      not_only_negative_zero = not_only_negative_zero || bins->terms != 0;  // a binned term is nonzero
    }
    if (added) {
      // Two or three 64-bit additions (digits below 2^32) per fast block and per used bin; a chunk has at most 2^18
      // terms, so normalising once here keeps every limb far from its bound.
      s.set_count(s.count() + added, s.flags() | (not_only_negative_zero ? State::flag_not_only_negative_zero : 0u), 0);
      s.normalize();
    }
  } else {
    s.add(x, n);
  }
}
}  // namespace

template <class T>
exact_accumulator_for<T> exact_state_n(const T* data, std::size_t n, const cpu_options& options) {
  using state = exact_accumulator_for<T>;
  const std::size_t chunks = (n + exact_chunk - 1) / exact_chunk;
  state total;
  if (chunks <= 1) {
    add_range(total, data, n);
  } else {
    std::vector<state> partial(chunks);
    parallel_for_chunks(chunks, options, [&](std::size_t c) {
      const std::size_t begin = c * exact_chunk;
      const std::size_t count = n - begin < exact_chunk ? n - begin : exact_chunk;
      add_range(partial[c], data + begin, count);
    });
    for (const state& s : partial) total.merge(s);
  }
  return total;
}

template <class A, class T>
A exact_sum_n(const T* data, std::size_t n, const cpu_options& options) {
  return exact_state_n(data, n, options).template rounded<A>();
}

#define DETRED_INSTANTIATE_EXACT(A, T) template A exact_sum_n<A, T>(const T*, std::size_t, const cpu_options&);
#define DETRED_INSTANTIATE_EXACT_STATE(T) \
  template exact_accumulator_for<T> exact_state_n<T>(const T*, std::size_t, const cpu_options&);
DETRED_INSTANTIATE_EXACT_STATE(half)
DETRED_INSTANTIATE_EXACT_STATE(bfloat16)
DETRED_INSTANTIATE_EXACT_STATE(float)
DETRED_INSTANTIATE_EXACT_STATE(double)
#undef DETRED_INSTANTIATE_EXACT_STATE
DETRED_INSTANTIATE_EXACT(float, half)
DETRED_INSTANTIATE_EXACT(double, half)
DETRED_INSTANTIATE_EXACT(float, bfloat16)
DETRED_INSTANTIATE_EXACT(double, bfloat16)
DETRED_INSTANTIATE_EXACT(float, float)
DETRED_INSTANTIATE_EXACT(double, float)
DETRED_INSTANTIATE_EXACT(double, double)
#undef DETRED_INSTANTIATE_EXACT

}  // namespace detred::detail
