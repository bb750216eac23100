// The baselines detred is measured against: the classic GPU reduction ladder, atomic reductions and the CPU's
// everyday parallel reduction. None of them is part of detred's promised API (they live in detred::baselines, never
// linked into detred::detred); they exist so that detred-audit and the benchmarks can show what the canonical order
// buys. Each variant is written as the literature writes it (Harris, "Optimizing Parallel Reduction in CUDA";
// Brent's lemma; Luitjens, "Faster Parallel Reductions on Kepler"), not tuned into the canonical kernel.
//
// In the style of CUB's BlockReduceAlgorithm, every entry states its association order, its guarantee in detred's
// words (detred/determinism.hpp) and its error bound (S = sum |x_i|, u the accumulation type's unit roundoff,
// gamma_k = k u / (1 - k u)). Every bound below is at most gamma_{n-1} S, the bound of any order of n - 1 additions,
// which the tests and detred-audit assert.
#pragma once

#include <array>
#include <string_view>

#include "detred/determinism.hpp"

namespace detred::baselines {

enum class ladder_variant {
  // One kernel launch per tree level: launch k adds neighbours (2i, 2i+1) of level k-1, an odd last element is carried
  // up unchanged. Order: a pure function of n (a pairwise tree, left-aligned; not detred's canonical order when n is
  // not a power of two). gpu_to_gpu. Bound gamma_{ceil(log2 n)} S. ceil(log2 n) launches.
  one_kernel_per_level,
  // Harris's reduce0: each block loads blockDim elements into shared memory, then for s = 1, 2, 4, ...: threads with
  // tid % (2s) == 0 add sdata[tid + s] (interleaved addressing, divergent branches). Block sums are reduced again by
  // the same kernel, the array shrinking by the block size per launch, until one value remains. Order: adjacent pairs
  // over aligned power-of-two blocks, and each pass continues the same aligned tree, so the association is the
  // complete pairwise tree over n padded with the identity -0.0, whatever blockDim: a function of n alone (found by
  // the tests: six configurations, one result), the same tree as one_kernel_per_level. gpu_to_gpu. Bound
  // gamma_{ceil(log2 n)} S.
  interleaved_divergent,
  // Harris's reduce2: for s = blockDim/2, ..., 1, threads tid < s add sdata[tid + s] (sequential addressing, no
  // divergence, no bank conflicts). Multi-pass as above. Order: per block, element tid is joined with tid + s: a tree
  // over strided pairs, depends on blockDim. run_to_run. Bound gamma_{ceil(log2 n)+passes} S.
  sequential_addressing,
  // Harris's reduce3: as sequential_addressing, but each thread adds two elements (i and i + blockDim) while loading,
  // so a block covers 2 blockDim elements. run_to_run. Bound gamma_{ceil(log2 n)+passes} S.
  first_add_during_load,
  // Harris's reduce5: first add during load, the shared-memory tree down to 64, then the last warp unrolled (written
  // with __syncwarp() between steps, as the CUDA 9+ guidance requires of warp-synchronous code). run_to_run.
  unrolled_last_warp,
  // Luitjens's Kepler reduction: each thread sums a grid-stride sequence (strided by the whole grid), then
  // __shfl_down_sync within the warp, warp sums through shared memory, a second pass with one block. Order depends
  // on grid and block size. run_to_run. Bound gamma_{n/P + log2 P + passes} S with P threads.
  warp_shuffle,
  // Chunked after Brent's lemma: a fixed number P of threads (grid x block), thread t sums its own contiguous chunk of
  // ceil(n/P) elements sequentially, then a tree in shared memory and a second pass with one block. Order depends on
  // P. run_to_run. Bound gamma_{n/P + log2 P + passes} S.
  chunked_brent,
  // chunked_brent with a Kahan accumulator per thread (the chunk's sum s, compensation c; the chunk contributes s).
  // Plain tree over the chunk sums. run_to_run. Bound (2u + O(n u^2)) per chunk, then gamma_{log2 P + passes}.
  chunked_kahan,
  // chunked_brent with Neumaier's accumulator per thread (the chunk contributes s + c). run_to_run. As above.
  chunked_neumaier,
};

enum class atomic_variant {
  // atomicAdd of every element into the one result (grid-stride loop). not_guaranteed: the order of the additions
  // is the order in which the memory system serves them. Bound gamma_{n-1} S.
  per_element,
  // each thread sums a grid-stride sequence, a __shfl_down_sync warp reduce, lane 0 adds the warp's sum atomically.
  // not_guaranteed. Bound gamma_{n-1} S.
  per_warp,
  // as per_warp, then a block reduce through shared memory, thread 0 adds the block's sum atomically. not_guaranteed.
  // Bound gamma_{n-1} S.
  per_block,
};

struct variant_facts {
  std::string_view name;  // the stable name (detred-audit: gpu/ladder/<name>, gpu/atomic_<name>)
  determinism guarantee;
  std::string_view order;  // in one line
};

inline constexpr std::array<ladder_variant, 9> all_ladder_variants = {
    ladder_variant::one_kernel_per_level,  ladder_variant::interleaved_divergent, ladder_variant::sequential_addressing,
    ladder_variant::first_add_during_load, ladder_variant::unrolled_last_warp,    ladder_variant::warp_shuffle,
    ladder_variant::chunked_brent,         ladder_variant::chunked_kahan,         ladder_variant::chunked_neumaier};

inline constexpr std::array<atomic_variant, 3> all_atomic_variants = {
    atomic_variant::per_element, atomic_variant::per_warp, atomic_variant::per_block};

constexpr variant_facts facts(ladder_variant v) {
  using enum ladder_variant;
  switch (v) {
    case one_kernel_per_level:
      return {"one_kernel_per_level", determinism::gpu_to_gpu, "pairwise levels, odd element carried: a function of n"};
    case interleaved_divergent:
      return {"interleaved_divergent", determinism::gpu_to_gpu, "adjacent pairs, aligned: a function of n"};
    case sequential_addressing:
      return {"sequential_addressing", determinism::run_to_run, "per-block tree of strided pairs: depends on blockDim"};
    case first_add_during_load:
      return {"first_add_during_load", determinism::run_to_run,
              "(i, i+blockDim) then strided tree: depends on blockDim"};
    case unrolled_last_warp:
      return {"unrolled_last_warp", determinism::run_to_run, "as first_add_during_load: depends on blockDim"};
    case warp_shuffle:
      return {"warp_shuffle", determinism::run_to_run, "grid-stride sums, shuffle tree: depends on grid and blockDim"};
    case chunked_brent:
      return {"chunked_brent", determinism::run_to_run, "contiguous chunk per thread, then tree: depends on P"};
    case chunked_kahan:
      return {"chunked_kahan", determinism::run_to_run, "Kahan chunk per thread, then tree: depends on P"};
    case chunked_neumaier:
      return {"chunked_neumaier", determinism::run_to_run, "Neumaier chunk per thread, then tree: depends on P"};
  }
  return {"unknown", determinism::not_guaranteed, ""};
}

constexpr variant_facts facts(atomic_variant v) {
  using enum atomic_variant;
  switch (v) {
    case per_element:
      return {"element", determinism::not_guaranteed, "atomicAdd per element, in the order the L2 serves them"};
    case per_warp:
      return {"warp", determinism::not_guaranteed, "warp sums, atomicAdd per warp in arrival order"};
    case per_block:
      return {"block", determinism::not_guaranteed, "block sums, atomicAdd per block in arrival order"};
  }
  return {"unknown", determinism::not_guaranteed, ""};
}

}  // namespace detred::baselines
