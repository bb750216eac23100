// sum_method::exact on the CPU (exact_sum.hpp): every chunk of 2^18 terms goes into its own exact_accumulator, the
// chunks' states are merged (integer limb additions: any grouping gives the same state value), and the total is
// rounded once.
//
// Fast path (float and double inputs; docs/EXACT.md "The CPU backend"): a block of 64 terms whose largest magnitude
// M lies in [2^-977, 2^46) (double layout; [2^-69, 2^46) for the float layout) is scaled by 2^a, a = 1068 - F (F the
// biased binary64 exponent of M), so that every scaled term y has |y| < 2^46. y splits exactly into an integer
// hi = (y + C) - C (C = 1.5 * 2^52: round to an integer) and r = y - hi (|r| <= 1/2, exact); z = r * 2^46 splits the
// same way into lo and z - lo. When every z - lo is zero the block is exactly HI * 2^-a + LO * 2^(-a-46) with HI and LO
// the sums of the hi and lo: integers below 2^52 in magnitude (64 terms of at most 2^46), so their double sums are
// exact in any order. HI and LO then go into the limbs as two 64-bit integers. Any other block (a term below the
// 92-bit window, NaN, Inf, zeros only, M outside the range) takes the term-by-term path. Both paths add the exact
// value, so which one runs never shows in a bit.
#include "src/cpu/exact_sum.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/detail/parallel.hpp"
#include "detred/distributed/partial_sums.hpp"

namespace detred::detail {

namespace {
constexpr std::size_t exact_chunk = std::size_t{1} << 18;
constexpr std::size_t block = 64;

// Adds v * 2^(pos + low_exponent) to the state's limbs: |v| < 2^63 as three 32-bit digits of |v| << (pos mod 32).
template <class State>
void add_int64_at(State& s, std::int64_t v, int pos) {
  if (v == 0) return;
  const bool negative = v < 0;
  const std::uint64_t m = negative ? 0 - std::uint64_t(v) : std::uint64_t(v);
  const int k = pos >> 5, shift = pos & 31;
  const std::uint64_t low = m << shift, high = shift ? m >> (64 - shift) : 0;
  const std::int64_t d[3] = {std::int64_t(low & 0xffffffffu), std::int64_t(low >> 32), std::int64_t(high)};
  for (int i = 0; i < 3; ++i) s.set_raw(k + i, s.limb(k + i) + (negative ? -d[i] : d[i]));
}

inline double as_double_exact(float x) { return double(x); }
inline double as_double_exact(double x) { return x; }

// One block by the fast path; false (nothing added) when the block needs the term-by-term path.
template <class State, class T>
bool add_block_fast(State& s, const T* x) {
  // The largest magnitude (NaN compares false and is skipped here; the exactness check below rejects it and Inf).
  double lane_max[4] = {0, 0, 0, 0};  // four independent chains
  for (std::size_t i = 0; i < block; i += 4)
    for (int j = 0; j < 4; ++j) {
      const double v = std::fabs(as_double_exact(x[i + j]));
      lane_max[j] = v > lane_max[j] ? v : lane_max[j];
    }
  const double m01 = lane_max[0] > lane_max[1] ? lane_max[0] : lane_max[1];
  const double m23 = lane_max[2] > lane_max[3] ? lane_max[2] : lane_max[3];
  const double max_magnitude = m01 > m23 ? m01 : m23;
  std::uint64_t max_bits;
  std::memcpy(&max_bits, &max_magnitude, 8);
  const int F = int(max_bits >> 52);
  constexpr int lowest_F = State::is_double ? 45 : 954;  // 2^a representable; LO's position >= 0
  if (F < lowest_F || F > 1068) return false;            // also rejects Inf (F = 2047) and all-zero blocks
  const int a = 1068 - F;
  double scale;
  const std::uint64_t scale_bits = std::uint64_t(a + 1023) << 52;
  std::memcpy(&scale, &scale_bits, 8);
  constexpr double C = 6755399441055744.0;  // 1.5 * 2^52
  constexpr double two46 = 70368744177664.0;
  double hi_sum[4] = {0, 0, 0, 0}, lo_sum[4] = {0, 0, 0, 0}, bad[4] = {0, 0, 0, 0};
  for (std::size_t i = 0; i < block; i += 4) {
    for (int j = 0; j < 4; ++j) {
      const double y = as_double_exact(x[i + j]) * scale;
      const double hi = (y + C) - C;
      const double z = (y - hi) * two46;
      const double lo = (z + C) - C;
      hi_sum[j] += hi;
      lo_sum[j] += lo;
      bad[j] += std::fabs(z - lo);  // a sum of magnitudes: zero iff every z - lo is (NaN, Inf: NaN)
    }
  }
  if (!(bad[0] + bad[1] + bad[2] + bad[3] == 0)) return false;
  const double HI = (hi_sum[0] + hi_sum[1]) + (hi_sum[2] + hi_sum[3]);  // exact: integers below 2^52
  const double LO = (lo_sum[0] + lo_sum[1]) + (lo_sum[2] + lo_sum[3]);
  add_int64_at(s, std::int64_t(HI), -a - State::low_exponent);
  add_int64_at(s, std::int64_t(LO), -a - 46 - State::low_exponent);
  return true;
}

template <class State, class T>
void add_range(State& s, const T* x, std::size_t n) {
  if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
    std::size_t i = 0;
    std::uint64_t fast_blocks = 0;
    for (; i + block <= n; i += block) {
      if (add_block_fast(s, x + i)) {
        ++fast_blocks;
      } else {
        s.add(x + i, block);
      }
    }
    if (i < n) s.add(x + i, n - i);
    if (fast_blocks) {
      // Two 64-bit additions (digits below 2^32) per fast block, 64 terms each, none of them -0.0 only; a chunk has at
      // most 2^12 blocks, so normalising once here keeps every limb far from its bound.
      s.set_count(s.count() + fast_blocks * block, s.flags() | State::flag_not_only_negative_zero, 0);
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
