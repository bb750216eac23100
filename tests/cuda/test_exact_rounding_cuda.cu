// The GPU exact sum's rounding by a warp (src/cuda/exact/exact_warp_rounding.cuh, docs/EXACT.md "Rounding by a warp")
// against exact_accumulator::rounded(), the one-thread rounding it replaces, run in the same kernel on the same
// states: random limbs of every size and sign, sparse limbs, carry and borrow chains across many limbs, values at the
// ties, the subnormal range and the overflow threshold of each output type (states of the edge-case inputs, nudged by
// one unit of the lowest limbs), zeros of both signs and the special flags. Label `gpu`: skipped, with the reason,
// where no CUDA device is present.
#include <gtest/gtest.h>

#pragma nv_diag_suppress 445  // for_each_type_pair's template lambdas (A, T not in the parameter types)

#include <cuda_runtime_api.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "detred/accumulators/exact.hpp"
#include "detred/cuda/error.hpp"
#include "src/cuda/exact/exact_warp_rounding.cuh"
#include "tests/support/device_array.hpp"
#include "tests/support/exact_inputs.hpp"
#include "tests/support/type_pairs.hpp"

namespace {
using namespace detred;
using detred::cuda::detail::exact_warp_rounded;
using detred::cuda::detail::exact_warp_slots;
using test::device_array;

template <floating_input T>
std::uint64_t raw(T x) {
  return std::uint64_t(bits_of(x));
}

// One warp a state: states[s] holds L limbs then the flags. out[2 s] the warp's rounding, out[2 s + 1] rounded().
template <class Out, class R>
__global__ void round_states(const long long* states, int count, Out* out) {
  using S = exact_accumulator<R>;
  constexpr int L = S::limb_count, J = exact_warp_slots<L>;
  const int s = blockIdx.x, lane = threadIdx.x;
  if (s >= count) return;
  const long long* st = states + std::size_t(s) * (L + 1);
  long long t[J];
#pragma unroll
  for (int j = 0; j < J; ++j) t[j] = lane + 32 * j < L ? st[lane + 32 * j] : 0;
  const Out warp = exact_warp_rounded<Out, R>(t, std::uint32_t(st[L]));
  if (lane == 0) {
    S one;
    for (int k = 0; k < L; ++k) one.set_raw(k, st[k]);
    one.set_count(0, std::uint32_t(st[L]), 1u << 29);
    out[2 * s] = warp;
    out[2 * s + 1] = one.template rounded<Out>();
  }
}

// States of the R layout, each L limbs then the flags word.
template <class R>
std::vector<long long> test_states(std::uint64_t seed) {
  using S = exact_accumulator<R>;
  constexpr int L = S::limb_count;
  std::mt19937_64 rng(seed);
  std::vector<long long> v;
  auto push = [&](const long long* limbs, std::uint32_t flags) {
    v.insert(v.end(), limbs, limbs + L);
    v.push_back(flags);
  };
  const std::uint32_t not_only_neg_zero = S::flag_not_only_negative_zero;
  long long limbs[L];
  // Random limbs of random sizes (below 2^46, as block totals are; below 2^61, near the contract's 2^62; the top one
  // smaller), dense and sparse.
  for (int trial = 0; trial < 7000; ++trial) {
    const int shape = trial % 7;
    for (int k = 0; k < L; ++k) {
      const int bits = shape == 0 ? 46 : shape == 1 ? 33 : shape == 2 ? 32 : shape == 6 ? 61 : int(rng() % 47);
      long long x = (long long)(rng() >> (64 - bits));
      if (shape == 2) x = (long long)(rng() >> 32);  // already digits
      if (rng() & 1) x = -x;
      if (shape >= 3 && shape <= 5 && rng() % 8 != 0) x = 0;  // sparse
      if (shape == 5 && rng() % 2) x = 0;
      limbs[k] = x;
    }
    limbs[L - 1] = (long long)(rng() % 64) - 32;
    if (trial % 7 == 0) limbs[L - 1] = 0;
    push(limbs, not_only_neg_zero);
  }
  // Carry and borrow chains: runs of all-ones or zero digits, with +-1 or +-2^32 at the run's bottom, at every start.
  for (int start = 0; start + 1 < L; ++start)
    for (int len : {1, 3, 10, L}) {
      for (long long kick : {1ll, -1ll, 0x100000000ll, -0x100000000ll}) {
        for (int k = 0; k < L; ++k) limbs[k] = 0;
        for (int k = start + 1; k < start + 1 + len && k < L - 1; ++k) limbs[k] = kick > 0 ? 0xffffffffll : 0;
        limbs[start] = kick > 0 ? 0xffffffffll + kick : kick;
        if (rng() % 2) limbs[std::min(start + len + 1, L - 1)] = 1;
        push(limbs, not_only_neg_zero);
      }
    }
  // Ties and near-ties at every position: a 1 bit, a run of 24 or 53 ones above it, and a half-unit bit below, with
  // and without a sticky bit further down, both signs.
  for (int pos = 2; pos < 32 * (L - 1) - 60; pos += 7)
    for (int run : {23, 24, 52, 53})
      for (int variant = 0; variant < 4; ++variant) {
        for (int k = 0; k < L; ++k) limbs[k] = 0;
        auto set_bit = [&](int b) { limbs[b >> 5] |= 1ll << (b & 31); };
        for (int b = pos + 1; b <= pos + run; ++b) set_bit(b);
        if (variant & 1) set_bit(pos);      // the bit below the run
        if (variant & 2) set_bit(pos - 2);  // a sticky bit further down
        if (rng() % 2)
          for (int k = 0; k < L; ++k) limbs[k] = -limbs[k];
        push(limbs, not_only_neg_zero);
      }
  // Zeros and the special flags.
  for (int k = 0; k < L; ++k) limbs[k] = 0;
  push(limbs, 0);
  push(limbs, not_only_neg_zero);
  limbs[3] = 5;
  limbs[4] = -1;  // a nonzero value written with a negative limb
  for (std::uint32_t flags = 0; flags < 16; ++flags) push(limbs, flags);
  limbs[3] = -0x100000000ll;
  limbs[4] = 1;  // zero written with nonzero limbs
  push(limbs, 0);
  push(limbs, not_only_neg_zero);
  return v;
}

// The states of the edge-case inputs of T (overflow thresholds, subnormals, ties, cancellation), each as its
// accumulator holds it and nudged by +-1 in each of its two lowest nonzero limbs.
template <class R, class T>
void add_edge_states(std::vector<long long>& v) {
  using S = exact_accumulator<R>;
  constexpr int L = S::limb_count;
  for (const auto& [name, x] : test::exact_edge_cases<T>()) {
    S s;
    for (const T& e : x) s.add(e);
    s.normalize();
    long long limbs[L];
    for (int k = 0; k < L; ++k) limbs[k] = s.limb(k);
    v.insert(v.end(), limbs, limbs + L);
    v.push_back(s.flags());
    int low = 0;
    while (low < L - 1 && limbs[low] == 0) ++low;
    for (int k = low; k < low + 2 && k < L; ++k)
      for (long long nudge : {1ll, -1ll}) {
        limbs[k] += nudge;
        v.insert(v.end(), limbs, limbs + L);
        v.push_back(s.flags() | S::flag_not_only_negative_zero);
        limbs[k] -= nudge;
      }
  }
}

template <class Out, class R>
void expect_warp_rounding_equals_rounded(const std::vector<long long>& states, const std::string& what) {
  constexpr int L = exact_accumulator<R>::limb_count;
  const int count = int(states.size() / (L + 1));
  device_array<long long> d_states(states.size());
  device_array<Out> d_out(2 * std::size_t(count));
  cuda::check(cudaMemcpy(d_states.ptr, states.data(), states.size() * sizeof(long long), cudaMemcpyHostToDevice),
              "copy");
  round_states<Out, R><<<count, 32>>>(d_states.ptr, count, d_out.ptr);
  cuda::check(cudaGetLastError(), "round_states launch");
  std::vector<Out> out(2 * std::size_t(count));
  cuda::check(cudaMemcpy(out.data(), d_out.ptr, out.size() * sizeof(Out), cudaMemcpyDeviceToHost), "copy");
  int wrong = 0;
  for (int s = 0; s < count && wrong < 5; ++s) {
    if (raw(out[2 * s]) != raw(out[2 * s + 1])) {
      ++wrong;
      ADD_FAILURE() << what << " " << float_traits<Out>::name << " state " << s << ": warp " << std::hex
                    << raw(out[2 * s]) << ", rounded() " << raw(out[2 * s + 1]);
    }
  }
}

TEST(CudaExactRounding, WarpRoundingEqualsTheOneThreadRounding) {
  if (!test::have_gpu()) GTEST_SKIP() << "no CUDA device on this machine: GPU test not run";
  {
    std::vector<long long> states = test_states<double>(7);
    add_edge_states<double, double>(states);
    add_edge_states<double, float>(states);
    expect_warp_rounding_equals_rounded<double, double>(states, "double layout");
    expect_warp_rounding_equals_rounded<float, double>(states, "double layout");
  }
  {
    std::vector<long long> states = test_states<float>(9);
    add_edge_states<float, float>(states);
    add_edge_states<float, half>(states);
    add_edge_states<float, bfloat16>(states);
    expect_warp_rounding_equals_rounded<float, float>(states, "float layout");
    expect_warp_rounding_equals_rounded<double, float>(states, "float layout");
    expect_warp_rounding_equals_rounded<half, float>(states, "float layout");
    expect_warp_rounding_equals_rounded<bfloat16, float>(states, "float layout");
  }
}

}  // namespace
