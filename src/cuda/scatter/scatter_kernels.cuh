// The kernels of the exact scattered sums (scatter_add, index_add): the fixed-point levels of scatter_levels.hpp
// filled by integer atomics (docs/SCATTER.md, "On the GPU"). Five launches on one stream:
//   geometry_kernel   the smallest and largest effective field of the values (integer atomicMin/Max: exact), and
//                     for narrow words the rows' counts (narrow_kernels.cuh);
//   clear_kernel      zeroes the levels the geometry uses and the slots' flags;
//   scatter_kernel    one term at a time: its level and shift from a per-block table, k added by an integer atomic
//                     (float words: lanes of a warp that hit the same word add their k's first, exactly); or, for few
//                     slots, into per-block copies of the levels in shared memory flushed by global atomics;
//   finish_kernel     rounds each slot (slot_result: the CPU's code) and writes it over the prior value;
//   zero_sign_kernel  only when some slot came out -0.0: a +0.0 or nonzero term there makes it +0.0 (IEEE).
// Integer addition is associative and commutative, so no schedule, grid or atomic order can change a level's sum.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <type_traits>

#include "detred/types/float_traits.hpp"
#include "src/cuda/scatter/scatter_levels.hpp"

namespace detred::cuda::detail {

using detred::detail::level_word;
using detred::detail::scatter_format;
using detred::detail::scatter_geometry;

// Narrow words (hot_rows_kernel, narrow_rows_kernel): the most output rows a block keeps in shared memory.
inline constexpr int hot_capacity_max = 48;

// The workspace header: the geometry's atomics and the call's counters.
struct scatter_header {
  unsigned top;                // max effective field (0: none)
  unsigned bottom_flipped;     // max of (max_field + 1 - effective field): the smallest field, as a maximum
  unsigned zero_slots;         // nonzero when some slot's result is -0.0 (zero_sign_kernel has work)
  unsigned max_count;          // narrow words only: the most terms any slot receives (0: not counted)
  unsigned long long invalid;  // contributions with an index outside [0, m)
  unsigned hot_rows;           // narrow words only: output rows that claimed a private slot (may exceed the capacity)
  unsigned hot_list[hot_capacity_max];  // narrow words only: private slot -> output row
};
static_assert(sizeof(scatter_header) <= 256, "the workspace header is 256 bytes");

inline constexpr std::uint32_t slot_provisional_negative_zero = 1u << 16;

// How often (in passes) a warp of the scalar scatter that found no shared words probes again.
inline constexpr unsigned aggregate_probe = 16;
// index_add: the passes of 32 columns a warp loads before adding them (128 columns at once).
inline constexpr int rows_unroll = 4;

template <class R>
__device__ __forceinline__ scatter_geometry read_geometry(const scatter_header* h, int width) {
  const int top = int(h->top);
  const int bottom = scatter_format<R>::max_field + 1 - int(h->bottom_flipped);
  return detred::detail::make_geometry(bottom, top, width);
}

// Whether this call's data take narrow words (scatter_levels.hpp), and their geometry: narrow_p (the input's precision;
// 0 where the host ruled them out) and a counted multiplicity give a width, and the levels must fit the workspace that
// wide_levels words of 64 bits a slot make.
__device__ __forceinline__ bool narrow_geometry(const scatter_header* h, int narrow_p, int wide_levels,
                                                scatter_geometry& g) {
  if (narrow_p == 0 || h->max_count == 0) return false;
  const int width = detred::detail::narrow_width(narrow_p, h->max_count);
  if (width == 0) return false;
  g = read_geometry<float>(h, width);
  return g.levels <= 2 * wide_levels;
}

template <class R, class T>
__device__ __forceinline__ typename scatter_format<R>::bits_type term_bits(T x) {
  return detred::bits_of(widen<R>(x));
}

// One term's fields into the running max of top and of (max_field + 1 - field).
template <class R, class T>
__device__ __forceinline__ void geometry_term(T x, unsigned& top, unsigned& flipped) {
  const int f = detred::detail::effective_field<R>(term_bits<R>(x));
  if (f != 0) {
    top = max(top, unsigned(f));
    flipped = max(flipped, unsigned(scatter_format<R>::max_field + 1 - f));
  }
}

// The block's table of row counts in count_rows: a power of two of (row + 1, count) entries in shared memory.
inline constexpr int count_table_entries = 1024;

// counts[r] += the rows i with index[i] == r (zeroed before), by integer atomics that return nothing: lanes of a warp
// with equal indices combine first (__match_any_sync), then each group's count goes into the block's table (open
// addressing, four probes; a row it cannot place goes straight to `counts`), and the table is added to `counts` at the
// end: a row that many source rows share (Zipf indices) costs one global atomic a block, not one a warp, whose
// serialisation in L2 would stall the stream of values behind it. Block-uniform (it synchronises the block); run by
// geometry_kernel over the index before it streams the values. Rows must be below 2^32 - 1.
template <class I>
__device__ __forceinline__ void count_rows(const I* __restrict__ index, std::uint64_t n, std::uint64_t m,
                                           unsigned* __restrict__ counts, unsigned* keys, unsigned* tallies) {
  for (int e = int(threadIdx.x); e < count_table_entries; e += int(blockDim.x)) keys[e] = tallies[e] = 0;
  __syncthreads();
  const int lane = int(threadIdx.x & 31);
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  for (std::uint64_t base = std::uint64_t(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); base < n; base += stride) {
    const std::uint64_t i = base + std::uint64_t(lane);
    bool ok = i < n;
    std::uint64_t r = 0;
    if (ok) {
      const I v = index[i];
      ok = v >= 0 && std::uint64_t(v) < m;
      r = ok ? std::uint64_t(v) : 0;
    }
    const unsigned group = __match_any_sync(0xffffffffu, ok ? r : ~0ull - unsigned(lane));
    if (ok && lane == __ffs(group) - 1) {
      const unsigned add = unsigned(__popc(group)), key = unsigned(r) + 1;
      unsigned e = (key * 2654435761u) >> 22;  // 10 bits: count_table_entries
      bool placed = false;
      for (int probe = 0; probe < 4 && !placed; ++probe, e = (e + 1) & (count_table_entries - 1)) {
        const unsigned held = atomicCAS(&keys[e], 0u, key);
        if (held == 0 || held == key) {
          atomicAdd(&tallies[e], add);
          placed = true;
        }
      }
      if (!placed) atomicAdd(&counts[r], add);
    }
  }
  __syncthreads();
  for (int e = int(threadIdx.x); e < count_table_entries; e += int(blockDim.x))
    if (keys[e] != 0) atomicAdd(&counts[keys[e] - 1], tallies[e]);
}

// 16-byte loads, two in flight a thread, where the values are 16-byte aligned; the rest one element at a time. With
// `counts` set (narrow words), first the rows' counts (count_rows), whose atomics stay in flight meanwhile.
template <class R, class T, class I>
__global__ void __launch_bounds__(1024)
    geometry_kernel(const T* __restrict__ values, std::uint64_t count, scatter_header* h, const I* __restrict__ index,
                    std::uint64_t rows, std::uint64_t m, unsigned* __restrict__ counts) {
  __shared__ unsigned keys[count_table_entries], tallies[count_table_entries];
  if (counts != nullptr) count_rows(index, rows, m, counts, keys, tallies);
  constexpr int per_vector = int(16 / sizeof(T));
  unsigned top = 0, flipped = 0;
  const std::uint64_t thread = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::uint64_t threads = std::uint64_t(gridDim.x) * blockDim.x;
  std::uint64_t scalar_from = 0;
  if ((reinterpret_cast<std::uintptr_t>(values) & 15) == 0) {
    const uint4* vectors = reinterpret_cast<const uint4*>(values);
    const std::uint64_t nv = count / per_vector;
    std::uint64_t v = thread;
    for (; v + threads < nv; v += 2 * threads) {
      const uint4 a = vectors[v], b = vectors[v + threads];
      const T* ea = reinterpret_cast<const T*>(&a);
      const T* eb = reinterpret_cast<const T*>(&b);
#pragma unroll
      for (int e = 0; e < per_vector; ++e) {
        geometry_term<R>(ea[e], top, flipped);
        geometry_term<R>(eb[e], top, flipped);
      }
    }
    if (v < nv) {
      const uint4 a = vectors[v];
      const T* ea = reinterpret_cast<const T*>(&a);
#pragma unroll
      for (int e = 0; e < per_vector; ++e) geometry_term<R>(ea[e], top, flipped);
    }
    scalar_from = nv * per_vector;
  }
  for (std::uint64_t t = scalar_from + thread; t < count; t += threads) geometry_term<R>(values[t], top, flipped);
  top = __reduce_max_sync(0xffffffffu, top);
  flipped = __reduce_max_sync(0xffffffffu, flipped);
  if ((threadIdx.x & 31) == 0 && top != 0) {
    atomicMax(&h->top, top);
    atomicMax(&h->bottom_flipped, flipped);
  }
}

// Whether output row `row` receives no source row (narrow words: `counts`, from count_rows). Its levels and flags are
// then neither cleared nor read, and finish_kernel leaves its output as the prior value alone rounds.
__device__ __forceinline__ bool untouched_row(const unsigned* __restrict__ counts, std::uint64_t row) {
  return counts != nullptr && counts[row] == 0;
}

// Zeroes the levels the call's geometry uses and the flags: every slot's for wide words; with narrow words (`counts`
// set, int32 words of d-slot rows) only the slots of output rows that some source row hits.
template <class R>
__global__ void __launch_bounds__(1024)
    clear_kernel(const scatter_header* h, int width, int narrow_p, int wide_levels, level_word<R>* levels,
                 std::uint32_t* flags, std::uint64_t slots, const unsigned* __restrict__ counts, std::uint64_t d) {
  const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
  const std::uint64_t first = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  scatter_geometry narrow;
  if (narrow_geometry(h, narrow_p, wide_levels, narrow)) {
    auto* words = reinterpret_cast<std::int32_t*>(levels);
    for (std::uint64_t s = first; s < slots; s += stride) {
      if (untouched_row(counts, s / d)) continue;
      flags[s] = 0;
      for (int j = 0; j < narrow.levels; ++j) words[std::uint64_t(j) * slots + s] = 0;
    }
    return;
  }
  const scatter_geometry g = read_geometry<R>(h, width);
  const std::uint64_t words = std::uint64_t(g.levels) * slots;
  for (std::uint64_t t = first; t < words || t < slots; t += stride) {
    if (t < words) levels[t] = level_word<R>{};
    if (t < slots) flags[t] = 0;
  }
}

// w += k with integer atomics (global or shared memory). The 128-bit word adds its low half, takes the carry out of
// the value the atomic returns, and adds the high half plus the carry: every add's carry is counted once, so the
// word ends at the exact sum mod 2^128 whatever the interleaving.
template <class R>
__device__ __forceinline__ void atomic_add_word(level_word<R>* w, const level_word<R>& k) {
  if constexpr (scatter_format<R>::word_bits == 64) {
    atomicAdd(reinterpret_cast<unsigned long long*>(&w->lo), (unsigned long long)k.lo);
  } else {
    const unsigned long long old = atomicAdd(reinterpret_cast<unsigned long long*>(&w->lo), (unsigned long long)k.lo);
    const unsigned long long hi = k.hi + (old + k.lo < old ? 1ull : 0ull);
    if (hi != 0) atomicAdd(reinterpret_cast<unsigned long long*>(&w->hi), hi);
  }
}

// The per-block table: entry of effective field f = level << 8 | shift (scatter_levels.hpp, level_entry).
template <class R>
__device__ __forceinline__ void build_table(std::uint16_t* table, const scatter_geometry& g) {
  for (int f = int(threadIdx.x); f <= scatter_format<R>::max_field; f += blockDim.x)
    table[f] = f >= g.bottom && f <= g.top ? detred::detail::level_entry(g, f) : std::uint16_t(0);
}

// One lane's term, called by all 32 lanes together (warp-uniform). `ok`: the lane holds a term with a valid slot.
// Private: levels in shared memory (`words`, slots apart); else global words. Aggregate (global float words only):
// lanes that hit the same word combine first (pays where indices repeat within a warp).
// Returns whether the warp aggregated and found lanes sharing a word (the caller's probe of contention).
template <class R, bool Private, bool Aggregate>
__device__ __forceinline__ bool add_term(bool ok, std::uint64_t slot, typename scatter_format<R>::bits_type bits,
                                         const std::uint16_t* table, level_word<R>* words, std::uint64_t slots,
                                         std::uint32_t* flags, bool aggregate = false) {
  const auto parts = detred::detail::split_bits<R>(bits);
  const bool special = parts.field > scatter_format<R>::max_field;
  const bool finite_nonzero = !special && (parts.field != 0 || parts.fraction != 0);
  if (ok && special) atomicOr(&flags[slot], detred::detail::special_flags<R>(parts));
  const bool adds = ok && finite_nonzero;
  level_word<R> k{};
  int level = 0;
  if (adds) {
    const std::uint16_t entry = table[parts.field == 0 ? 1 : parts.field];
    level = entry >> 8;
    k = detred::detail::term_word<R>(parts, entry & 0xff);
  }
  level_word<R>* w = words + std::uint64_t(level) * slots + slot;
  if constexpr (Aggregate && !Private && scatter_format<R>::word_bits == 64) {
    if (!aggregate) {
      if (adds) atomic_add_word<R>(w, k);
      return false;
    }
    // Lanes that add to the same word: the lowest adds the group's sum (exact: a subset's sum obeys the slot's bound).
    const int lane = int(threadIdx.x & 31);
    const unsigned long long key = adds ? (slot << 6 | unsigned(level)) : ~0ull - unsigned(lane);
    const unsigned group = __match_any_sync(0xffffffffu, key);
    const int leader = __ffs(group) - 1;
    unsigned rest = adds && lane == leader ? group & ~(1u << lane) : 0u;
    unsigned long long sum = k.lo;
    while (__any_sync(0xffffffffu, rest != 0)) {
      const int source = rest ? __ffs(rest) - 1 : lane;
      const unsigned long long other = __shfl_sync(0xffffffffu, (unsigned long long)k.lo, source);
      if (rest) {
        sum += other;
        rest &= rest - 1;
      }
    }
    if (adds && lane == leader) atomicAdd(reinterpret_cast<unsigned long long*>(&w->lo), sum);
    return __any_sync(0xffffffffu, adds && __popc(group) > 1);
  } else {
    if (adds) atomic_add_word<R>(w, k);
    return false;
  }
}

// The scatter kernel. Rows = false: term t = values[t] into slot index[t] (d = 1). Rows = true: warp per source row
// i, its d terms into slots index[i] * d + c (distinct within a pass: no aggregation). Private: `slots` words a level
// in dynamic shared memory (after the table), flushed to the global levels at the end.
template <class R, class T, class I, bool Rows, bool Private, bool Aggregate>
__global__ void __launch_bounds__(1024)
    scatter_kernel(const T* __restrict__ values, const I* __restrict__ index, std::uint64_t n, std::uint64_t m,
                   std::uint64_t d, scatter_header* h, int width, int narrow_p, int wide_levels,
                   level_word<R>* __restrict__ levels, std::uint32_t* __restrict__ flags) {
  scatter_geometry narrow;
  if (narrow_geometry(h, narrow_p, wide_levels, narrow)) return;  // narrow_rows_kernel's call
  extern __shared__ __align__(16) unsigned char shared[];
  constexpr int table_bytes = ((scatter_format<R>::max_field + 1) * 2 + 15) / 16 * 16;
  std::uint16_t* table = reinterpret_cast<std::uint16_t*>(shared);
  level_word<R>* local = reinterpret_cast<level_word<R>*>(shared + table_bytes);
  const scatter_geometry g = read_geometry<R>(h, width);
  build_table<R>(table, g);
  const std::uint64_t slots = m * d;
  if constexpr (Private) {
    for (std::uint64_t t = threadIdx.x; t < std::uint64_t(g.levels) * slots; t += blockDim.x)
      local[t] = level_word<R>{};
  }
  __syncthreads();
  level_word<R>* words = Private ? local : levels;
  const int lane = int(threadIdx.x & 31);
  unsigned long long invalid = 0;
  if constexpr (!Rows) {
    const std::uint64_t stride = std::uint64_t(gridDim.x) * blockDim.x;
    // Aggregation costs a match a pass: a warp keeps it while its passes find shared words, and otherwise probes
    // once every aggregate_probe passes (uniform indices over many slots rarely share one).
    bool aggregate = true;
    unsigned pass = 0;
    for (std::uint64_t base = std::uint64_t(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); base < n;
         base += stride, ++pass) {
      const std::uint64_t t = base + lane;
      bool ok = t < n;
      std::uint64_t slot = 0;
      typename scatter_format<R>::bits_type bits = 0;
      if (ok) {
        const I r = index[t];
        bits = term_bits<R>(values[t]);
        ok = r >= 0 && std::uint64_t(r) < m;
        invalid += ok ? 0 : 1;
        slot = ok ? std::uint64_t(r) : 0;
      }
      const bool probe = aggregate || pass % aggregate_probe == 0;
      const bool shared = add_term<R, Private, Aggregate>(ok, slot, bits, table, words, slots, flags, probe);
      if (probe) aggregate = shared;
    }
  } else {
    const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
    for (std::uint64_t i = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5; i < n; i += warps) {
      const I r = index[i];
      const bool row_ok = r >= 0 && std::uint64_t(r) < m;
      if (!row_ok) {
        invalid += lane == 0 ? d : 0;
        continue;  // warp-uniform
      }
      // rows_unroll passes of the row loaded before their atomics: more bytes in flight a warp.
      for (std::uint64_t c0 = 0; c0 < d; c0 += 32 * rows_unroll) {
        typename scatter_format<R>::bits_type bits[rows_unroll];
#pragma unroll
        for (int u = 0; u < rows_unroll; ++u) {
          const std::uint64_t c = c0 + 32 * u + lane;
          bits[u] = c < d ? term_bits<R>(values[i * d + c]) : typename scatter_format<R>::bits_type(0);
        }
#pragma unroll
        for (int u = 0; u < rows_unroll; ++u) {
          const std::uint64_t c = c0 + 32 * u + lane;
          const bool ok = c < d;
          add_term<R, Private, false>(ok, std::uint64_t(r) * d + (ok ? c : 0), bits[u], table, words, slots, flags);
        }
      }
    }
  }
  for (int o = 16; o > 0; o >>= 1) invalid += __shfl_xor_sync(0xffffffffu, invalid, o);
  if (lane == 0 && invalid != 0) atomicAdd(&h->invalid, invalid);
  if constexpr (Private) {
    __syncthreads();
    for (std::uint64_t t = threadIdx.x; t < std::uint64_t(g.levels) * slots; t += blockDim.x) {
      const level_word<R> w = local[t];
      if (!detred::detail::is_zero_word<R>(w)) atomic_add_word<R>(levels + t, w);
    }
  }
}

// A slot of an untouched output row (narrow words): a finite prior value is its own correctly rounded sum (-0.0
// included: no term can make it +0.0) and stays as it is; a NaN or infinite one is rounded through narrow_slot_result
// with zero words, as a touched slot's would be.
__device__ __forceinline__ void finish_untouched_slot(float* out, const scatter_geometry& g, int p, float prior) {
  if (detred::detail::split_bits<float>(detred::bits_of(prior)).field <= scatter_format<float>::max_field) return;
  constexpr std::int32_t no_words[1] = {0};
  *out = detred::detail::narrow_slot_result(no_words, 0, g, p, prior, 0u);
}

// Narrow words, four slots a thread: each level's four words, the four priors and the four flags by 16-byte loads, four
// independent roundings (narrow_units_result, else narrow_slot_result); the same results as one slot at a time.
// Needs slots and d multiples of 4 and `out` 16-byte aligned (the workspace's arrays are). Returns whether a slot came
// out -0.0 (marked in its flags for zero_sign_kernel).
__device__ __forceinline__ bool finish_narrow_quads(const scatter_geometry& g, int p,
                                                    const std::int32_t* __restrict__ words,
                                                    std::uint32_t* __restrict__ flags, float* __restrict__ out,
                                                    std::uint64_t slots, const unsigned* __restrict__ counts,
                                                    std::uint64_t d) {
  const bool fast = detred::detail::narrow_fast_geometry(g);
  bool zero = false;
  for (std::uint64_t q = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; q < slots / 4;
       q += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t s = 4 * q;
    const float4 p4 = reinterpret_cast<const float4*>(out)[q];
    const float prior[4] = {p4.x, p4.y, p4.z, p4.w};
    if (untouched_row(counts, s / d)) {
#pragma unroll
      for (int k = 0; k < 4; ++k) finish_untouched_slot(out + s + k, g, p, prior[k]);
      continue;
    }
    const uint4 f4 = reinterpret_cast<const uint4*>(flags)[q];
    const std::uint32_t slot_flags[4] = {f4.x, f4.y, f4.z, f4.w};
    __int128 t[4] = {0, 0, 0, 0};
    bool any[4] = {false, false, false, false};
    if (fast) {
      for (int j = 0; j < g.levels; ++j) {
        const int4 w = reinterpret_cast<const int4*>(words + std::uint64_t(j) * slots)[q];
        const std::int32_t word[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
        for (int k = 0; k < 4; ++k) {
          any[k] |= word[k] != 0;
          detred::detail::add_narrow_word(t[k], word[k], j, g);
        }
      }
    }
    float result[4];
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (!fast || !detred::detail::narrow_units_result(t[k], any[k], g, p, prior[k], slot_flags[k], result[k]))
        result[k] = detred::detail::narrow_slot_result(words + s + k, slots, g, p, prior[k], slot_flags[k]);
    reinterpret_cast<float4*>(out)[q] = make_float4(result[0], result[1], result[2], result[3]);
#pragma unroll
    for (int k = 0; k < 4; ++k)
      if (detred::bits_of(result[k]) == 0x80000000u) {
        flags[s + k] = slot_provisional_negative_zero;
        zero = true;
      }
  }
  return zero;
}

// One thread a slot (narrow words where the shapes allow: four), each slot's exact value rounded once over its prior.
template <class R>
__global__ void __launch_bounds__(1024)
    finish_kernel(scatter_header* h, int width, int narrow_p, int wide_levels, const level_word<R>* __restrict__ levels,
                  std::uint32_t* __restrict__ flags, R* __restrict__ out, std::uint64_t slots,
                  const unsigned* __restrict__ counts, std::uint64_t d) {
  scatter_geometry g = read_geometry<R>(h, width), narrow_g;
  const bool narrow = narrow_geometry(h, narrow_p, wide_levels, narrow_g);
  if (narrow) g = narrow_g;
  const auto* words = reinterpret_cast<const std::int32_t*>(levels);
  bool zero = false;
  if constexpr (std::is_same_v<R, float>) {
    if (narrow && slots % 4 == 0 && d % 4 == 0 && (reinterpret_cast<std::uintptr_t>(out) & 15) == 0) {
      zero = finish_narrow_quads(g, narrow_p, words, flags, out, slots, counts, d);
      if (__any_sync(0xffffffffu, zero) && (threadIdx.x & 31) == 0) atomicOr(&h->zero_slots, 1u);
      return;
    }
  }
  for (std::uint64_t s = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; s < slots;
       s += std::uint64_t(gridDim.x) * blockDim.x) {
    const R prior = out[s];
    if constexpr (std::is_same_v<R, float>) {
      if (narrow && untouched_row(counts, s / d)) {
        finish_untouched_slot(out + s, g, narrow_p, prior);
        continue;
      }
    }
    const std::uint32_t slot_flags = flags[s];
    R result;
    // The float fast path keeps the slot in registers; the exact accumulator (local memory) is the fallback.
    bool done = false;
    if constexpr (std::is_same_v<R, float>) {
      if (narrow) {
        if (!detred::detail::narrow_slot_result_fast(words + s, slots, g, narrow_p, prior, slot_flags, result))
          result = detred::detail::narrow_slot_result(words + s, slots, g, narrow_p, prior, slot_flags);
        done = true;
      } else {
        done = detred::detail::slot_result_float_fast(levels + s, slots, g, prior, slot_flags, result);
      }
    }
    if (!done) result = detred::detail::slot_result<R>(levels + s, slots, g, prior, slot_flags);
    out[s] = result;
    if (detred::bits_of(result) == detred::bits_of(-R(0))) {
      flags[s] = slot_provisional_negative_zero;
      zero = true;
    }
  }
  if (__any_sync(0xffffffffu, zero) && (threadIdx.x & 31) == 0) atomicOr(&h->zero_slots, 1u);
}

// A slot left at -0.0 holds only -0.0 terms, or terms that cancelled exactly, or +0.0 terms (the levels cannot tell):
// any term there other than -0.0 makes the exact zero +0.0. Returns at once when no slot is -0.0.
template <class R, class T, class I>
__global__ void __launch_bounds__(1024)
    zero_sign_kernel(const scatter_header* h, const T* __restrict__ values, const I* __restrict__ index,
                     std::uint64_t n, std::uint64_t m, std::uint64_t d, const std::uint32_t* __restrict__ flags,
                     R* out) {
  if (h->zero_slots == 0) return;
  const std::uint64_t count = n * d;
  for (std::uint64_t t = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; t < count;
       t += std::uint64_t(gridDim.x) * blockDim.x) {
    const std::uint64_t i = t / d, c = t - i * d;
    const I r = index[i];
    if (r < 0 || std::uint64_t(r) >= m) continue;
    const std::uint64_t slot = std::uint64_t(r) * d + c;
    if (!(flags[slot] & slot_provisional_negative_zero)) continue;
    if (term_bits<R>(values[t]) == detred::bits_of(-R(0))) continue;
    // Every writer stores the same +0.0: an atomic exchange keeps the stores race-free.
    if constexpr (sizeof(R) == 4)
      atomicExch(reinterpret_cast<unsigned*>(out + slot), 0u);
    else
      atomicExch(reinterpret_cast<unsigned long long*>(out + slot), 0ull);
  }
}

}  // namespace detred::cuda::detail
