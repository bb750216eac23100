// Coalesced loads for per-thread runs of consecutive elements, staged through shared memory one warp at a time: the
// generic reduce's loads (detail/generic_reduce_engine.cuh). Not API. A thread can then reduce a run of consecutive
// elements (an aligned power-of-two run is a complete subtree of the canonical order, docs/ORDER.md) while the
// warp's global reads stay coalesced, for any trivially copyable element type.
//
// A pass is 32 lanes x Items consecutive elements (Items a power of two, Items * sizeof(In) a multiple of 16 bytes
// and at least 64 bytes: stage_shape<In>). The warp reads the pass as 16-byte units, unit u = i * 32 + lane (every
// load instruction of the warp reads 512 contiguous bytes), writes them to its shared-memory slice, and each lane
// then reads back the Units units of its own run. The slice has one 16-byte pad after every 8 units, so that both the
// writes (consecutive units) and the reads (stride Units) are free of bank conflicts for Units = 1, 2, 4 and 8.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace detred::cuda::detail {

template <class In>
struct stage_shape {
  static constexpr int items = [] {
    int i = 1;
    while (i * int(sizeof(In)) < 64 || (i * int(sizeof(In))) % 16 != 0) i *= 2;
    return i;
  }();                                                               // elements per lane per pass (power of two)
  static constexpr int units = int(items * sizeof(In) / 16);         // 16-byte units per lane per pass
  static constexpr int pass_elements = 32 * items;                   // per warp per pass
  static constexpr int slice_units = 32 * units + (32 * units) / 8;  // shared-memory slice per warp, padded
  static constexpr std::size_t slice_bytes = std::size_t(slice_units) * 16;
};

// The unit a lane reads from global memory; UnitBytes = 16: one vector load (the pass is 16-byte aligned); 8, 4, 2
// or 1: 16 / UnitBytes loads of that size (a pointer aligned only to its element type).
template <int UnitBytes>
__device__ __forceinline__ uint4 load_unit(const unsigned char* __restrict__ p) {
  if constexpr (UnitBytes == 16) {
    return __ldg(reinterpret_cast<const uint4*>(p));
  } else {
    using word =
        std::conditional_t<UnitBytes == 8, unsigned long long,
                           std::conditional_t<UnitBytes == 4, unsigned,
                                              std::conditional_t<UnitBytes == 2, unsigned short, unsigned char>>>;
    word w[16 / UnitBytes];
#pragma unroll
    for (int i = 0; i < 16 / UnitBytes; ++i) w[i] = reinterpret_cast<const word*>(p)[i];
    uint4 u;
    std::memcpy(&u, w, 16);
    return u;
  }
}

// The warp's global loads for the pass starting at `pass` (bytes): units[i] = unit i * 32 + lane. In flight until
// stage_exchange uses them, so a caller can issue the next pass's loads before reducing the current one.
template <class In, int UnitBytes>
__device__ __forceinline__ void stage_load(const In* __restrict__ pass, uint4 (&units)[stage_shape<In>::units]) {
  const int lane = threadIdx.x & 31;
  const auto* bytes = reinterpret_cast<const unsigned char*>(pass);
#pragma unroll
  for (int i = 0; i < stage_shape<In>::units; ++i)
    units[i] = load_unit<UnitBytes>(bytes + (std::size_t(i) * 32 + lane) * 16);
}

// Through the warp's slice: from the coalesced units (as stage_load left them) to this lane's own run, returned as
// `run` (Items consecutive elements: the pass's elements [lane * Items, (lane + 1) * Items)). Contains the warp
// synchronisations it needs; all 32 lanes must call it.
template <class In>
__device__ __forceinline__ void stage_exchange(const uint4 (&units)[stage_shape<In>::units], uint4* slice,
                                               In (&run)[stage_shape<In>::items]) {
  constexpr int U = stage_shape<In>::units;
  const int lane = threadIdx.x & 31;
  __syncwarp();  // the previous pass's reads of the slice are done
#pragma unroll
  for (int i = 0; i < U; ++i) {
    const int u = i * 32 + lane;
    slice[u + (u >> 3)] = units[i];
  }
  __syncwarp();
  uint4 mine[U];
#pragma unroll
  for (int j = 0; j < U; ++j) {
    const int u = lane * U + j;
    mine[j] = slice[u + (u >> 3)];
  }
  std::memcpy(run, mine, sizeof(run));
}

}  // namespace detred::cuda::detail
