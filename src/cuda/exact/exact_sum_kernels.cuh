// The GPU exact sum (docs/EXACT.md "On the GPU"). Kernel 1: each block takes a contiguous range of at most 2^30
// terms, read as 16-byte vectors, and each thread adds its terms exactly into integer limbs of its own in shared
// memory, by the per-thread algorithm of its input type (exact_block_algorithm): exponent bins for the binary32 family
// (binary16, bfloat16, binary32 widened exactly), extracted levels for binary64. At the end the threads' limbs are
// added into one state per block, written to the workspace in split form. Kernel 2 (one block): limb k of the total is
// the integer sum of limb k over the blocks; one warp rounds it (exact_warp_rounding.cuh). Small sums of the binary32
// family run both steps in one launch (the last block to arrive finishes; exact_single_pass); small binary64 sums share
// a window a warp (warp_levels, exact_warp_levels.cuh). Every step is an exact integer addition: the bits cannot
// depend on the grid, the schedule or which path a term took.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <type_traits>

#include "detred/accumulators/exact.hpp"
#include "detred/cuda/detail/dependent_launch.cuh"
#include "detred/cuda/detail/tuning.hpp"
#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/arrivals.cuh"
#include "src/cuda/common/workspace.hpp"
#include "src/cuda/exact/exact_bins_thread.cuh"
#include "src/cuda/exact/exact_digit_columns.cuh"
#include "src/cuda/exact/exact_extract_thread.cuh"
#include "src/cuda/exact/exact_sum.hpp"
#include "src/cuda/exact/exact_warp_levels.cuh"
#include "src/cuda/exact/exact_warp_rounding.cuh"

namespace detred::cuda::detail {

// Threads a block of kernel 1.
inline constexpr int exact_block_threads = 256;

template <class T>
using exact_state = exact_accumulator_for<T>;

// Kernel 1's per-thread algorithm, one per input type. Each adds every term exactly once, exactly, into integer limbs
// that are summed per block, so the bits cannot depend on it (the order is irrelevant: exact integer additions).
// docs/EXACT.md "On the GPU" has both proofs.
enum class exact_block_algorithm {
  // The binary32 family: 16 binary64 bins of 16 binades each (plus one for NaN and infinities) per thread in shared
  // memory; every term is widened to binary64 and added to its bin (one shared read-modify-write, no branch), and the
  // bins are flushed into the thread's limbs every 2^14 terms. The same instructions on every data set.
  exponent_bins,
  // binary64: one window of 103 exponent fields below the largest field the thread has met, whose terms are cut into
  // three 64-bit integers by floating-point additions of constants (exact_extract_thread.cuh: 7 additions and 6
  // integer adds a term); every other term goes by a lean slow path straight from its bits into the thread's limb
  // rows, and a warp whose terms are mostly outside the window switches to the slow path for good (the all_slow mode).
  // docs/EXACT.md "Extracted levels".
  extract_levels,
  // binary64 small sums: the extracted levels with one window a warp (exact_warp_levels.cuh): the lanes share `top`,
  // the warp adds its levels by shuffles into 67 deposit rows it shares, and terms outside the window go by the lean
  // slow path into the lane's own rows, which a warp clears and the block adds only once the warp met such a term. On
  // narrow data a block's fixed work is 67 rows a warp instead of 67 rows a thread. docs/EXACT.md "Small sums".
  warp_levels,
  // binary64 large sums (tuning.hpp exact.digits64=1): every term as five 16-bit digits added by shared-memory atomics
  // into digit rows that several threads share (exact_digit_columns.cuh): the same instructions on every data set, and
  // 12 warps an SM where the per-thread limb rows of extract_levels allow 8. docs/EXACT.md "Digit columns".
  digit_columns,
};

// The exponent_bins algorithm's launch (binary32 family): 8 vectors of 16 bytes a thread a step, 256 threads a block.
template <class T>
struct exact_bins_tuning {
  static_assert(!std::same_as<T, double>, "exponent_bins: the binary32 family only (docs/EXACT.md)");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::exponent_bins;
  static constexpr int unroll = 8;
  static constexpr int columns = 1;
  static constexpr int block_threads = exact_block_threads;
  static constexpr int limb_rows = exact_float_bins::limb_rows;
  // 17 bins and 10 limb rows of 8 bytes a thread: 54 KiB a block of 256; 8 vectors a step need two 16-byte buffers
  // of 8 vectors in registers: two blocks an SM.
  static constexpr int min_blocks = 2;
  static constexpr std::size_t shared_bytes = std::size_t(limb_rows + exact_float_bins::bin_count) * block_threads * 8;
};
// The extract_levels algorithm's launch (binary64): 10 vectors of 16 bytes a thread a step, three levels (103
// fields), the all_slow mode for good once voted, a step's terms tested at once, 256 threads a block. Shared memory:
// 67 limb rows of 8 bytes a thread (536 bytes).
template <class T>
struct exact_extract_tuning {
  static_assert(std::same_as<T, double>, "extract_levels: binary64 only (docs/EXACT.md)");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::extract_levels;
  static constexpr int unroll = 10;
  static constexpr int levels = 3;
  static constexpr int slow_run = -1;
  static constexpr bool step_test = true;
  static constexpr int columns = 1;
  static constexpr int block_threads = exact_block_threads;
  static constexpr int limb_rows = exact_binary64_geometry::limb_rows;
  static constexpr std::size_t shared_bytes = std::size_t(limb_rows) * block_threads * 8;
  // Blocks an SM the shared memory allows (228 KiB an SM; 1 KiB reserved and about 0.6 KiB of static shared memory a
  // block): the register allocation is asked to allow as many.
  static constexpr int min_blocks = int((228u * 1024u) / (shared_bytes + 1024u + 640u)) > 0
                                        ? int((228u * 1024u) / (shared_bytes + 1024u + 640u))
                                        : 1;
  static_assert(unroll >= 1 &&
                    unroll * 2 <= int(exact_extract_thread<levels, block_threads, slow_run, step_test>::headroom),
                "a step fits the headroom");
};
template <class T>
using exact_default_tuning = std::conditional_t<std::same_as<T, double>, exact_extract_tuning<T>, exact_bins_tuning<T>>;
// The digit_columns algorithm's launch (binary64 above the small sums where tuning.hpp's exact.digits64 = 1): 384
// threads a block adding into 64 columns of digit rows (six threads a column; 34 KiB), 8 vectors a thread a step,
// the streamed form's interleaved chunks, plain 16-byte loads; one block an SM (the registers of 8 vectors a step).
// H200, 1 GiB of full-range doubles, the digit adds alone against CUB in one program: 256 threads on their own
// columns 0.88x, 384 threads on 128 columns 0.96-0.97x, on 64 columns 0.98x; the same 384 threads with 201 KiB of
// shared memory reserved (the L1 cache it leaves: 27 KiB) 0.86x (docs/PERFORMANCE.md).
template <class T>
struct exact_digit_columns_tuning {
  static_assert(std::same_as<T, double>, "digit_columns: binary64 only (docs/EXACT.md)");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::digit_columns;
  using shape = exact_digit_columns_shape<384, 64, 8>;
  static constexpr int unroll = shape::unroll;
  static constexpr int block_threads = shape::threads;
  static constexpr int load = 0;
  static constexpr bool interleave = true;
  static constexpr int min_blocks = 1;
  static constexpr std::size_t shared_bytes = shape::shared_bytes;
};
// Kernel 1's streamed form (tuning.hpp exact.interleave=1): the type's default algorithm and steps, with the blocks
// taking interleaved chunks of U B vectors (the whole grid reads one narrow band of the input at a time instead of
// one stream a block) and the loads asking L2 for 256-byte blocks (exact_load kind 2). Every term is still added once,
// exactly, by one thread: the same bits. docs/EXACT.md "Kernel 1: the partition".
template <class T>
struct exact_streamed_tuning : exact_default_tuning<T> {
  static constexpr int load = 2;
  static constexpr bool interleave = true;
};
// The streamed form with plain 16-byte loads (exact_load kind 0; tuning.hpp exact.load32 / exact.load64 = 0, for
// binary32 and binary64 inputs): the same interleaved chunks. On the H200 the 256-byte L2 fetches cost binary32's
// kernel 1 6-7% (1 GiB, bench_exact sweep: 0.93x CUB with them, 0.99x without); on the H100 they gain 1-2%
// (docs/PERFORMANCE.md). Speed only: every vector is still read once and every term added once, exactly.
template <class T>
struct exact_streamed_plain_tuning : exact_streamed_tuning<T> {
  static constexpr int load = 0;
};
// The streamed form with steps of 4 vectors: small sums of the binary32 family take it, in the single pass and in two
// kernels (launch_exact_sum, launch_exact_blocks_tuned). A small sum has few chunks, each thread one or two steps;
// shorter steps give more blocks work and a shorter path to the block's end (H100, back to back: 2^20 halves and
// bfloat16 10.5 -> 9.3-10.1 us a call; 2^16 floats by the single pass 7.2-7.4 -> 6.7 us, both launched dependent).
// Speed only: the same exact additions.
template <class T>
struct exact_small_tuning : exact_streamed_tuning<T> {
  static constexpr int unroll = 4;
};
// binary64 small sums by the warp-shared window (warp_levels): Unroll vectors a lane a step, 256 threads a block, the
// streamed form's interleaved chunks and loads; the lanes' rows in dynamic shared memory (134 KiB: one block an SM),
// the warps' deposit rows static. Speed only: the same exact additions. Small sums take 8 vectors a step
// (exact_small_path_tuning): one block an SM keeps only its threads' steps in flight (H100, device time a call with
// the blocks capped by chunks, 2^16 / 2^20 doubles: 4 vectors 5.32 / 6.83 us uniform, 5.76 / 7.05 ill-conditioned,
// 11.45 / 15.22 full range; 8 vectors 5.10 / 6.72, 5.26 / 6.85, 11.03 / 14.56. An older H200 run at the workspace's
// block bound, back to back: 4 vectors 8.5 / 14.1 us a call, 2 vectors 8.7 / 14.0, 8 vectors 8.8 / 14.3).
template <class T, int Unroll = 4, int MinBlocks = 1>
struct exact_warp_levels_tuning {
  static_assert(std::same_as<T, double>, "warp_levels: binary64 only (docs/EXACT.md)");
  static constexpr exact_block_algorithm algorithm = exact_block_algorithm::warp_levels;
  static constexpr int unroll = Unroll;
  static constexpr int levels = 3;
  static constexpr int columns = 1;
  static constexpr int block_threads = exact_block_threads;
  static constexpr int limb_rows = exact_binary64_geometry::limb_rows;
  static constexpr int load = 2;
  static constexpr bool interleave = true;
  static constexpr int min_blocks = MinBlocks;
  // The lanes' rows (dynamic; 134 KiB a block: one block an SM); the warps' deposit rows are static.
  static constexpr std::size_t shared_bytes = std::size_t(limb_rows) * block_threads * 8;
  static_assert(unroll >= 1 && 2 * unroll <= int(exact_warp_levels_thread<levels, 1, 1>::headroom),
                "a step fits the headroom");
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

// The working-format bits of element j of a 16-byte vector: binary64 terms as they are, every other input widened
// exactly to binary32.
template <class T>
using exact_bits = std::conditional_t<std::same_as<T, double>, unsigned long long, unsigned>;

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

// Kernel 1's load flavour (Tune::load, default 0): 0 a plain 16-byte load; 1 the non-coherent path without L1
// allocation; 2 the same with L2 fetching 256-byte blocks. Speed only: the vector read is the same.
template <class Tune>
inline constexpr int exact_load_kind = [] {
  if constexpr (requires { Tune::load; })
    return int(Tune::load);
  else
    return 0;
}();
// Kernel 1's block partition (Tune::interleave, default false): false, block b takes a contiguous range of vectors;
// true, block b takes the chunks of U * B vectors b, b + G, b + 2G, ... (G blocks) and the rows of B vectors b, b + G,
// ... after the last whole chunk. Speed only: every vector is still taken by exactly one thread.
template <class Tune>
inline constexpr bool exact_interleaved = [] {
  if constexpr (requires { Tune::interleave; })
    return bool(Tune::interleave);
  else
    return false;
}();

template <int Kind>
DETRED_HD DETRED_INLINE uint4 exact_load(const uint4* p) {
#ifdef __CUDA_ARCH__
  if constexpr (Kind == 1) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
  } else if constexpr (Kind == 2) {
    uint4 r;
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
    return r;
  } else {
    return *p;
  }
#else
  return *p;
#endif
}

// exact_load<Kind> as a function object (exact_digit_columns_terms takes the load flavour as one).
template <int Kind>
struct exact_loader {
  DETRED_HD DETRED_INLINE uint4 operator()(const uint4* p) const { return exact_load<Kind>(p); }
};

// The thread's start, once its first step's loads are issued (or before its first term where it has no whole step):
// Thread::begin() where it has one (the exponent bins clear their rows there, overlapping the loads' latency).
template <class Thread>
DETRED_HD DETRED_INLINE void exact_thread_begin(Thread& th) {
  if constexpr (requires { th.begin(); }) th.begin();
}

// Before the first step's terms are added, a thread that places its window from the first step (extract_levels:
// exact_extract_thread::first_step) sees that step's vectors. Speed only.
template <class Thread, int U>
DETRED_HD DETRED_INLINE void exact_thread_first_step(Thread& th, const uint4 (&v)[U]) {
  if constexpr (requires { th.first_step(v); }) th.first_step(v);
}

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
// contiguous partition, `share` = vectors a block: the vectors block * share + tid + k * Tune::block_threads below
// the block's end; interleaved partition (exact_interleaved<Tune>), `share` = the block count G: in each chunk
// c = block + j G of U B vectors (U = Tune::unroll, B = Tune::block_threads) below the last whole chunk, the vectors
// c U B + tid + u B, and after the last whole chunk (at v0) the vectors v0 + (block + k G) B + tid. Block 0 also takes
// the elements tid of the head [0, head) and of the tail [head + E * vectors, n). The vectors start at x + head,
// 16-byte aligned. Ends with the window deposited and the thread's flags complete.
template <class T, class Tune, class Thread>
DETRED_HD DETRED_INLINE void exact_thread_terms(Thread& th, const T* __restrict__ x, std::uint64_t n,
                                                std::uint64_t head, std::uint64_t vectors, std::uint64_t share,
                                                std::uint64_t block, int tid) {
  constexpr int E = exact_vector_elements<T>;
  constexpr int U = Tune::unroll;
  constexpr int B = Tune::block_threads;
  constexpr int LK = exact_load_kind<Tune>;
  constexpr bool interleave = exact_interleaved<Tune>;
  const uint4* __restrict__ v = reinterpret_cast<const uint4*>(x + head);
  // The thread's steps: from `begin` + tid, `stride` vectors apart, below `end`.
  constexpr std::uint64_t chunk = std::uint64_t(U) * B;
  const std::uint64_t begin = interleave ? block * chunk : block * share;
  std::uint64_t end = interleave ? vectors / chunk * chunk : begin + share < vectors ? begin + share : vectors;
  const std::uint64_t stride = interleave ? share * chunk : chunk;
  std::uint64_t i = begin + std::uint64_t(tid);
  if (i + std::uint64_t(U - 1) * B < end) {
    uint4 next[U];
#pragma unroll
    for (int u = 0; u < U; ++u) next[u] = exact_load<LK>(v + i + std::uint64_t(u) * B);
    exact_thread_begin(th);
    exact_thread_first_step(th, next);
    uint4 cur[U];
    bool more = true;
    // The U vectors of `w` added, one vector at a time; `mode`: none, or exact_all_slow_step for a step whose vectors
    // all take the slow path (extract_levels).
    auto add_step = [&](const uint4* w, auto... mode) {
#pragma unroll
      for (int u = 0; u < U; ++u) {
        exact_bits<T> e[E];
#pragma unroll
        for (int j = 0; j < E; ++j) e[j] = exact_element<T>(w[u], j);
        th.add_vector(e, u * E, mode...);
      }
    };
    auto step = [&] {
      // A thread that tests a whole step at once (extract_levels) takes it here when every term is in its window.
      if (exact_try_window_step(th, cur)) return;
      add_step(cur);
    };
    // The next step's vectors into cur, the one after it requested; then its reserve.
    auto advance = [&] {
#pragma unroll
      for (int u = 0; u < U; ++u) cur[u] = next[u];
      i += stride;
      more = i + std::uint64_t(U - 1) * B < end;
      if (more) {
#pragma unroll
        for (int u = 0; u < U; ++u) next[u] = exact_load<LK>(v + i + std::uint64_t(u) * B);
      }
      th.reserve(U * E);
    };
    // The digit mode (extract_levels, interleaved partition: every thread of a block takes the same steps, so the
    // block can vote and convert its rows together).
    constexpr bool digit_mode_possible = interleave && requires { th.begin_digits(); };
    bool slow_for_good = false, digit_mode = false, first = true;
    while (true) {
      advance();
      if constexpr (requires { Thread::slow_for_good; }) {
        static_assert(Thread::slow_for_good, "the all_slow mode is for good once voted");
        if (th.all_slow) {
          slow_for_good = true;
          break;
        }
      }
      step();
      if (!more) break;
      if constexpr (digit_mode_possible) {
        // After the first step: the block goes to the digit mode iff every thread sent at least 3/4 of its terms by
        // the slow path (exact_block_all: never on the host).
        if (first) {
          first = false;
          if (exact_block_all(4 * th.step_slow >= 3 * unsigned(U * E))) {
            digit_mode = true;
            break;
          }
        }
      }
    }
    // The digit mode: the rest of the block's steps into digit rows by shared atomics (exact_binary64_digits.cuh);
    // then the rows back in their 64-bit form.
    if constexpr (digit_mode_possible) {
      if (digit_mode) {
        th.begin_digits();
        long long* const block_rows = th.limbs - tid;
        exact_block_rows_to_digits<B>(block_rows);
        unsigned* const digits = reinterpret_cast<unsigned*>(block_rows) + tid;
        exact_digit_rows rows{digits, 0u};
#ifdef __CUDA_ARCH__
        rows.shared_address = unsigned(__cvta_generic_to_shared(digits));
#endif
        unsigned since = 0;  // terms since the digits were last normalised
        // One step a turn: `next` holds step i's vectors; each is added and its registers then take the same
        // vector of the step after (loads issued), or, after the last step, the same vector again (cache hits, never
        // used): an unconditional load into registers already consumed needs no copy of the step (a predicated one,
        // or one issued before the vector's terms are added, made the compiler copy all U vectors first). Two steps
        // a turn (cur and next swapping roles) doubled the loop's code and cost the H200 a sixth of its speed (3,750
        // -> 3,140 GB/s at 1 GiB).
        while (more) {
          if (since + unsigned(U * E) > exact_binary64_digits::normalize_period) {
            exact_normalize_digits<B>(digits);
            since = 0;
          }
          since += unsigned(U * E);
          const std::uint64_t after = i + stride;
          more = after + std::uint64_t(U - 1) * B < end;
          const uint4* const refill = v + (more ? after : i);
#pragma unroll
          for (int u = 0; u < U; ++u) {
            exact_bits<T> e[E];
#pragma unroll
            for (int j = 0; j < E; ++j) e[j] = exact_element<T>(next[u], j);
            th.add_vector_digits(rows, e);
            next[u] = exact_load<LK>(refill + std::uint64_t(u) * B);
          }
          i = after;
        }
        exact_normalize_digits<B>(digits);
        exact_block_digits_to_rows<B>(block_rows);
      }
    }
    // The all_slow mode (extract_levels): the rest of the thread's steps in a loop of their own.
    if constexpr (requires { Thread::slow_for_good; }) {
      if (slow_for_good) {
        while (true) {
          add_step(cur, exact_all_slow_step{});
          if (!more) break;
          advance();
        }
      }
    }
  } else {
    exact_thread_begin(th);
  }
  // The vectors after the step loop, one at a time: the contiguous partition's last partial step; for the interleaved
  // one, the vectors after the last whole chunk (fewer than U rows of B), row r to block r mod G, so that no block
  // takes more than one of them a thread where G >= U (block 0 taking them all cost a small sum U dependent loads).
  std::uint64_t rest_stride = B;
  if constexpr (interleave) {
    i = end + block * B + std::uint64_t(tid);
    rest_stride = share * B;
    end = vectors;
  }
  for (; i < end; i += rest_stride) {
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

// A lane's share under warp_levels (host and device): exact_thread_terms' interleaved partition (`share` = the block
// count G; chunks of U B vectors, then rows of B vectors after the last whole chunk, then block 0's head and tail
// elements), walked so that every lane of a warp takes the same steps: a lane without a vector in a row, or without a
// head or tail element, adds -0.0 (nothing). `warp_first`: the thread index of the warp's lane 0 (on the host, where a
// thread is its own window, the thread's own). Ends with the levels deposited and the flags complete.
template <class T, class Tune, class Thread>
DETRED_HD DETRED_INLINE void exact_warp_terms(Thread& th, const T* __restrict__ x, std::uint64_t n, std::uint64_t head,
                                              std::uint64_t vectors, std::uint64_t share, std::uint64_t block, int tid,
                                              int warp_first) {
  static_assert(std::same_as<T, double>, "warp_levels: binary64 only");
  constexpr int U = Tune::unroll;
  constexpr int B = Tune::block_threads;
  constexpr int LK = exact_load_kind<Tune>;
  constexpr std::uint64_t chunk = std::uint64_t(U) * B;
  constexpr unsigned long long none = 1ull << 63;  // -0.0
  const uint4* __restrict__ v = reinterpret_cast<const uint4*>(x + head);
  const std::uint64_t whole = vectors / chunk * chunk;
  const std::uint64_t stride = share * chunk;
  std::uint64_t c = block * chunk;  // the chunk's first vector: the same in every thread of the block
  if (c < whole) {
    uint4 next[U];
#pragma unroll
    for (int u = 0; u < U; ++u) next[u] = exact_load<LK>(v + c + std::uint64_t(tid) + std::uint64_t(u) * B);
    while (true) {
      uint4 cur[U];
#pragma unroll
      for (int u = 0; u < U; ++u) cur[u] = next[u];
      c += stride;
      const bool more = c < whole;
      if (more) {
#pragma unroll
        for (int u = 0; u < U; ++u) next[u] = exact_load<LK>(v + c + std::uint64_t(tid) + std::uint64_t(u) * B);
      }
      unsigned long long e[2 * U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        e[2 * u] = exact_element<T>(cur[u], 0);
        e[2 * u + 1] = exact_element<T>(cur[u], 1);
      }
      th.add_step(e);
      if (!more) break;
    }
  }
  // The rows after the last whole chunk: row r to block r mod G, as long as the warp's lane 0 has a vector.
  for (std::uint64_t r = whole + block * B; r + std::uint64_t(warp_first) < vectors; r += share * B) {
    const std::uint64_t i = r + std::uint64_t(tid);
    unsigned long long e[2] = {none, none};
    if (i < vectors) {
      const uint4 q = exact_load<LK>(v + i);
      e[0] = exact_element<T>(q, 0);
      e[1] = exact_element<T>(q, 1);
    }
    th.add_step(e);
  }
  if (block == 0) {
    const std::uint64_t tail = head + vectors * 2;
    const std::uint64_t extra = head > n - tail ? head : n - tail;
    if (std::uint64_t(warp_first) < extra) {
      unsigned long long e[2] = {none, none};
      if (std::uint64_t(tid) < head) e[0] = exact_scalar_bits<T>(x[tid]);
      if (tail + std::uint64_t(tid) < n) e[1] = exact_scalar_bits<T>(x[tail + tid]);
      th.add_step(e);
    }
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

// A "thread" for exact_thread_terms that only ORs its terms' NaN and infinity flags (the rescan of an interleaved
// partition): binary32 bits (the bins) or binary64 bits (the digit mode).
template <int B, class Bits = unsigned>
struct exact_special_scan {
  unsigned flags = 0;
  DETRED_HD DETRED_INLINE void add(Bits b, int = 0) {
    if constexpr (sizeof(Bits) == 8)
      flags |= exact_binary64_special_flags(b);
    else
      flags |= exact_bins_thread<B>::special_flags(b);
  }
  template <int E>
  DETRED_HD DETRED_INLINE void add_vector(const Bits (&b)[E], int) {
#pragma unroll
    for (int j = 0; j < E; ++j) add(b[j]);
  }
  DETRED_HD DETRED_INLINE void reserve(unsigned) {}
  DETRED_HD DETRED_INLINE void deposit() {}
};

// One thread's whole share with its type's algorithm, flags complete; `limbs`, `bins`: the thread's shared-memory
// rows (bins unused by extract_levels). Returns the flags.
template <class T, class Tune>
DETRED_HD DETRED_INLINE unsigned exact_thread_share(long long* limbs, double* bins, const T* __restrict__ x,
                                                    std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                                                    std::uint64_t share, std::uint64_t block, int tid) {
  constexpr int B = Tune::block_threads;
  if constexpr (Tune::algorithm == exact_block_algorithm::exponent_bins) {
    exact_bins_thread<B> th{limbs, bins};  // cleared by exact_thread_terms (begin)
    exact_thread_terms<T, Tune>(th, x, n, head, vectors, share, block, tid);
    if (th.rescan) {
      if constexpr (exact_interleaved<Tune>) {
        // The same terms through the same partition, each term's NaN / infinity flags ORed.
        exact_special_scan<B> scan;
        exact_thread_terms<T, Tune>(scan, x, n, head, vectors, share, block, tid);
        th.flags |= scan.flags;
      } else {
        th.flags |= exact_special_flags<T, B>(x, n, head, vectors, share, block, tid);
      }
    }
    return th.flags;
  } else if constexpr (Tune::algorithm == exact_block_algorithm::warp_levels) {
    // The host emulation's form (the kernel is exact_warp_levels_kernel): each thread its own window, its rows
    // cleared first and taking its deposits too.
    exact_warp_levels_thread<Tune::levels, B, B> th{{limbs}, {}, limbs, true};
#pragma unroll 1
    for (int k = 0; k < Tune::limb_rows; ++k) limbs[k * B] = 0;
    exact_warp_terms<T, Tune>(th, x, n, head, vectors, share, block, tid, tid);
    return th.flags;
  } else {
    static_assert(Tune::algorithm == exact_block_algorithm::extract_levels);
    exact_extract_thread<Tune::levels, B, Tune::slow_run, Tune::step_test> th{limbs};
#pragma unroll 1
    for (int k = 0; k < Tune::limb_rows; ++k) limbs[k * B] = 0;
    exact_thread_terms<T, Tune>(th, x, n, head, vectors, share, block, tid);
    if (th.digits_met_special()) {
      // The digit mode met a NaN or an infinity: the flags of the thread's terms, from their bits, through the same
      // partition (the digit mode runs only for interleaved ones).
      exact_special_scan<B, unsigned long long> scan;
      exact_thread_terms<T, Tune>(scan, x, n, head, vectors, share, block, tid);
      th.flags |= scan.flags;
    }
    return th.flags;
  }
}

// Thread `tid`'s share under digit_columns (host and device: the host emulation runs a block's threads one after the
// other), into the block's cleared digit rows `rows` (at the 32-bit shared-memory address `rows_address` on the
// device): exact_digit_columns_terms, then the flags: -0.0 only or not, and where the thread met a NaN or an infinity
// (its largest field 2047) its NaN and infinity flags from its terms' bits, through the same partition
// (exact_thread_terms with exact_special_scan). Returns the flags.
template <class T, class Tune>
DETRED_HD DETRED_INLINE unsigned exact_digit_columns_share(unsigned* rows, unsigned rows_address,
                                                           const T* __restrict__ x, std::uint64_t n, std::uint64_t head,
                                                           std::uint64_t vectors, std::uint64_t share,
                                                           std::uint64_t block, int tid) {
  static_assert(std::same_as<T, double> && exact_interleaved<Tune>, "binary64, the interleaved partition");
  using S = exact_state<T>;
  unsigned others = 0;
  const int highest = exact_digit_columns_terms<typename Tune::shape>(
      rows, rows_address, x, n, head, vectors, share, block, tid, others, exact_loader<exact_load_kind<Tune>>{});
  unsigned flags = others ? S::flag_not_only_negative_zero : 0u;
  if (highest == exact_binary64_geometry::special_field) {
    exact_special_scan<Tune::block_threads, unsigned long long> scan;
    exact_thread_terms<T, Tune>(scan, x, n, head, vectors, share, block, tid);
    flags |= scan.flags;
  }
  return flags;
}

// The launch's partition of n terms at x: `head` elements before the first 16-byte boundary (x is element-aligned),
// `vectors` whole vectors, `blocks` blocks of `per_block` vectors (the last one shorter), each block over at most
// 2^30 / E vectors (block 0 adds at most 2E - 2 elements more). `wanted`: the block count to aim at (speed only).
struct exact_partition {
  std::uint64_t head, vectors, per_block, blocks;
};
// Interleaved partitions (exact_interleaved<Tune>) keep two chunks of U B vectors below that limit: a block then takes
// at most ceil(whole chunks / G) chunks, at most vectors / G + 1 chunk, and fewer than one chunk more, so each
// block stays within 2^30 / E vectors as well (for n <= 2^40 the block count this needs fits the workspace's bound).
template <class T, class Tune = exact_default_tuning<T>>
exact_partition exact_partition_for(const T* x, std::uint64_t n, std::uint64_t wanted) {
  constexpr std::uint64_t E = exact_vector_elements<T>;
  exact_partition p{};
  const std::uint64_t misalign = (reinterpret_cast<std::uintptr_t>(x) & 15u) / sizeof(T);
  p.head = misalign ? E - misalign : 0;
  if (p.head > n) p.head = n;
  p.vectors = (n - p.head) / E;
  std::uint64_t blocks = wanted < 1 ? 1 : wanted;
  constexpr std::uint64_t slack = exact_interleaved<Tune> ? 2 * std::uint64_t(Tune::unroll) * Tune::block_threads : 0;
  const std::uint64_t max_per_block = (std::uint64_t{1} << 30) / E - slack;
  const std::uint64_t at_least = (p.vectors + max_per_block - 1) / max_per_block;
  if (blocks < at_least) blocks = at_least;
  p.per_block = p.vectors == 0 ? 1 : (p.vectors + blocks - 1) / blocks;
  p.blocks = p.vectors == 0 ? 1 : (p.vectors + p.per_block - 1) / p.per_block;
  return p;
}

// The kernel's `share` argument (exact_thread_terms): the vectors a block for a contiguous partition, the block count
// for an interleaved one.
template <class Tune>
std::uint64_t exact_share(const exact_partition& p) {
  return exact_interleaved<Tune> ? p.blocks : p.per_block;
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

// Threads of the finishing kernels (one block). binary64 sums take 1024 for cuda::sum's finish: 14 groups of its 69
// limbs instead of 7 halve each thread's chain of loads (H200, 2^20 doubles back to back over 256 block states: 12.3
// against 14.1 us a call).
inline constexpr int exact_finish_threads = 512;
inline constexpr int exact_finish_threads_binary64 = 1024;

// Shared-memory words exact_total_over_blocks needs for its partial sums (Threads threads, L limbs).
template <class T, int Threads>
inline constexpr int exact_partial_words = Threads / exact_state<T>::limb_count* exact_state<T>::limb_count;

// Limb k of the total is the integer sum of limb k over the blocks; the flags are ORed. Every thread of one block of
// Threads threads calls it (the finishing kernel, after its grid dependency; or the single pass's last block, after
// its acquire fence); total, flags and partial (exact_partial_words) are shared memory, total and flags valid after
// it returns. The threads form G = Threads / L groups of L: thread k of group g adds limb k of the blocks g, g + G, ...
// (consecutive threads read consecutive limbs of a block state: coalesced; read through L2, since other SMs wrote
// them in this launch or the last), then thread k adds the G partial sums. Integer additions: the order cannot change
// a bit. Latency is what costs here (one SM reads up to 4096 states): each thread issues its loads in batches of
// exact_finish_batch, all in flight before the first addition (a predicate register each: 8 is what sm_90 code keeps
// in flight), and its flags load before them (at 132 states of binary64 a thread has 10 loads: two round trips to L2,
// where a loop unrolled by the compiler made five).
inline constexpr int exact_finish_batch = 8;
template <class T, int Threads>
__device__ void exact_total_over_blocks(const long long* block_limbs, const unsigned* block_flags, int blocks,
                                        long long* total, unsigned& flags, long long* partial) {
  constexpr int L = exact_state<T>::limb_count;
  constexpr int groups = Threads / L;
  constexpr int batch = exact_finish_batch;
  static_assert(groups >= 1, "a group of L threads fits the finishing block");
  const int tid = threadIdx.x, lane = tid & 31;
  unsigned f = 0;
  for (int b = tid; b < blocks; b += Threads) f |= __ldcg(block_flags + b);
  if (tid == 0) flags = 0;
  const int k = tid % L, g = tid / L;
  if (g < groups) {
    long long s = 0;
    for (int first = g; first < blocks; first += batch * groups) {
      // One base and constant offsets: few registers, so the compiler keeps the whole batch in flight.
      const long long* p = block_limbs + std::uint64_t(first) * L + k;
      long long limb[batch];
#pragma unroll
      for (int j = 0; j < batch; ++j) limb[j] = first + j * groups < blocks ? __ldcg(p + j * groups * L) : 0;
#pragma unroll
      for (int j = 0; j < batch; ++j) s += limb[j];
    }
    partial[g * L + k] = s;
  }
  __syncthreads();  // also orders `flags = 0` before the atomicOr below
  f = __reduce_or_sync(0xffffffffu, f);
  if (lane == 0 && f) atomicOr(&flags, f);
  if (tid < L) {
    long long s = 0;
#pragma unroll
    for (int q = 0; q < groups; ++q) s += partial[q * L + tid];
    total[tid] = s;
  }
  __syncthreads();
}

// The correctly rounded A of the total (shared memory: L limbs, as exact_total_over_blocks leaves them) and its
// flags, by the calling warp (a full one; exact_warp_rounded); its lane 0 writes it to *out.
template <class A, class T>
__device__ void exact_round_total(const long long* total, unsigned flags, A* out) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count, J = exact_warp_slots<L>;
  const int lane = threadIdx.x & 31;
  long long t[J];
#pragma unroll
  for (int j = 0; j < J; ++j) t[j] = lane + 32 * j < L ? total[lane + 32 * j] : 0;
  const A r = exact_warp_rounded<A, typename S::range_type>(t, flags);
  if (lane == 0) *out = r;
}

// The single pass's end, called by every thread of a block after it wrote its state (block_limbs, block_flags): the
// block that arrives last (arrive_last on *arrivals, which it then puts back to the rest state) adds every block's
// state in block order (exact_total_over_blocks, with `partial` as its shared scratch) and its warp 0 writes the
// correctly rounded total to *out; the other blocks return. B: the block's threads.
template <class T, int B, class A>
__device__ __forceinline__ void exact_finish_in_last_block(const long long* block_limbs, const unsigned* block_flags,
                                                           unsigned long long* arrivals, long long* total,
                                                           unsigned& flags, long long* partial, A* out) {
  __shared__ bool last;
  __threadfence();  // release: this thread's state stores are visible before the block's arrival
  __syncthreads();
  if (threadIdx.x == 0) last = arrive_last(arrivals, gridDim.x);
  __syncthreads();
  if (!last) return;
  if (threadIdx.x == 0) *arrivals = clean_tag << arrival_count_bits;  // every block has arrived: the rest state
  __threadfence();  // acquire: every block's state, released before its arrival, is visible from here on
  exact_total_over_blocks<T, B>(block_limbs, block_flags, int(gridDim.x), total, flags, partial);
  if (threadIdx.x < 32) exact_round_total<A, T>(total, flags, out);
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

// Blocks per SM the register allocation must allow (Tune::min_blocks): the binary64 limb rows (134 KiB a block) allow
// one anyway; two for the bins. A = void: each block writes its state and the finishing kernel adds them. Otherwise
// the single pass (small sums, exact_single_pass): the last block to arrive (the arrival word at `arrivals`, left at
// rest) adds the states and rounds the total to *out, in the same launch.
template <class T, class Tune = exact_default_tuning<T>, class A = void>
__global__ void __launch_bounds__(Tune::block_threads, Tune::min_blocks)
    exact_block_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                       std::uint64_t share, long long* block_limbs, unsigned* block_flags, A* out,
                       unsigned long long* arrivals) {
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
  // Launched with programmatic stream serialization (launch_exact_blocks, dependent), this grid may be scheduled while
  // the kernel before it runs: no global memory before that kernel's completion and flush. A no-op otherwise.
  cudaGridDependencySynchronize();

  const unsigned thread_flags =
      exact_thread_share<T, Tune>(exact_limbs + tid, reinterpret_cast<double*>(exact_limbs + C * R * B) + tid, x, n,
                                  head, vectors, share, blockIdx.x, tid);
  const unsigned flags = __reduce_or_sync(0xffffffffu, thread_flags);
  __syncthreads();
  if (lane == 0 && flags) atomicOr(&shared_flags, flags);
  // Limb k of the block: the threads' limbs added (|sum| < 2^63: at most 2^30 + 14 terms a block, each changing one
  // copy of a limb by less than 2^32, plus one deposit per 2^13 adds; exponent_bins: at most six digits below 2^32 per
  // limb per flush, one flush per 2^14 - 32 terms of a thread and one at its end; extract_levels: one digit a term,
  // L a window move (at most 2047 a thread: top only rises) or headroom period (2^11 - 32 terms), docs/EXACT.md).
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
  if constexpr (!std::is_void_v<A>) {
    static_assert(exact_partial_words<T, B> <= C * R * B, "the partial sums fit the limb rows");
    // The limb rows are free now: they hold the partial sums.
    exact_finish_in_last_block<T, B>(block_limbs, block_flags, arrivals, total, shared_flags, exact_limbs, out);
  }
}

// Kernel 1 for binary64 large sums (digit_columns, exact_digit_columns.cuh): the block's digit rows in dynamic shared
// memory (row r of column c at word r * C + c, cleared first), every thread adding its share into column tid % C;
// then limb k of the block is rows 2k and 2k + 1 of every column added (exact_column_limb_part), written in split form
// with the block's flags. Two kernels only (A = void): small sums take warp_levels.
template <class T, class Tune, class A = void>
__global__ void __launch_bounds__(Tune::block_threads, Tune::min_blocks)
    exact_digit_columns_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                               std::uint64_t share, long long* block_limbs, unsigned* block_flags, A* out,
                               unsigned long long* arrivals) {
  static_assert(std::is_void_v<A>, "digit_columns: large sums, two kernels");
  (void)out;
  (void)arrivals;
  using Shape = typename Tune::shape;
  constexpr int L = exact_state<T>::limb_count;
  constexpr int B = Shape::threads, C = Shape::columns, warps = B / 32;
  extern __shared__ long long exact_limbs[];
  __shared__ long long total[L];
  __shared__ unsigned shared_flags;
  unsigned* const rows = reinterpret_cast<unsigned*>(exact_limbs);
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int w = tid; w < Shape::rows * C; w += B) rows[w] = 0;
  if (tid == 0) shared_flags = 0;
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();  // as exact_block_kernel: no global memory before the kernel before it is done
  __syncthreads();
  const unsigned thread_flags = exact_digit_columns_share<T, Tune>(rows, unsigned(__cvta_generic_to_shared(rows)), x, n,
                                                                   head, vectors, share, blockIdx.x, tid);
  const unsigned flags = __reduce_or_sync(0xffffffffu, thread_flags);
  __syncthreads();  // every thread's atomics on the rows are done
  if (lane == 0 && flags) atomicOr(&shared_flags, flags);
  // Warp w adds limbs w, w + warps, ...: lane l the columns l, l + 32, ...
  for (int k = warp; k < L; k += warps) {
    long long s = 0;
#pragma unroll
    for (int c = lane; c < C; c += 32) s += exact_column_limb_part<Shape>(rows, k, c);
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) total[k] = s;
  }
  __syncthreads();
  if (tid == 0) block_flags[blockIdx.x] = shared_flags;
  for (int k = tid; k < L; k += B) block_limbs[std::uint64_t(blockIdx.x) * L + k] = exact_split_limb<L>(total, k);
}

// Kernel 1 for binary64 small sums (warp_levels, exact_warp_levels.cuh): lane t's rows at lane_rows[k * B + t]
// (dynamic shared memory, cleared by a warp at its first slow step), warp w's deposit rows at deposit_rows[w * R + k]
// (static, cleared first). Limb k of the block: the warps' deposit rows k plus, for the warps that used their lanes'
// rows, those rows k (a lane row ends below 2^32 + 2^52 after its last normalisation, a deposit row changes by less
// than 2^32 a digit, at most 3 digits a deposit: far below 2^63), written in split form; with A non-void the single
// pass, as exact_block_kernel.
template <class T, class Tune, class A = void>
__global__ void __launch_bounds__(Tune::block_threads, Tune::min_blocks)
    exact_warp_levels_kernel(const T* __restrict__ x, std::uint64_t n, std::uint64_t head, std::uint64_t vectors,
                             std::uint64_t share, long long* block_limbs, unsigned* block_flags, A* out,
                             unsigned long long* arrivals) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count;
  constexpr int B = Tune::block_threads;
  constexpr int warps = B / 32;
  constexpr int R = Tune::limb_rows;
  extern __shared__ long long exact_limbs[];  // the lanes' rows
  __shared__ long long deposit_rows[warps * R];
  __shared__ long long total[L];
  __shared__ unsigned shared_flags, active_warps;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  for (int k = tid; k < warps * R; k += B) deposit_rows[k] = 0;
  if (tid == 0) shared_flags = active_warps = 0;
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();  // as exact_block_kernel: no global memory before the kernel before it is done
  __syncthreads();
  exact_warp_levels_thread<Tune::levels, B, 1> th{{exact_limbs + tid}, {}, deposit_rows + warp * R, false};
  exact_warp_terms<T, Tune>(th, x, n, head, vectors, share, blockIdx.x, tid, tid - lane);
  const unsigned flags = __reduce_or_sync(0xffffffffu, th.flags);
  if (lane == 0 && flags) atomicOr(&shared_flags, flags);
  if (lane == 0 && th.rows_ready) atomicOr(&active_warps, 1u << warp);
  __syncthreads();
  const unsigned active = active_warps;
  if (active == 0) {
    if (tid < L) {
      long long s = 0;
      if (tid < R)
#pragma unroll
        for (int w = 0; w < warps; ++w) s += deposit_rows[w * R + tid];
      total[tid] = s;
    }
  } else {
    // Warp w adds limbs w, w + warps, ...: lane l takes lane l of every active warp, and lane w' < warps warp w''s
    // deposit row.
    for (int k = warp; k < L; k += warps) {
      long long s = 0;
      if (k < R) {
#pragma unroll
        for (int w = 0; w < warps; ++w)
          if ((active >> w) & 1u) s += exact_limbs[k * B + w * 32 + lane];
        if (lane < warps) s += deposit_rows[lane * R + k];
      }
#pragma unroll
      for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
      if (lane == 0) total[k] = s;
    }
  }
  __syncthreads();
  if (tid == 0) block_flags[blockIdx.x] = shared_flags;
  if (tid < L) block_limbs[std::uint64_t(blockIdx.x) * L + tid] = exact_split_limb<L>(total, tid);
  if constexpr (!std::is_void_v<A>) {
    static_assert(exact_partial_words<T, B> <= warps * R, "the partial sums fit the deposit rows");
    exact_finish_in_last_block<T, B>(block_limbs, block_flags, arrivals, total, shared_flags, deposit_rows, out);
  }
}

// Threads: the finishing block's size (exact_finish_threads; a bench times others).
template <class A, class T, int Threads = exact_finish_threads>
__global__ void __launch_bounds__(Threads)
    exact_finish_kernel(const long long* block_limbs, const unsigned* block_flags, int blocks, std::uint64_t n,
                        A* out) {
  __shared__ long long total[72];
  __shared__ unsigned flags;
  __shared__ long long partial[exact_partial_words<T, Threads>];
  // The next call's kernel 1 may be scheduled now (when launched dependent); it waits for this grid's end anyway.
  cudaTriggerProgrammaticLaunchCompletion();
  cudaGridDependencySynchronize();  // the block kernel's states are complete and visible from here on
  exact_total_over_blocks<T, Threads>(block_limbs, block_flags, blocks, total, flags, partial);
  if (threadIdx.x < 32) exact_round_total<A, T>(total, flags, out);
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
  __shared__ long long partial[exact_partial_words<T, exact_finish_threads>];
  cudaGridDependencySynchronize();  // the block kernel's states are complete and visible from here on
  exact_total_over_blocks<T, exact_finish_threads>(block_limbs, block_flags, blocks, total, flags, partial);
  if (threadIdx.x == 0) {
    S s = exact_state_of<T>(total, flags, blocks, n);
    s.normalize();
    for (int k = 0; k < S::limb_count; ++k) out[k] = s.limb(k);
    out[S::limb_count] = (long long)n;
    out[S::limb_count + 1] = (long long)flags;
  }
}

// Resident blocks of the first kernel on the current device (its shared memory limits them), cached per device and
// per kernel instance: the cache is keyed by the kernel's address too, because two copies of this library in one
// process (a program and a plugin, or two Python extension modules, each linking detred statically) share the
// template's static variables (GNU unique symbols) but not their kernels, and each copy's kernel needs its own
// cudaFuncSetAttribute before it may use more than 48 KiB of dynamic shared memory. The last four lookups of the
// thread are kept (a program that alternates small and large sums, or two input types, hits them all).
// One cache per kernel instance (T, Tune, A).
template <class T, class Tune, class A>
int exact_resident_blocks_of(const void* kernel, int threads, std::size_t dynamic_shared) {
  struct entry {
    const void* kernel = nullptr;
    int device = -1, blocks = 0;
  };
  static thread_local entry recent[4];
  static thread_local int next = 0;
  int device = 0;
  check(cudaGetDevice(&device), "cuda::sum (exact): cudaGetDevice");
  for (const entry& e : recent)
    if (e.kernel == kernel && e.device == device) return e.blocks;
  int sms = 0, per_sm = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
        "cuda::sum (exact): cudaDeviceGetAttribute");
  check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dynamic_shared)),
        "cuda::sum (exact): cudaFuncSetAttribute");
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, dynamic_shared),
        "cuda::sum (exact): occupancy");
  entry& e = recent[next];
  next = (next + 1) % 4;
  e = {kernel, device, sms * (per_sm > 0 ? per_sm : 1)};
  return e.blocks;
}

template <class T, class Tune, class A = void>
int exact_resident_blocks() {
  if constexpr (Tune::algorithm == exact_block_algorithm::warp_levels)
    return exact_resident_blocks_of<T, Tune, A>(reinterpret_cast<const void*>(exact_warp_levels_kernel<T, Tune, A>),
                                                Tune::block_threads, exact_shared_bytes<T, Tune>);
  else if constexpr (Tune::algorithm == exact_block_algorithm::digit_columns)
    return exact_resident_blocks_of<T, Tune, A>(reinterpret_cast<const void*>(exact_digit_columns_kernel<T, Tune, A>),
                                                Tune::block_threads, exact_shared_bytes<T, Tune>);
  else
    return exact_resident_blocks_of<T, Tune, A>(reinterpret_cast<const void*>(exact_block_kernel<T, Tune, A>),
                                                Tune::block_threads, exact_shared_bytes<T, Tune>);
}

// Kernel 1 over d_in[0..n) (n <= 2^42, checked by the caller) with a chosen tuning: one normalised state per block in
// the workspace. Returns the block count and where the states are. With A non-void, the single pass: the last block
// also rounds the total to *d_out.
// `wanted` (0: the default) asks for another block count (a bench's shapes; the workspace must hold that many states).
// `dependent`: launched with programmatic stream serialization (dependent_launch.cuh), so that the grid is scheduled
// while the kernel before it on the stream ends (the last call's finishing kernel lets it at its start); the kernels
// touch no global memory before their cudaGridDependencySynchronize, which waits for that kernel's completion. H100,
// 100 calls back to back: binary64 2^20 10.6-10.8 -> 9.5 us a call, 2^16 9.2-9.7 -> 8.0-8.8; binary32 2^16 (the
// single pass) 8.1 -> 7.2, 2^20 8.5-8.8 -> 7.4-7.9. false: the plain launch (a bench's comparison).
template <class T, class Tune, class A = void>
int launch_exact_blocks(const T* d_in, std::uint64_t n, void* d_workspace, cudaStream_t stream, long long*& block_limbs,
                        unsigned*& block_flags, A* d_out = nullptr, std::uint64_t wanted = 0, bool dependent = true) {
  using S = exact_state<T>;
  constexpr int L = S::limb_count;
  // `waves` times the blocks the device keeps resident (tuning.hpp), no more than the workspace bound
  // (exact_partition_for keeps each block within 2^30 terms; that many blocks fit the bound for n <= 2^42).
  const int resident = exact_resident_blocks<T, Tune, A>();  // also sets the kernel's shared-memory attribute
  if (wanted == 0) {
    const exact_tuning tune = current_tuning().exact;
    wanted = std::uint64_t(resident) * std::uint64_t(tune.waves);
    if (wanted > exact_block_bound(n)) wanted = exact_block_bound(n);
    // An interleaved partition gives block b the chunks b, b + G, ...: a block past the last chunk would only clear
    // its rows, add them and write a zero state for the finish to read. No more blocks than chunks (the last one
    // partial), at least one (H100, 2^20 floats at 4 vectors a step: 256 chunks, 396 resident blocks).
    if constexpr (exact_interleaved<Tune>) {
      constexpr std::uint64_t chunk_bytes = std::uint64_t(Tune::unroll) * Tune::block_threads * 16;
      const std::uint64_t chunks = (n * sizeof(T) + chunk_bytes - 1) / chunk_bytes;
      if (wanted > chunks) wanted = chunks > 0 ? chunks : 1;
    }
  }
  const exact_partition part = exact_partition_for<T, Tune>(d_in, n, wanted);
  const std::uint64_t blocks = part.blocks;
  unsigned char* base = static_cast<unsigned char*>(d_workspace) + workspace_header_bytes;
  block_limbs = reinterpret_cast<long long*>(base);
  block_flags = reinterpret_cast<unsigned*>(base + blocks * L * sizeof(long long));
  auto launch = [&](auto kernel) {
    if (dependent)
      launch_dependent(kernel, dim3(unsigned(blocks)), dim3(Tune::block_threads), exact_shared_bytes<T, Tune>, stream,
                       "cuda::sum (exact): block kernel launch", d_in, n, part.head, part.vectors,
                       exact_share<Tune>(part), block_limbs, block_flags, d_out, workspace_arrivals(d_workspace));
    else
      kernel<<<unsigned(blocks), Tune::block_threads, exact_shared_bytes<T, Tune>, stream>>>(
          d_in, n, part.head, part.vectors, exact_share<Tune>(part), block_limbs, block_flags, d_out,
          workspace_arrivals(d_workspace));
  };
  if constexpr (Tune::algorithm == exact_block_algorithm::warp_levels)
    launch(exact_warp_levels_kernel<T, Tune, A>);
  else if constexpr (Tune::algorithm == exact_block_algorithm::digit_columns)
    launch(exact_digit_columns_kernel<T, Tune, A>);
  else
    launch(exact_block_kernel<T, Tune, A>);
  check(cudaGetLastError(), "cuda::sum (exact): block kernel launch");
  return int(blocks);
}

// Small sums (at most exact_small_bytes, with the streamed form on): the binary32 family up to exact_single_pass_bytes
// takes the single pass (one launch: the last block finishes); the rest of the binary32 family the short steps of
// exact_small_tuning and two kernels; binary64 the warp-shared window (exact_warp_levels_tuning) and two kernels.
// H100, back to back: f32 2^16 7.8-8.1 us a call by the single pass against 7.7-10.9 by two kernels; at 2^20 two
// kernels were 0.25 us faster on three machines of four. H200: the warp-shared window's single pass was 0.8-1.4 us a
// call slower than its two kernels (the last block's finish follows its own work, where the finishing kernel launched
// by programmatic dependent launch is already resident). docs/EXACT.md "Small sums".
inline constexpr std::uint64_t exact_small_bytes = std::uint64_t{1} << 24;
inline constexpr std::uint64_t exact_single_pass_bytes = std::uint64_t{1} << 18;

// The small sums' kernel 1 (two kernels): binary64 by the warp-shared window, the binary32 family by its bins in short
// steps.
template <class T>
using exact_small_path_tuning =
    std::conditional_t<std::same_as<T, double>, exact_warp_levels_tuning<double, 8>, exact_small_tuning<T>>;

template <class T>
bool exact_small(std::uint64_t n) {
  return n * sizeof(T) <= exact_small_bytes && current_tuning().exact.interleave;
}
template <class T>
bool exact_single_pass(std::uint64_t n) {
  return !std::same_as<T, double> && n * sizeof(T) <= exact_single_pass_bytes && current_tuning().exact.interleave;
}

// More than 2^42 terms are refused first, before any CUDA call.
inline void exact_check_size(std::uint64_t n) {
  if (n > exact_max_n)
    detred::detail::throw_invalid("cuda::sum", "sum_method::exact takes at most 2^42 terms per call (" +
                                                   std::to_string(n) + " given); merge exact_accumulator states");
}

// Kernel 1 in the form the tuning asks for: the streamed form (exact.interleave=1) for n <= 2^40 (small sums with its
// short steps, exact_small; larger ones by digit columns for binary64 where exact.digits64 = 1, else with the load
// flavour of exact.load32 / exact.load64), else the default.
template <class T>
int launch_exact_blocks_tuned(const T* d_in, std::uint64_t n, void* d_workspace, cudaStream_t stream,
                              long long*& block_limbs, unsigned*& block_flags) {
  exact_check_size(n);
  if (exact_small<T>(n))
    return launch_exact_blocks<T, exact_small_path_tuning<T>>(d_in, n, d_workspace, stream, block_limbs, block_flags);
  const exact_tuning tune = current_tuning().exact;
  if (tune.interleave && n <= (std::uint64_t{1} << 40)) {
    // binary64 by digit columns where the tuning asks for them (the high class's default).
    if constexpr (std::same_as<T, double>) {
      if (tune.digits64)
        return launch_exact_blocks<T, exact_digit_columns_tuning<T>>(d_in, n, d_workspace, stream, block_limbs,
                                                                     block_flags);
    }
    // binary16 and bfloat16 keep the 256-byte fetches: their plain loads are not measured on the H200.
    if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
      if ((std::same_as<T, double> ? tune.load64 : tune.load32) == 0)
        return launch_exact_blocks<T, exact_streamed_plain_tuning<T>>(d_in, n, d_workspace, stream, block_limbs,
                                                                      block_flags);
    }
    return launch_exact_blocks<T, exact_streamed_tuning<T>>(d_in, n, d_workspace, stream, block_limbs, block_flags);
  }
  return launch_exact_blocks<T, exact_default_tuning<T>>(d_in, n, d_workspace, stream, block_limbs, block_flags);
}

template <class A, class T>
void launch_exact_sum(const T* d_in, std::uint64_t n, A* d_out, void* d_workspace, cudaStream_t stream) {
  long long* block_limbs = nullptr;
  unsigned* block_flags = nullptr;
  exact_check_size(n);
  if (exact_single_pass<T>(n)) {
    launch_exact_blocks<T, exact_small_tuning<T>, A>(d_in, n, d_workspace, stream, block_limbs, block_flags, d_out);
    return;
  }
  const int blocks = launch_exact_blocks_tuned<T>(d_in, n, d_workspace, stream, block_limbs, block_flags);
  constexpr int threads = std::same_as<T, double> ? exact_finish_threads_binary64 : exact_finish_threads;
  launch_finishing_block(exact_finish_kernel<A, T, threads>, threads, stream,
                         "cuda::sum (exact): finishing kernel launch", static_cast<const long long*>(block_limbs),
                         static_cast<const unsigned*>(block_flags), blocks, n, d_out);
}

// The exact state of d_in[0..n) (exact_state_kernel's layout, L + 2 integers) at d_state, asynchronously on `stream`.
// The workspace is cuda::sum's (its size query with sum_method::exact).
template <class T>
void launch_exact_state(const T* d_in, std::uint64_t n, long long* d_state, void* d_workspace, cudaStream_t stream) {
  long long* block_limbs = nullptr;
  unsigned* block_flags = nullptr;
  const int blocks = launch_exact_blocks_tuned<T>(d_in, n, d_workspace, stream, block_limbs, block_flags);
  launch_finishing_block(exact_state_kernel<T>, exact_finish_threads, stream, "cuda::sum (exact): state kernel launch",
                         static_cast<const long long*>(block_limbs), static_cast<const unsigned*>(block_flags), blocks,
                         n, d_state);
}

}  // namespace detred::cuda::detail

#define DETRED_INSTANTIATE_EXACT_SUM(A, T) \
  template void detred::cuda::detail::launch_exact_sum<A, T>(const T*, std::uint64_t, A*, void*, cudaStream_t);
#define DETRED_INSTANTIATE_EXACT_STATE(T) \
  template void detred::cuda::detail::launch_exact_state<T>(const T*, std::uint64_t, long long*, void*, cudaStream_t);
