// The decoupled look-back of detred's single-pass device scan, in the canonical order (docs/ORDER.md section 3,
// "The GPU scan"). Tiles are aligned blocks of 2^K elements; tile j's carry-in is P(j) = reduce(tiles [0, j)) in
// tile units, which by the Fenwick recurrence is the LEFT fold, largest first, of the complete subtrees over the
// blocks of j's binary digits. Tile j publishes two values:
//   F_j = U(j + 1 - lowbit(j + 1), lowbit(j + 1))   its Fenwick node: the complete subtree of tile roots ending at
//         j + 1, = F_{j - 2^(s-1)} (+) (... (+) (F_{j-2} (+) (F_{j-1} (+) A_j)))  with s = log2 lowbit(j + 1),
//         A_j the tile's root; it needs only tile roots, never a prefix, so it is ready early;
//   P(j + 1)  its inclusive prefix, = P(j + 1 - lowbit(j + 1)) (+) F_j.
// Writing p_0 = j and p_{r+1} = p_r - lowbit(p_r) (the prefixes of j's binary digits), tile j needs F at tiles
// p_r - 1 (r < r*) and one P(p_{r*}) (the inclusive prefix of tile p_{r*} - 1), r* the nearest r >= s whose prefix
// is published (or p_{r*} = 0): then P(j) = (((P(p_{r*}) (+) F_{p_{r*-1}-1}) ...) (+) F_{p_0-1}), and the same fold
// stopped at p_s gives P(j + 1 - lowbit(j + 1)). The operands are fixed by j, never by arrival order: which
// published prefix ends the walk changes nothing, since every published P is itself the canonical value. Lane r of
// warp 0 watches tile p_r - 1; j has at most 32 set bits (fewer than 2^32 tiles).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "detred/cuda/warp/warp_scan.cuh"

namespace detred::cuda::detail {

// Device memory of the look-back: for each tile a status word (0 nothing, 1 F published, 3 F and P published) and
// two values. The statuses must be zero before the launch.
//
// Values of 4 or 8 bytes are published packed with their flag in one 8- or 16-byte word (as CUB's look-back does):
// a relaxed store of the word publishes, a relaxed load sees flag and value together, no fence on either side.
// Larger values use a status word with release/acquire ordering.
template <class T>
struct fenwick_tile_state {
  unsigned* status;
  T* fenwick;    // F_j
  T* inclusive;  // P(j + 1)
  void* words;   // packed form: 2 words per tile (F_j, P(j + 1)), zero before the launch
};

template <class T>
__device__ __forceinline__ T load_l2(const T* p) {  // bypasses L1: another block wrote it
  unsigned w[sizeof(T) / 4];
  const unsigned* src = reinterpret_cast<const unsigned*>(p);
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) w[i] = __ldcg(src + i);
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}
template <class T>
__device__ __forceinline__ void store_l2(T* p, const T& v) {
  unsigned w[sizeof(T) / 4];
  std::memcpy(w, &v, sizeof(T));
  unsigned* dst = reinterpret_cast<unsigned*>(p);
#pragma unroll
  for (int i = 0; i < int(sizeof(T) / 4); ++i) __stcg(dst + i, w[i]);
}
template <class T>
inline constexpr bool packed_lookback = sizeof(T) == 4 || sizeof(T) == 8;
template <class T>
using lookback_word = std::conditional_t<sizeof(T) == 4, unsigned long long, ulonglong2>;

// Packed words: kind 0 = F_j, 1 = P(j + 1). Returns whether published; value set when so.
template <class T>
__device__ __forceinline__ bool poll_word(const fenwick_tile_state<T>& st, std::uint64_t tile, int kind, T& value) {
  using W = lookback_word<T>;
  const W* p = static_cast<const W*>(st.words) + 2 * tile + kind;
  if constexpr (sizeof(T) == 4) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(p) : "memory");
    const unsigned v = unsigned(w);
    std::memcpy(&value, &v, 4);
    return (w >> 32) != 0;
  } else {
    unsigned long long x, y;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(x), "=l"(y) : "l"(p) : "memory");
    std::memcpy(&value, &x, 8);
    return y != 0;
  }
}
template <class T>
__device__ __forceinline__ void publish_word(const fenwick_tile_state<T>& st, std::uint64_t tile, int kind,
                                             const T& value) {
  using W = lookback_word<T>;
  W* p = static_cast<W*>(st.words) + 2 * tile + kind;
  if constexpr (sizeof(T) == 4) {
    unsigned v;
    std::memcpy(&v, &value, 4);
    const unsigned long long w = (1ull << 32) | v;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(w) : "memory");
  } else {
    unsigned long long x;
    std::memcpy(&x, &value, 8);
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p), "l"(x), "l"(1ull) : "memory");
  }
}

__device__ __forceinline__ unsigned load_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ void store_release(unsigned* p, unsigned v) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
}

// Called by all 32 lanes of one warp with the tile's root A_j. Sets carry = P(j) (has_carry false for j == 0) and
// end = P(j + 1), the same in every lane; publishes F_j and P(j + 1) when `publish` (every tile but a partial last
// one, which nobody waits for).
template <class T, class Op>
__device__ __forceinline__ void fenwick_lookback(std::uint64_t j, const T& root, Op op,
                                                 const fenwick_tile_state<T>& state, bool publish, T& carry,
                                                 bool& has_carry, T& end) {
  const int lane = threadIdx.x & 31;
  const int s = __ffsll(static_cast<long long>(~j)) - 1;  // log2 lowbit(j + 1): trailing ones of j
  const int digits = __popcll(j);
  std::uint64_t p = j;
  for (int r = 0; r < lane && p != 0; ++r) p &= p - 1;
  const bool watching = lane < digits;
  const std::uint64_t watched = p - 1;  // tile p_lane - 1
  const std::uint64_t below_s = (std::uint64_t{1} << s) - 1;
  // Phase 1: F_j needs the F of the s nearest watched tiles (tile roots only: ready early).
  T f{};
  if (s > 0) {
    bool ready = false;
    while (true) {
      if constexpr (packed_lookback<T>) {
        if (lane < s && !ready) ready = poll_word(state, watched, 0, f);
      } else {
        if (lane < s && !ready) ready = load_acquire(state.status + watched) != 0;
      }
      if (__all_sync(0xffffffffu, lane >= s || ready)) break;
    }
    if constexpr (!packed_lookback<T>)
      if (lane < s) f = load_l2(state.fenwick + watched);
  }
  T fenwick = root;
  for (int r = 0; r < s; ++r) fenwick = op(shuffle_from(f, r), fenwick);
  if (publish && lane == 0) {
    if constexpr (packed_lookback<T>) {
      publish_word(state, j, 0, fenwick);
    } else {
      store_l2(state.fenwick + j, fenwick);
      store_release(state.status + j, 1u);
    }
  }
  // Phase 2: the nearest published prefix at r >= s, and F for every r below it.
  int nearest;
  T prefix{};
  bool got_f = lane < s, got_p = false;
  while (true) {
    if constexpr (packed_lookback<T>) {
      if (watching && !got_p) got_p = poll_word(state, watched, 1, prefix);
      if (watching && !got_f) got_f = poll_word(state, watched, 0, f);
    } else {
      const unsigned status = watching ? load_acquire(state.status + watched) : 0u;
      got_f = status != 0;
      got_p = status == 3u;
    }
    const std::uint64_t has_f = __ballot_sync(0xffffffffu, watching && got_f);
    const std::uint64_t has_p = __ballot_sync(0xffffffffu, watching && got_p);
    const std::uint64_t candidates = (has_p & ~below_s) | (std::uint64_t{1} << digits);
    nearest = __ffsll(static_cast<long long>(candidates)) - 1;
    const std::uint64_t needed = (std::uint64_t{1} << nearest) - 1;
    if ((has_f & needed) == needed) break;
  }
  if constexpr (!packed_lookback<T>) {
    if (lane < nearest && lane >= s) f = load_l2(state.fenwick + watched);
    if (lane == nearest && watching) prefix = load_l2(state.inclusive + watched);
  }
  bool have = nearest < digits;
  T acc = shuffle_from(prefix, nearest & 31);
  for (int r = nearest - 1; r >= 0; --r) {
    if (r == s - 1) {  // acc is now P(p_s) = P(j + 1 - lowbit(j + 1))
      end = have ? op(acc, fenwick) : fenwick;
    }
    const T v = shuffle_from(f, r);
    acc = have ? op(acc, v) : v;
    have = true;
  }
  if (s == 0 || nearest < s) end = have ? op(acc, fenwick) : fenwick;  // s == 0: P(j + 1) = P(j) (+) A_j
  carry = acc;
  has_carry = have;
  if (publish && lane == 0) {
    if constexpr (packed_lookback<T>) {
      publish_word(state, j, 1, end);
    } else {
      store_l2(state.inclusive + j, end);
      store_release(state.status + j, 3u);
    }
  }
}

}  // namespace detred::cuda::detail
