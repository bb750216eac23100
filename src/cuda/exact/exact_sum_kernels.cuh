// The GPU exact sum (docs/EXACT.md "On the GPU"). Kernel 1: each block takes a contiguous range of at most 2^30
// terms, read as 16-byte vectors. Each thread keeps a window accumulator in registers (a 64-bit integer for the
// binary32 family, 128-bit for binary64) in units of 2^(lsb(top) - window), `top` the largest exponent field the
// thread has seen: a term whose field lies in [top - window, top] is its integer significand shifted by
// field - (top - window) bits, added with plain integer adds (the fast path). A term above `top` first deposits the
// accumulator and moves the window up; a term below the window, a zero, a subnormal too small or a NaN or infinity
// takes the slow path: its 32-bit digits go into the thread's own copy of the limbs in shared memory (no atomics: no
// other thread touches them). At the end the accumulators are deposited, the threads' limbs added into one normalised
// state per block and written to the workspace. Kernel 2 (one block): limb k of the total is the integer sum of limb k
// over the blocks; one thread rounds it. Every step is an exact integer addition: the bits cannot depend on the grid,
// the schedule or which path a term took. That is the register_window algorithm; the others (exponent bins for the
// binary32 family, adjacent windows for binary64) keep the same kernel and change only the per-thread accumulation:
// exact_block_algorithm below.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "detred/accumulators/exact.hpp"
#include "detred/cuda/detail/dependent_launch.cuh"
#include "detred/cuda/detail/prefetch.cuh"
#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/workspace.hpp"
#include "src/cuda/exact/exact_bins_thread.cuh"
#include "src/cuda/exact/exact_extract_thread.cuh"
#include "src/cuda/exact/exact_sum.hpp"
#include "src/cuda/exact/exact_windows_thread.cuh"

namespace detred::cuda::detail {

// Threads a block of kernel 1 for every tuning but adjacent_windows, which chooses its own (Tune::block_threads).
inline constexpr int exact_block_threads = 256;

template <class T>
using exact_state = exact_accumulator_for<T>;

// The fast path's format: binary64 terms as doubles, every other input widened exactly to binary32.
template <class T>
using exact_work = std::conditional_t<std::same_as<T, double>, double, float>;

// Window parameters per working format F (docs/EXACT.md "On the GPU").
template <class F>
struct exact_window_traits;
template <>
struct exact_window_traits<double> {
  using bits = unsigned long long;
  using acc = __int128;
  using uacc = unsigned __int128;
  static constexpr int field_shift = 52;
  static constexpr int field_all_ones = 0x7ff;
  static constexpr bits fraction_mask = (bits{1} << 52) - 1;
  static constexpr int lsb_offset = -1075;        // the last place of a term of field f >= 1 weighs 2^(f + lsb_offset)
  static constexpr int window = 56;               // fields top - 56 .. top: shifted significands below 2^109
  static constexpr unsigned headroom = 1u << 17;  // adds between deposits: |acc| < 2^17 * 2^109 = 2^126
};
template <>
struct exact_window_traits<float> {
  using bits = unsigned;
  using acc = long long;
  using uacc = unsigned long long;
  static constexpr int field_shift = 23;
  static constexpr int field_all_ones = 0xff;
  static constexpr bits fraction_mask = (bits{1} << 23) - 1;
  static constexpr int lsb_offset = -150;
  static constexpr int window = 24;               // shifted significands below 2^48
  static constexpr unsigned headroom = 1u << 14;  // |acc| < 2^14 * 2^48 = 2^62
};

// Kernel 1's per-thread algorithm. Both add every term exactly once, exactly, into integer limbs that are summed per
// block, so neither the choice nor its tuning can change a bit (the order is irrelevant: exact integer additions); they
// differ only in speed. docs/EXACT.md "On the GPU" has both proofs.
enum class exact_block_algorithm {
  // A register accumulator over a window of exponent fields that follows the largest term seen (the fast path: a shift
  // and an integer add per term), and the thread's own limbs in shared memory for every term below the window (the
  // slow path: a decode and two or three read-modify-writes). Every input type. Fast when the data span fewer binades
  // than the window (24 for the binary32 family, 56 for binary64: uniform, normal); full-range and ill-conditioned data
  // take the slow path for most terms and diverge inside a warp (0.28-0.38x CUB on the H100).
  register_window,
  // The binary32 family only: 16 binary64 bins of 16 binades each (plus one for NaN and infinities) per thread in
  // shared memory; every term is widened to binary64 and added to its bin (one shared read-modify-write, no branch),
  // and the bins are flushed into the thread's limbs every 2^14 terms. The same instructions on every data set.
  exponent_bins,
  // binary64 only (issue 17): K 128-bit register accumulators over K adjacent windows of 64 exponent fields below the
  // largest field the thread has met, so that data spanning up to 64K binades never leave the registers (uniform,
  // normal, ill-conditioned to 1e30: about 100 binades); every other term goes by a lean slow path straight from its
  // bits (no generic decode) into the thread's limbs; one path per 16-byte vector (no split of a warp term by term);
  // limb rows 0 .. 66 only and a block size of its own (128 threads: 67 KiB a block, three blocks an SM). Order-free
  // and exact like the others (docs/EXACT.md "Adjacent windows for binary64"). H100, 1 GiB: K = 1 0.89x CUB on
  // uniform and normal but 0.46x on ill-conditioned data; K = 2 0.79x there but 0.81-0.82x on uniform and normal.
  adjacent_windows,
  // binary64 only: adjacent_windows with two windows and a warp-uniform mode, to have K = 1's speed while the data
  // stay in window 0 and K = 2's when they reach window 1. Each warp starts narrow (window 0 alone: K = 1's test and
  // add); once a step the warp votes (__any_sync): wide (both windows: K = 2's) while some lane has met more vectors
  // that only the wide mode takes fast than 2^-s times its vectors below both windows (s = 31: sticky, wide from the
  // first such vector on). One branch on the mode a step, no divergence between modes inside a warp. The mode only
  // chooses which exact path adds a term (docs/EXACT.md "Adaptive windows"): the same bits as every other variant.
  // Optional (session 8): a third mode, all_slow, for data mostly below both windows (full range), and the slow path
  // out of line in the other two (exact_outlined_tuning).
  adaptive_windows,
  // binary64 only (session 9): one window of 52 L - 53 fields (L = 2: 51, L = 3: 103) whose terms are cut into L
  // 64-bit integers by floating-point additions of constants (exact_extract_thread.cuh), so that a window term costs
  // 3L - 2 additions and 2L integer adds instead of a 128-bit shift-and-add; the same lean slow path and all_slow mode
  // as adaptive_windows. Exact and order-free like the others (docs/EXACT.md "Extracted levels").
  extract_levels,
};

// Kernel 1's tuning (speed only: every choice adds the same exact values; bench_cuda_exact --variants compares them):
// 16-byte vectors a thread loads per step, copies of the limbs per thread (slow-path terms of a step alternate between
// them, so consecutive read-modify-writes of one thread do not wait for each other), and whether slow-path digits go in
// by shared-memory atomic adds (no read-modify-write chain; still no contention: each thread has its own copy).
template <class T, int Unroll, int Columns, bool Atomic>
struct exact_tuning_of {
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::register_window;
  static constexpr int unroll = Unroll;
  static constexpr int columns = Columns;
  static constexpr bool atomic = Atomic;
  static constexpr int windows = 1;
  static constexpr int block_threads = exact_block_threads;
  static constexpr int limb_rows = exact_accumulator_for<T>::limb_count;  // per column
  static constexpr int min_blocks = std::same_as<T, double> ? 1 : 4;      // per SM, for the register allocation
  static constexpr std::size_t shared_bytes = std::size_t(limb_rows) * Columns * block_threads * 8;
};
// The exponent_bins algorithm (binary32 family): 16-byte vectors per thread per step.
template <class T, int Unroll>
struct exact_bins_tuning {
  static_assert(!std::same_as<T, double>, "exponent_bins: the binary32 family only (docs/EXACT.md)");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::exponent_bins;
  static constexpr int unroll = Unroll;
  static constexpr int columns = 1;
  static constexpr bool atomic = false;
  static constexpr int windows = 0;
  static constexpr int block_threads = exact_block_threads;
  static constexpr int limb_rows = exact_float_bins::limb_rows;
  // 17 bins and 10 limb rows of 8 bytes a thread: 54 KiB a block of 256, four blocks an SM (64 registers a thread);
  // an unroll above 4 needs more registers than that (two 16-byte buffers of Unroll vectors): two blocks an SM.
  static constexpr int min_blocks = Unroll > 4 ? 2 : 4;
  static constexpr std::size_t shared_bytes = std::size_t(limb_rows + exact_float_bins::bin_count) * block_threads * 8;
};
// The adjacent_windows algorithm (binary64): 16-byte vectors per thread per step, windows K (1 .. 4 useful: 64K
// binades), threads a block (a multiple of 32). Shared memory: 67 limb rows of 8 bytes a thread (536 bytes), so an
// H100 / H200 SM (228 KiB, 1 KiB reserved a block) keeps 384 threads at 64, 96 or 128 a block, 256 at 256.
template <class T, int Unroll, int Windows, int BlockThreads>
struct exact_windows_tuning {
  static_assert(std::same_as<T, double>, "adjacent_windows: binary64 only (docs/EXACT.md)");
  static_assert(BlockThreads % 32 == 0 && BlockThreads >= 32 && BlockThreads <= 1024, "whole warps");
  static_assert(Unroll >= 1 && Unroll * 2 <= int(exact_windows_thread<1, 32>::headroom), "a step fits the headroom");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::adjacent_windows;
  static constexpr int unroll = Unroll;
  static constexpr int columns = 1;
  static constexpr bool atomic = false;
  static constexpr int windows = Windows;
  static constexpr int block_threads = BlockThreads;
  static constexpr int limb_rows = exact_binary64_geometry::limb_rows;
  static constexpr std::size_t shared_bytes = std::size_t(limb_rows) * block_threads * 8;
  // Blocks an SM the shared memory allows (228 KiB an SM; 1 KiB reserved and about 0.6 KiB of static shared memory a
  // block): the register allocation is asked to allow as many (three at 128 threads: up to 168 registers a thread).
  static constexpr int min_blocks = int((228u * 1024u) / (shared_bytes + 1024u + 640u)) > 0
                                        ? int((228u * 1024u) / (shared_bytes + 1024u + 640u))
                                        : 1;
};
// The adaptive_windows algorithm (binary64): adjacent_windows' tuning with K = 2 (the same shared memory and limb
// rows) and the mode's rule: wide while some lane of the warp has more rescued vectors than 2^-AdaptShift times its
// slow ones (31: sticky); SlowRun > 0: the all_slow mode, SlowRun steps at a time (0: never; -1: for good once voted).
template <class T, int Unroll, int BlockThreads, int AdaptShift, int SlowRun = 0>
struct exact_adaptive_windows_tuning : exact_windows_tuning<T, Unroll, 2, BlockThreads> {
  static_assert(AdaptShift >= 0 && AdaptShift <= 31, "a shift 0 .. 31");
  static_assert(SlowRun >= -1, "steps in the all_slow mode (-1: to the end of the thread's share)");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::adaptive_windows;
  static constexpr int adapt_shift = AdaptShift;
  static constexpr int slow_run = SlowRun;
};
// The windows thread's AdaptShift and SlowRun for a tuning: the adaptive tuning's, -1 (no mode) and 0 for
// adjacent_windows.
template <class Tune>
DETRED_HD constexpr int exact_adapt_shift() {
  if constexpr (requires { Tune::adapt_shift; })
    return Tune::adapt_shift;
  else
    return -1;
}
// A windows tuning whose windows modes call the slow path out of line (exact_windows_thread's OutlineSlow).
template <class Base>
struct exact_outlined_tuning : Base {
  static constexpr bool outline_slow = true;
};
// The extract_levels algorithm (binary64): 16-byte vectors per thread per step, levels (2 or 3), the all_slow mode
// (as exact_adaptive_windows_tuning's SlowRun), whether a step is tested at once (exact_extract_thread's StepTest),
// threads a block (adjacent_windows' shared memory: 67 limb rows of 8 bytes a thread, so at most 384 an SM).
template <class T, int Unroll, int Levels, int SlowRun = -1, bool StepTest = true, int BlockThreads = 256,
          int PrefetchSteps = 0>
struct exact_extract_tuning : exact_windows_tuning<T, Unroll, 1, BlockThreads> {
  static constexpr int prefetch_steps = PrefetchSteps;
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::extract_levels;
  static constexpr int levels = Levels;
  static constexpr int slow_run = SlowRun;
  static constexpr bool step_test = StepTest;
};
// extract_levels' L2 prefetch distance in steps (0: none; the other algorithms never prefetch).
template <class Tune>
DETRED_HD constexpr int exact_prefetch_steps() {
  if constexpr (requires { Tune::prefetch_steps; })
    return Tune::prefetch_steps;
  else
    return 0;
}
template <class Tune>
DETRED_HD constexpr bool exact_outline_slow() {
  if constexpr (requires { Tune::outline_slow; })
    return Tune::outline_slow;
  else
    return false;
}
template <class Tune>
DETRED_HD constexpr int exact_slow_run() {
  if constexpr (requires { Tune::slow_run; })
    return Tune::slow_run;
  else
    return 0;
}
// Defaults: exponent bins for the binary32 family (the same speed on every data set, docs/EXACT.md); binary64 takes the
// adaptive windows (session 6; per-thread binary64 bins over 2046 binades do not fit in shared memory at a useful
// occupancy: docs/EXACT.md "Why binary64 keeps register windows, not bins") with, since session 8, the slow path out of
// line in the windows modes and the all_slow mode for good once voted (measured on the H100, 1 GiB, ratio to CUB,
// against session 6's adaptive windows: uniform 0.90 (0.89-0.90), normal 0.89-0.90 (0.88-0.90), full range 0.84-0.85
// (0.56-0.58), ill-conditioned 0.75-0.76 (0.72-0.74); docs/PERFORMANCE.md, session 8). Unrolls measured on the H100
// (docs/PERFORMANCE.md, session 5): for the binary32 family's bins, 8 vectors a thread at two blocks an SM beat 2 and 4
// at four blocks an SM on every data set and type (0.90-0.91x CUB against 0.84-0.86x for fp32; 1.05x against
// 0.97-1.01x TransformReduce for fp16/bf16); the binary64 window's unroll 8 beat 16 on every data set (0.1-3%).
template <class T>
using exact_window_tuning =
    std::conditional_t<std::same_as<T, double>, exact_tuning_of<T, 8, 1, false>, exact_tuning_of<T, 4, 2, false>>;
template <class T>
using exact_default_tuning =
    std::conditional_t<std::same_as<T, double>, exact_extract_tuning<T, 10, 3>, exact_bins_tuning<T, 8>>;

// One thread's accumulation: the register window and the thread's own limbs in shared memory (column c's limb k at
// limbs[(c * limb_count + k) * Tune::block_threads]).
template <class T, class Tune = exact_window_tuning<T>>
struct exact_thread {
  using S = exact_state<T>;
  using F = exact_work<T>;
  using W = exact_window_traits<F>;
  using bits = typename W::bits;
  using acc_t = typename W::acc;
  using uacc = typename W::uacc;
  static constexpr int sign_shift = int(sizeof(bits) * 8) - 1;

  long long* limbs;
  acc_t acc = 0;
  // The window is fields base .. base + window. It starts empty of fields (base + window = -1); the first nonzero
  // finite term moves it to top = max(field, window + 1), so base >= 1 from then on: a fast term is never subnormal.
  int base = -W::window - 1;
  unsigned room = W::headroom;
  unsigned flags = 0;

  DETRED_HD DETRED_INLINE void add_digit(int k, long long d, int column) {
    long long* limb = limbs + (column * S::limb_count + k) * Tune::block_threads;
#ifdef __CUDA_ARCH__
    if constexpr (Tune::atomic) {
      atomicAdd(reinterpret_cast<unsigned long long*>(limb), (unsigned long long)d);
      return;
    }
#endif
    *limb += d;
  }

  // Deposits acc * 2^(lsb(base + window) - window) = acc * 2^lsb(base) into the limbs: |acc| shifted to its bit
  // position, as 32-bit digits.
  DETRED_HD DETRED_INLINE void deposit() {
    if (acc == 0) return;
    const bool negative = acc < 0;
    const uacc magnitude = negative ? uacc(0) - uacc(acc) : uacc(acc);
    const int pos = base + W::lsb_offset - S::low_exponent;  // >= 1 + lsb_offset - low_exponent > 0
    const int k = pos >> 5, shift = pos & 31;
    constexpr int width = int(sizeof(uacc) * 8);
    const uacc low = magnitude << shift;
    const unsigned high = shift ? unsigned(magnitude >> (width - shift)) : 0u;
#pragma unroll
    for (int i = 0; i <= width / 32; ++i) {
      const long long d = i < width / 32 ? (long long)(unsigned(low >> (32 * i))) : (long long)high;
      add_digit(k + i, negative ? -d : d, 0);
    }
    acc = 0;
  }

  // Makes room for `count` more fast adds.
  DETRED_HD DETRED_INLINE void reserve(unsigned count) {
    if (room < count) {
      deposit();
      room = W::headroom;
    }
    room -= count;
  }

  DETRED_HD DETRED_INLINE void slow(bits b, int column) {
    const auto d = S::decode(detred::bit_cast<F>(b));
    flags |= d.flags;
    if (d.limb < 0) return;
    const long long v[3] = {(long long)(d.low & 0xffffffffu), (long long)(d.low >> 32), (long long)d.high};
    constexpr int D = std::same_as<F, double> ? 3 : 2;
#pragma unroll
    for (int i = 0; i < D; ++i) add_digit(d.limb + i, d.negative ? -v[i] : v[i], column);
  }

  // A term whose field is base + shift, shift in 0 .. window: (-1)^s m << shift into acc.
  DETRED_HD DETRED_INLINE void fast(bits b, int shift) {
    const bits m = (b & W::fraction_mask) | (W::fraction_mask + 1);
    uacc v;
    if constexpr (std::same_as<F, double>) {
      // m < 2^53, shift <= 56 < 64: the 128-bit m << shift from two 64-bit shifts.
      v = (uacc((m >> 1) >> (63 - shift)) << 64) | uacc(m << shift);
    } else {
      v = uacc(m) << shift;
    }
    // -v = (v ^ all ones) + 1: the sign mask and the sign bit as the carry in.
    const uacc sign = uacc(acc_t(std::make_signed_t<bits>(b)) >> sign_shift);
    acc += acc_t((v ^ sign) + uacc(b >> sign_shift));
  }

  DETRED_HD DETRED_INLINE int field_of(bits b) const { return int(b >> W::field_shift) & W::field_all_ones; }

  // Any term.
  DETRED_HD DETRED_INLINE void add(bits b, int column) {
    const int field = field_of(b);
    if (unsigned(field - base) > unsigned(W::window)) {
      if (field > base + W::window && field != W::field_all_ones && field != 0) {
        deposit();
        base = (field > W::window + 1 ? field : W::window + 1) - W::window;
        flags |= S::flag_not_only_negative_zero;  // a nonzero finite term
      } else {
        slow(b, column);
        return;
      }
    }
    fast(b, field - base);
  }

  // The E terms of one vector: the fast path for all when all are in the window (one test), else term by term.
  // `first`: the index of the vector's first term in its step (chooses the slow path's column).
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const bits (&b)[E], int first) {
    unsigned worst = 0;
    int shift[E];
#pragma unroll
    for (int j = 0; j < E; ++j) {
      shift[j] = field_of(b[j]) - base;
      worst = unsigned(shift[j]) > worst ? unsigned(shift[j]) : worst;
    }
    if (worst <= unsigned(W::window)) {
#pragma unroll
      for (int j = 0; j < E; ++j) fast(b[j], shift[j]);
    } else {
#pragma unroll
      for (int j = 0; j < E; ++j) add(b[j], (first + j) % Tune::columns);
    }
  }
};

// Widens a binary16 to binary32 bits exactly. In device code the conversion instruction (exact, PTX ISA cvt.f32.f16;
// a NaN stays a NaN); on the host, and in the test that checks all 65536 patterns, the integer version.
DETRED_HD DETRED_INLINE unsigned exact_half_to_float_bits(unsigned h) {
#ifdef __CUDA_ARCH__
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)h));
  return __float_as_uint(f);
#else
  const unsigned sign = (h & 0x8000u) << 16;
  const unsigned field = (h >> 10) & 0x1fu, fraction = h & 0x3ffu;
  if (field == 0x1fu) return sign | 0x7f800000u | (fraction << 13);
  if (field != 0) return sign | ((field + 112u) << 23) | (fraction << 13);
  if (fraction == 0) return sign;
  return sign | detred::bit_cast<unsigned>(float(fraction) * 5.9604644775390625e-8f);  // fraction * 2^-24, exact
#endif
}

// The working-format bits of element j of a 16-byte vector.
template <class T>
using exact_bits = typename exact_window_traits<exact_work<T>>::bits;

template <class T>
DETRED_HD DETRED_INLINE exact_bits<T> exact_element(const uint4& v, int j) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
  if constexpr (std::same_as<T, double>) {
    return (static_cast<unsigned long long>(w[2 * j + 1]) << 32) | w[2 * j];
  } else if constexpr (std::same_as<T, float>) {
    return w[j];
  } else {
    const unsigned h = (w[j / 2] >> (16 * (j % 2))) & 0xffffu;
    if constexpr (std::same_as<T, bfloat16>)
      return h << 16;
    else
      return exact_half_to_float_bits(h);
  }
}

template <class T>
DETRED_HD DETRED_INLINE exact_bits<T> exact_scalar_bits(T x) {
  if constexpr (std::same_as<T, double> || std::same_as<T, float>)
    return detred::bit_cast<exact_bits<T>>(x);
  else if constexpr (std::same_as<T, bfloat16>)
    return unsigned(x.bits) << 16;
  else
    return exact_half_to_float_bits(x.bits);
}

template <class T>
inline constexpr int exact_vector_elements = int(16 / sizeof(T));

template <class T, class Tune = exact_default_tuning<T>>
inline constexpr std::size_t exact_shared_bytes = Tune::shared_bytes;

// A whole step of U vectors by the thread's window when every term lies in it, for a thread that tests steps at once
// (exact_extract_thread::try_window_step): true when it took them; false (nothing added) otherwise.
template <class Thread, int U>
DETRED_HD DETRED_INLINE bool exact_try_window_step(Thread& th, const uint4 (&v)[U]) {
  if constexpr (requires { th.try_window_step(v); })
    return th.try_window_step(v);
  else
    return false;
}

// Thread `tid`'s share of block `block` (host and device: tests/cuda/test_exact_kernel_on_host.cu runs it on the CPU):
// the vectors block * per_block + tid + k * Tune::block_threads below the block's end, and for block 0 the elements
// tid of the head [0, head) and of the tail [head + E * vectors, n). The vectors start at x + head, 16-byte aligned.
// Ends with the window deposited and the thread's flags complete.
template <class T, class Tune, class Thread>
DETRED_HD DETRED_INLINE void exact_thread_terms(Thread& th, const T* __restrict__ x, std::uint64_t n,
                                                std::uint64_t head, std::uint64_t vectors, std::uint64_t per_block,
                                                std::uint64_t block, int tid) {
  constexpr int E = exact_vector_elements<T>;
  constexpr int U = Tune::unroll;
  constexpr int B = Tune::block_threads;
  const uint4* __restrict__ v = reinterpret_cast<const uint4*>(x + head);
  const std::uint64_t begin = block * per_block;
  const std::uint64_t end = begin + per_block < vectors ? begin + per_block : vectors;
  std::uint64_t i = begin + std::uint64_t(tid);
  if (i + std::uint64_t(U - 1) * B < end) {
    uint4 next[U];
#pragma unroll
    for (int u = 0; u < U; ++u) next[u] = v[i + std::uint64_t(u) * B];
    uint4 cur[U];
    bool more = true;
    // A thread with a warp-uniform mode (adaptive_windows) branches on it once a step, not once a vector.
    auto step = [&](auto... mode) {
      // A thread that tests a whole step at once (extract_levels) takes it here when every term is in its window.
      if constexpr (sizeof...(mode) == 0) {
        if (exact_try_window_step(th, cur)) return;
      }
#pragma unroll
      for (int u = 0; u < U; ++u) {
        exact_bits<T> e[E];
#pragma unroll
        for (int j = 0; j < E; ++j) e[j] = exact_element<T>(cur[u], j);
        th.add_vector(e, u * E, mode...);
      }
    };
    // The next step's vectors into cur, the one after it requested; then its reserve.
    auto advance = [&] {
#pragma unroll
      for (int u = 0; u < U; ++u) cur[u] = next[u];
      i += std::uint64_t(U) * B;
      more = i + std::uint64_t(U - 1) * B < end;
      if (more) {
#pragma unroll
        for (int u = 0; u < U; ++u) next[u] = v[i + std::uint64_t(u) * B];
      }
#ifdef __CUDA_ARCH__
      // exact_prefetch_steps<Tune>() > 0: thread 0 asks L2 for the block's step that many steps after `next` (one
      // contiguous range of U B vectors, clipped at the block's end). A hint: no value depends on it.
      if constexpr (exact_prefetch_steps<Tune>() > 0) {
        const std::uint64_t ahead = i - std::uint64_t(tid) + std::uint64_t(exact_prefetch_steps<Tune>()) * U * B;
        if (tid == 0 && ahead < end) {
          const std::uint64_t count = end - ahead < std::uint64_t(U) * B ? end - ahead : std::uint64_t(U) * B;
          prefetch_l2_bulk(v + ahead, unsigned(count * sizeof(uint4)));
        }
      }
#endif
      th.reserve(U * E);
    };
    bool slow_for_good = false;
    while (true) {
      advance();
      if constexpr (requires { Thread::adaptive; }) {
        if constexpr (Thread::slow_for_good) {
          if (th.all_slow) {
            slow_for_good = true;
            break;
          }
        } else if constexpr (Thread::slow_run > 0) {
          if (__builtin_expect(th.all_slow, 0)) {
            step(exact_all_slow_step{});
            if (!more) break;
            continue;
          }
        }
        if constexpr (Thread::adaptive) {
          if (th.wide)
            step(std::true_type{});
          else
            step(std::false_type{});
        } else {
          step();
        }
      } else {
        step();
      }
      if (!more) break;
    }
    // The all_slow mode for good (slow_for_good tunings): the rest of the thread's steps in a loop of their own.
    if constexpr (requires { Thread::slow_for_good; }) {
      if constexpr (Thread::slow_for_good) {
        if (slow_for_good) {
          while (true) {
            step(exact_all_slow_step{});
            if (!more) break;
            advance();
          }
        }
      }
    }
  }
  for (; i < end; i += B) {
    const uint4 c = v[i];
    th.reserve(E);
    exact_bits<T> e[E];
#pragma unroll
    for (int j = 0; j < E; ++j) e[j] = exact_element<T>(c, j);
    th.add_vector(e, 0);
  }
  if (block == 0) {
    const std::uint64_t tail = head + vectors * E;
    th.reserve(2);
    if (std::uint64_t(tid) < head) th.add(exact_scalar_bits<T>(x[tid]), 0);
    if (tail + std::uint64_t(tid) < n) th.add(exact_scalar_bits<T>(x[tail + tid]), 0);
  }
  th.deposit();
}

// The NaN and infinity flags of thread `tid`'s terms (the same terms as exact_thread_terms), term by term: the
// exponent_bins algorithm's rare path, taken only by a thread whose special bin held a NaN (a NaN term, or +Inf and
// -Inf together), where the bin cannot tell which flags IEEE addition needs (docs/EXACT.md).
template <class T, int B>
DETRED_HD unsigned exact_special_flags(const T* __restrict__ x, std::uint64_t n, std::uint64_t head,
                                       std::uint64_t vectors, std::uint64_t per_block, std::uint64_t block, int tid) {
  constexpr int E = exact_vector_elements<T>;
  using Th = exact_bins_thread<B>;
  const uint4* __restrict__ v = reinterpret_cast<const uint4*>(x + head);
  const std::uint64_t begin = block * per_block;
  const std::uint64_t end = begin + per_block < vectors ? begin + per_block : vectors;
  unsigned flags = 0;
  for (std::uint64_t i = begin + std::uint64_t(tid); i < end; i += B) {
    const uint4 c = v[i];
#pragma unroll
    for (int j = 0; j < E; ++j) flags |= Th::special_flags(exact_element<T>(c, j));
  }
  if (block == 0) {
    const std::uint64_t tail = head + vectors * E;
    if (std::uint64_t(tid) < head) flags |= Th::special_flags(exact_scalar_bits<T>(x[tid]));
    if (tail + std::uint64_t(tid) < n) flags |= Th::special_flags(exact_scalar_bits<T>(x[tail + tid]));
  }
  return flags;
}

// One thread's whole share with either algorithm, flags complete; `limbs`, `bins`: the thread's shared-memory rows
// (bins unused by the window). Returns the flags.
template <class T, class Tune>
DETRED_HD DETRED_INLINE unsigned exact_thread_share(long long* limbs, double* bins, const T* __restrict__ x,
                                                    std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                                                    std::uint64_t per_block, std::uint64_t block, int tid) {
  constexpr int B = Tune::block_threads;
  if constexpr (Tune::algorithm == exact_block_algorithm::exponent_bins) {
    exact_bins_thread<B> th{limbs, bins};
    th.clear();
    exact_thread_terms<T, Tune>(th, x, n, head, vectors, per_block, block, tid);
    if (th.rescan) th.flags |= exact_special_flags<T, B>(x, n, head, vectors, per_block, block, tid);
    return th.flags;
  } else if constexpr (Tune::algorithm == exact_block_algorithm::extract_levels) {
    exact_extract_thread<Tune::levels, B, Tune::slow_run, Tune::step_test> th{limbs};
#pragma unroll 1
    for (int k = 0; k < Tune::limb_rows; ++k) limbs[k * B] = 0;
    exact_thread_terms<T, Tune>(th, x, n, head, vectors, per_block, block, tid);
    return th.flags;
  } else if constexpr (Tune::algorithm == exact_block_algorithm::adjacent_windows ||
                       Tune::algorithm == exact_block_algorithm::adaptive_windows) {
    exact_windows_thread<Tune::windows, B, exact_adapt_shift<Tune>(), exact_slow_run<Tune>(),
                         exact_outline_slow<Tune>()>
        th{limbs};
#pragma unroll 1
    for (int k = 0; k < Tune::limb_rows; ++k) limbs[k * B] = 0;
    exact_thread_terms<T, Tune>(th, x, n, head, vectors, per_block, block, tid);
    return th.flags;
  } else {
    exact_thread<T, Tune> th{limbs};
#pragma unroll 1
    for (int k = 0; k < Tune::columns * Tune::limb_rows; ++k) limbs[k * B] = 0;
    exact_thread_terms<T, Tune>(th, x, n, head, vectors, per_block, block, tid);
    return th.flags;
  }
}

// The launch's partition of n terms at x: `head` elements before the first 16-byte boundary (x is element-aligned),
// `vectors` whole vectors, `blocks` blocks of `per_block` vectors (the last one shorter), each block over at most
// 2^30 / E vectors (block 0 adds at most 2E - 2 elements more). `wanted`: the block count to aim at (speed only).
struct exact_partition {
  std::uint64_t head, vectors, per_block, blocks;
};
template <class T>
exact_partition exact_partition_for(const T* x, std::uint64_t n, std::uint64_t wanted) {
  constexpr std::uint64_t E = exact_vector_elements<T>;
  exact_partition p{};
  const std::uint64_t misalign = (reinterpret_cast<std::uintptr_t>(x) & 15u) / sizeof(T);
  p.head = misalign ? E - misalign : 0;
  if (p.head > n) p.head = n;
  p.vectors = (n - p.head) / E;
  std::uint64_t blocks = wanted < 1 ? 1 : wanted;
  const std::uint64_t max_per_block = (std::uint64_t{1} << 30) / E;
  const std::uint64_t at_least = (p.vectors + max_per_block - 1) / max_per_block;
  if (blocks < at_least) blocks = at_least;
  p.per_block = p.vectors == 0 ? 1 : (p.vectors + blocks - 1) / blocks;
  p.blocks = p.vectors == 0 ? 1 : (p.vectors + p.per_block - 1) / p.per_block;
  return p;
}

// Limb k of the split form of L limbs s (each |s_k| < 2^63): s_k's low 32 bits plus s_{k-1}'s bits from 2^32 up
// (arithmetic shift), the top limb whole. Computed for every k at once (no carry chain), the limbs hold the same value
// as s, and every limb but the top lies in [-2^31, 2^32 + 2^31), so the finishing kernel adds up to exact_max_blocks =
// 2^12 block states far below 2^63 (tests/cuda/test_exact_kernel_on_host.cu, SplitFormKeepsTheValueAndItsBounds).
template <int L>
DETRED_HD DETRED_INLINE long long exact_split_limb(const long long* s, int k) {
  const long long own = k + 1 < L ? (s[k] & 0xffffffffll) : s[k];
  return own + (k > 0 ? s[k - 1] >> 32 : 0);
}

// Blocks per SM the register allocation must allow (Tune::min_blocks): the double layout's limbs (138 KiB a block)
// allow one anyway; four blocks (1024 threads, 64 registers each) for the others.
template <class T, class Tune = exact_default_tuning<T>>
__global__ void __launch_bounds__(Tune::block_threads, Tune::min_blocks)
    exact_block_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                       std::uint64_t per_block, long long* block_limbs, unsigned* block_flags) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count;
  constexpr int B = Tune::block_threads;
  constexpr int warps = B / 32;
  constexpr int C = Tune::columns;
  constexpr int R = Tune::limb_rows;  // limb rows per column: L for the window, fewer for the bins (limbs R.. are 0)
  // C * R * B limb words: thread t's column c, limb k at [(c * R + k) * B + t]; then the bins (exponent_bins): bin q
  // of thread t at [C * R * B + q * B + t]. Only the thread itself touches its words until the barrier.
  extern __shared__ long long exact_limbs[];
  __shared__ long long total[L];
  __shared__ unsigned shared_flags;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (tid == 0) shared_flags = 0;
  // Lets the finishing kernel (launched with programmatic stream serialization) be scheduled while this grid runs; it
  // still waits in cudaGridDependencySynchronize for this grid's completion and memory flush.
  cudaTriggerProgrammaticLaunchCompletion();

  const unsigned thread_flags =
      exact_thread_share<T, Tune>(exact_limbs + tid, reinterpret_cast<double*>(exact_limbs + C * R * B) + tid, x, n,
                                  head, vectors, per_block, blockIdx.x, tid);
  const unsigned flags = __reduce_or_sync(0xffffffffu, thread_flags);
  __syncthreads();
  if (lane == 0 && flags) atomicOr(&shared_flags, flags);
  // Limb k of the block: the threads' limbs added (|sum| < 2^63: at most 2^30 + 14 terms a block, each changing one
  // copy of a limb by less than 2^32, plus one deposit per 2^13 adds; exponent_bins: at most six digits below 2^32 per
  // limb per flush, one flush per 2^14 - 32 terms of a thread and one at its end; adjacent_windows: one digit a term,
  // K a window move (at most 2047 a thread: top only rises) or headroom period (2^11 - 32 terms), docs/EXACT.md).
  // Warp w adds limbs w, w + warps, ...
  for (int k = warp; k < L; k += warps) {
    long long s = 0;
#pragma unroll
    for (int c = 0; c < C; ++c)
#pragma unroll
      for (int t = lane; t < B; t += 32) s += k < R ? exact_limbs[(c * R + k) * B + t] : 0;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) total[k] = s;
  }
  __syncthreads();
  if (tid == 0) block_flags[blockIdx.x] = shared_flags;
  // The block's state in split form, every limb at once (no carry chain; exact_split_limb).
  for (int k = tid; k < L; k += B) block_limbs[std::uint64_t(blockIdx.x) * L + k] = exact_split_limb<L>(total, k);
}

// Threads of the finishing kernels (one block).
inline constexpr int exact_finish_threads = 512;

// Limb k of the total is the integer sum of limb k over the blocks; the flags are ORed. Every thread of the (one)
// block of exact_finish_threads calls it; total and flags are shared memory, valid after it returns. The threads form
// G = exact_finish_threads / L groups of L: thread k of group g adds limb k of the blocks g, g + G, ... (consecutive
// threads read consecutive limbs of a block state: coalesced, every load independent), then thread k adds the G
// partial sums. Integer additions: the order cannot change a bit.
template <class T>
__device__ void exact_total_over_blocks(const long long* block_limbs, const unsigned* block_flags, int blocks,
                                        long long* total, unsigned& flags) {
  constexpr int L = exact_state<T>::limb_count;
  constexpr int groups = exact_finish_threads / L;
  static_assert(groups >= 1, "a group of L threads fits the finishing block");
  __shared__ long long partial[groups * L];
  const int tid = threadIdx.x, lane = tid & 31;
  cudaGridDependencySynchronize();  // the block kernel's states are complete and visible from here on
  if (tid == 0) flags = 0;
  const int k = tid % L, g = tid / L;
  if (g < groups) {
    long long s = 0;
#pragma unroll 4
    for (int b = g; b < blocks; b += groups) s += block_limbs[std::uint64_t(b) * L + k];
    partial[g * L + k] = s;
  }
  __syncthreads();  // also orders `flags = 0` before the atomicOr below
  unsigned f = 0;
  for (int b = tid; b < blocks; b += exact_finish_threads) f |= block_flags[b];
  f = __reduce_or_sync(0xffffffffu, f);
  if (lane == 0 && f) atomicOr(&flags, f);
  if (tid < L) {
    long long s = 0;
    for (int q = 0; q < groups; ++q) s += partial[q * L + tid];
    total[tid] = s;
  }
  __syncthreads();
}

// The total's limbs and flags as a state (n terms; each block state in split form adds less than 2^33 to a limb: two
// pending merges a block).
template <class T>
__device__ exact_state<T> exact_state_of(const long long* total, unsigned flags, int blocks, std::uint64_t n) {
  exact_state<T> s;
  for (int k = 0; k < exact_state<T>::limb_count; ++k) s.set_raw(k, total[k]);
  s.set_count(n, flags, 2u * std::uint32_t(blocks));
  return s;
}

template <class A, class T>
__global__ void __launch_bounds__(exact_finish_threads)
    exact_finish_kernel(const long long* block_limbs, const unsigned* block_flags, int blocks, std::uint64_t n,
                        A* out) {
  __shared__ long long total[72];
  __shared__ unsigned flags;
  exact_total_over_blocks<T>(block_limbs, block_flags, blocks, total, flags);
  if (threadIdx.x == 0) *out = exact_state_of<T>(total, flags, blocks, n).template rounded<A>();
}

// The state instead of its rounding (for distributed sums, docs/DISTRIBUTED.md): out[0 .. L) the normalised limbs,
// out[L] the count, out[L + 1] the flags.
template <class T>
__global__ void __launch_bounds__(exact_finish_threads)
    exact_state_kernel(const long long* block_limbs, const unsigned* block_flags, int blocks, std::uint64_t n,
                       long long* out) {
  using S = exact_state<T>;
  __shared__ long long total[72];
  __shared__ unsigned flags;
  exact_total_over_blocks<T>(block_limbs, block_flags, blocks, total, flags);
  if (threadIdx.x == 0) {
    S s = exact_state_of<T>(total, flags, blocks, n);
    s.normalize();
    for (int k = 0; k < S::limb_count; ++k) out[k] = s.limb(k);
    out[S::limb_count] = (long long)n;
    out[S::limb_count + 1] = (long long)flags;
  }
}

// Resident blocks of the first kernel on the current device (its shared memory limits them), cached per device.
template <class T, class Tune>
int exact_resident_blocks() {
  int device = 0;
  check(cudaGetDevice(&device), "cuda::sum (exact): cudaGetDevice");
  static thread_local int cached_device = -1, cached_blocks = 0;
  if (device != cached_device) {
    int sms = 0, per_sm = 0;
    check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
          "cuda::sum (exact): cudaDeviceGetAttribute");
    check(cudaFuncSetAttribute(exact_block_kernel<T, Tune>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               int(exact_shared_bytes<T, Tune>)),
          "cuda::sum (exact): cudaFuncSetAttribute");
    check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, exact_block_kernel<T, Tune>, Tune::block_threads,
                                                        exact_shared_bytes<T, Tune>),
          "cuda::sum (exact): occupancy");
    cached_blocks = sms * (per_sm > 0 ? per_sm : 1);
    cached_device = device;
  }
  return cached_blocks;
}

// Kernel 1 over d_in[0..n) with a chosen tuning: one normalised state per block in the workspace. Returns the block
// count and where the states are.
template <class T, class Tune>
int launch_exact_blocks(const T* d_in, std::uint64_t n, void* d_workspace, cudaStream_t stream, long long*& block_limbs,
                        unsigned*& block_flags) {
  if (n > exact_max_n)
    detred::detail::throw_invalid("cuda::sum", "sum_method::exact takes at most 2^42 terms per call (" +
                                                   std::to_string(n) + " given); merge exact_accumulator states");
  using S = exact_state<T>;
  constexpr int L = S::limb_count;
  // As many blocks as the device keeps resident, no more than the workspace bound (exact_partition_for keeps each
  // block within 2^30 terms; that many blocks fit the bound for n <= 2^42).
  std::uint64_t wanted = std::uint64_t(exact_resident_blocks<T, Tune>());
  if (wanted > exact_block_bound(n)) wanted = exact_block_bound(n);
  const exact_partition part = exact_partition_for(d_in, n, wanted);
  const std::uint64_t blocks = part.blocks;
  unsigned char* base = static_cast<unsigned char*>(d_workspace) + workspace_header_bytes;
  block_limbs = reinterpret_cast<long long*>(base);
  block_flags = reinterpret_cast<unsigned*>(base + blocks * L * sizeof(long long));
  exact_block_kernel<T, Tune><<<unsigned(blocks), Tune::block_threads, exact_shared_bytes<T, Tune>, stream>>>(
      d_in, n, part.head, part.vectors, part.per_block, block_limbs, block_flags);
  check(cudaGetLastError(), "cuda::sum (exact): block kernel launch");
  return int(blocks);
}

// launch_exact_sum with a chosen tuning (bench/experiments/exact_variants.cu compares tunings).
template <class A, class T, class Tune>
void launch_exact_sum_tuned(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, cudaStream_t stream) {
  long long* block_limbs = nullptr;
  unsigned* block_flags = nullptr;
  const int blocks = launch_exact_blocks<T, Tune>(d_in, n, d_workspace, stream, block_limbs, block_flags);
  launch_finishing_block(exact_finish_kernel<A, T>, exact_finish_threads, stream,
                         "cuda::sum (exact): finishing kernel launch", static_cast<const long long*>(block_limbs),
                         static_cast<const unsigned*>(block_flags), blocks, n, d_out);
}

template <class A, class T>
void launch_exact_sum(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, cudaStream_t stream) {
  launch_exact_sum_tuned<A, T, exact_default_tuning<T>>(d_in, n, d_out, d_workspace, stream);
}

// The exact state of d_in[0..n) (exact_state_kernel's layout, L + 2 integers) at d_state, asynchronously on `stream`.
// The workspace is cuda::sum's (sum_workspace_bytes(n)).
template <class T>
void launch_exact_state(const T* d_in, std::uint64_t n, long long* d_state, void* d_workspace, cudaStream_t stream) {
  long long* block_limbs = nullptr;
  unsigned* block_flags = nullptr;
  const int blocks =
      launch_exact_blocks<T, exact_default_tuning<T>>(d_in, n, d_workspace, stream, block_limbs, block_flags);
  launch_finishing_block(exact_state_kernel<T>, exact_finish_threads, stream, "cuda::sum (exact): state kernel launch",
                         static_cast<const long long*>(block_limbs), static_cast<const unsigned*>(block_flags), blocks,
                         n, d_state);
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_EXACT_SUM(A, T) \
  template void detred::cuda::detail::launch_exact_sum<A, T>(const T*, std::uint64_t, A*, void*, cudaStream_t);
#define DETRED_INSTANTIATE_EXACT_STATE(T) \
  template void detred::cuda::detail::launch_exact_state<T>(const T*, std::uint64_t, long long*, void*, cudaStream_t);
