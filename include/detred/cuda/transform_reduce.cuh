// Device-wide map-reduce and generic reduce in the canonical order (docs/ORDER.md), for any trivially copyable
// element and node types and any associative device operator, commutative or not. Compile with nvcc (the operator
// and map are the caller's device functors, so the kernels are instantiated in the caller's translation unit).
//
// transform_reduce(x[, y], n, map, op) computes  map(x[0]) (+) map(x[1]) (+) ... (+) map(x[n-1])  where (+) is
// op(left, right), associated in the canonical order of n: bit for bit what the CPU's canonical engine gives for the
// same map and op (detred::transform_reduce, detred::reduce), for every launch configuration, pointer alignment and
// GPU. Operands are never swapped (the left one always covers lower indices). map may take (x), (x, i) with the
// element's 64-bit index i, or, with a second input y, (x, y). The result is finalize(empty, root) (empty: n == 0,
// root unspecified then), written to *d_out.
//
// Work decomposition (each piece a complete subtree, so none of it changes bits): a pass is 32 lanes x Items
// consecutive elements (detail/generic_warp_stage.cuh); its loads are staged through shared memory so that they are
// coalesced, then each lane reduces its Items elements in registers (thread_subtree), the warp joins its 32 lanes
// (warp_subtree_reduce), and a register counter joins a chunk's passes; the loads of the next two passes (one input;
// the next pass with two inputs) are in flight meanwhile. A unary map may supply a whole lane run's root
// (run_root_map below: MSSP's left-to-right int32 fold, say). One warp per chunk of tiles_per_chunk tiles
// (a tile is 16 KiB of the first input). A finishing kernel (one block) pushes the chunk roots, the tail tiles' roots
// and the remaining elements' complete trees into a binary counter, largest first, and folds it.
//
// Memory: the caller's workspace (transform_reduce_workspace_bytes); no allocation. Pointers need only their element
// type's alignment (16-byte aligned inputs take one vector load per 16 bytes). Asynchronous on `stream`.
#pragma once

#include <cuda_runtime.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <type_traits>

#include "detred/cuda/detail/dependent_launch.cuh"
#include "detred/cuda/block/generic_block_reduce.cuh"
#include "detred/cuda/warp/generic_warp_reduce.cuh"
#include "detred/cuda/detail/generic_warp_stage.cuh"
#include "detred/cuda/error.hpp"
#include "detred/cuda/launch_config.hpp"
#include "detred/errors.hpp"

namespace detred::cuda {

// Marks "no second input" (unary transform_reduce).
struct no_input {};

namespace detail {

inline constexpr int generic_max_block_threads = 256;
inline constexpr int generic_finish_threads = 256;
inline constexpr std::size_t generic_header_bytes = 256;    // workspace: a result slot, then the roots
inline constexpr int generic_counter_levels = 7;            // passes per chunk: at most 16 tiles x 8 passes
inline constexpr std::size_t generic_arrival_offset = 128;  // workspace header: the single pass's arrival word

// Engine variants (issue 14's tuning): each changes speed only, never bits (every piece is still an aligned complete
// subtree, joined in index order). Read from the environment variable DETRED_GENERIC_ENGINE on every call, a comma
// separated list of key=value modifying the base engine below (the engine as measured in run 3; an empty value gives
// it unchanged). Unset, the engine is `tuned_generic_engine` (ahead=3,prefold=1,batch=1, the fastest measured on the
// H100: session 5, 0.951x CUB for plus<float> and product against 0.938x for the base, median of 5 rounds) for nodes
// of at most 8 bytes, the base for larger ones:
//   ahead=2|3|4    passes of loads in flight per warp, one input (two inputs keep one pass each); 4-byte elements on
//                  the 16-byte vector path only (elsewhere 2);
//   minblocks=1|3|4  __launch_bounds__ minimum resident blocks of the chunk kernel (1: none given, as in run 3;
//                  3: at most 85 registers, 4: at most 64);
//   prefold=0|1    the block joins its warps' consecutive chunk roots (an aligned group of block_threads / 32
//                  chunks, a power of two) before writing one root: the finishing fold reads 8x fewer roots
//                  (4-byte elements on the vector path only);
//   batch=0|1      the finishing fold loads a thread's roots 8 at a time (independent loads) before joining them;
//   single=0|1     one kernel: the last block to arrive folds (256 threads; otherwise the finishing kernel runs).
// single=1 and minblocks=3|4 need ahead=2 and exclude each other (the kernels instantiated); others throw.
struct generic_engine {
  int ahead = 2;
  int min_blocks = 1;
  bool prefold = false;
  bool batch = false;
  bool single = false;
};

inline constexpr generic_engine tuned_generic_engine{3, 1, true, true, false};

// `small_node`: the reduction's node is at most 8 bytes (what the session-5 sweep measured: plus, product, dot). Larger
// nodes (MSSP's 32 bytes, matrices) keep the base engine when the variable is unset: ahead=3 and the pre-fold cost
// registers there, unmeasured.
inline generic_engine generic_engine_from_environment(const char* what, bool small_node) {
  const char* env = std::getenv("DETRED_GENERIC_ENGINE");
  if (env == nullptr) return small_node ? tuned_generic_engine : generic_engine{};
  generic_engine e;
  const std::string s(env);
  std::size_t at = 0;
  while (at < s.size()) {
    std::size_t end = s.find(',', at);
    if (end == std::string::npos) end = s.size();
    const std::string item = s.substr(at, end - at);
    at = end + 1;
    if (item.empty()) continue;
    const std::size_t eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const int value = eq == std::string::npos ? 1 : std::atoi(item.c_str() + eq + 1);
    if (key == "ahead" && value >= 2 && value <= 4)
      e.ahead = value;
    else if (key == "minblocks" && (value == 1 || value == 3 || value == 4))
      e.min_blocks = value;
    else if (key == "prefold" && (value == 0 || value == 1))
      e.prefold = value;
    else if (key == "batch" && (value == 0 || value == 1))
      e.batch = value;
    else if (key == "single" && (value == 0 || value == 1))
      e.single = value;
    else
      detred::detail::throw_invalid(what, "DETRED_GENERIC_ENGINE: unknown or out-of-range item '" + item + "'");
  }
  if ((e.single && (e.ahead != 2 || e.min_blocks != 1)) || (e.min_blocks != 1 && e.ahead != 2))
    detred::detail::throw_invalid(what,
                                  "DETRED_GENERIC_ENGINE: single=1 and minblocks=3|4 need ahead=2, and not "
                                  "each other (the kernels instantiated; ptxas: minblocks=4 with ahead=3 or 4 "
                                  "spilled 0.6-0.9 KB)");
  return e;
}

template <class In>
struct generic_tile {
  using stage = stage_shape<In>;
  static constexpr int passes = [] {
    int p = 1;
    while (2 * p * stage::units * 512 <= 16384) p *= 2;
    return p;
  }();  // passes per tile: a tile is the largest power-of-two number of passes within 16 KiB (at least one pass)
  static constexpr std::uint64_t elements = std::uint64_t(passes) * stage::pass_elements;
  static constexpr int level = [] {
    int l = 0;
    while ((std::uint64_t{1} << l) < elements) ++l;
    return l;
  }();
};

template <class Node>
inline constexpr std::size_t root_stride = (sizeof(Node) + 15) / 16 * 16;

// Shared memory per warp, in 16-byte units: the staging slice of each input, then (large nodes) the counter's slots.
template <class X, class Node, bool Binary>
inline constexpr std::size_t warp_smem_units = std::size_t(stage_shape<X>::slice_units) * (Binary ? 2 : 1) +
                                               (sizeof(Node) > 8 ? (generic_counter_levels * sizeof(Node) + 15) / 16
                                                                 : 0);

template <class Map, class X, class Y, class Node>
__device__ __forceinline__ Node apply_map(const Map& map, const X& x, const Y& y, std::uint64_t i) {
  if constexpr (!std::is_same_v<Y, no_input>)
    return map(x, y);
  else if constexpr (std::is_invocable_v<const Map&, const X&, std::uint64_t>)
    return map(x, i);
  else
    return map(x);
}

// A unary map may also give the root of a lane's whole run at once: map.run_root(run) for `const X (&run)[N]`, N
// consecutive elements, returning what thread_subtree<N> would build from the leaves map(run[i]) with the operator
// (the map's author vouches for the same bits: exact integer arithmetic, say). Used in place of the N leaves and
// N - 1 operator calls; the finishing kernel's single elements still take the leaves.
template <class Map, class X, int N, class Node>
concept run_root_map = requires(const Map& m, const X (&run)[N]) {
  { m.run_root(run) } -> std::same_as<Node>;
};

// Root of `passes` consecutive passes starting at element `first` (one warp; returned in every lane). Loads run
// ahead: two passes for one input (two register sets, used in turn), one pass each for two inputs.
template <class Node, class X, class Y, int UnitBytes, int Ahead, class Map, class Op>
__device__ __forceinline__ Node warp_passes_root(const X* __restrict__ x, const Y* __restrict__ y, std::uint64_t first,
                                                 int passes, uint4* slice_x, uint4* slice_y, const Map& map,
                                                 const Op& op) {
  using shape = stage_shape<X>;
  constexpr bool binary = !std::is_same_v<Y, no_input>;
  constexpr int items = shape::items;
  constexpr int ahead = binary ? 1 : Ahead;  // passes whose loads are in flight
  const int lane = threadIdx.x & 31;
  // Pass roots: in registers for small nodes, in the warp's shared slots for large ones.
  using counter = std::conditional_t<(sizeof(Node) > 8), shared_counter<Node, Op, generic_counter_levels>,
                                     register_counter<Node, Op, generic_counter_levels>>;
  counter joined = [&] {
    if constexpr (sizeof(Node) > 8)
      return counter(reinterpret_cast<Node*>(slice_x + stage_shape<X>::slice_units * (binary ? 2 : 1)), op);
    else
      return counter(op);
  }();
  Node root{};
  // Pass p, whose loads are in ux (and uy): through the slices, then pass p + ahead's loads into the same registers,
  // then the lanes' runs, the warp and the counter.
  const auto pass = [&](uint4(&ux)[shape::units], uint4(&uy)[binary ? shape::units : 1], int p) {
    X rx[items];
    stage_exchange<X>(ux, slice_x, rx);
    Y ry[binary ? items : 1];
    if constexpr (binary) stage_exchange<Y>(uy, slice_y, ry);
    if (p + ahead < passes) {
      const std::uint64_t next = first + std::uint64_t(p + ahead) * shape::pass_elements;
      stage_load<X, UnitBytes>(x + next, ux);
      if constexpr (binary) stage_load<Y, UnitBytes>(y + next, uy);
    }
    const std::uint64_t base = first + std::uint64_t(p) * shape::pass_elements + std::uint64_t(lane) * items;
    const auto leaf = [&](int i) -> Node {
      if constexpr (binary)
        return apply_map<Map, X, Y, Node>(map, rx[i], ry[i], base + i);
      else
        return apply_map<Map, X, Y, Node>(map, rx[i], no_input{}, base + i);
    };
    const Node lane_root = [&] {
      if constexpr (!binary && run_root_map<Map, X, items, Node>)
        return map.run_root(rx);
      else
        return thread_subtree<items>(leaf, op);
    }();
    root = joined.push(warp_subtree_reduce(lane_root, op), p);
  };
  uint4 ux[shape::units], uy[binary ? shape::units : 1];
  stage_load<X, UnitBytes>(x + first, ux);
  if constexpr (binary) {
    stage_load<Y, UnitBytes>(y + first, uy);
#pragma unroll 1
    for (int p = 0; p < passes; ++p) pass(ux, uy, p);
  } else if constexpr (ahead == 2) {
    uint4 vx[shape::units];
    if (passes > 1) stage_load<X, UnitBytes>(x + first + shape::pass_elements, vx);
    int p = 0;
#pragma unroll 1
    for (; p + 1 < passes; p += 2) {
      pass(ux, uy, p);
      pass(vx, uy, p + 1);
    }
    if (p < passes) pass(ux, uy, p);
  } else {  // `ahead` register sets, used in turn
    uint4 wx[ahead - 1][shape::units];
#pragma unroll
    for (int j = 1; j < ahead; ++j)
      if (j < passes) stage_load<X, UnitBytes>(x + first + std::uint64_t(j) * shape::pass_elements, wx[j - 1]);
    int p = 0;
#pragma unroll 1
    for (; p + ahead <= passes; p += ahead) {
      pass(ux, uy, p);
#pragma unroll
      for (int j = 1; j < ahead; ++j) pass(wx[j - 1], uy, p + j);
    }
    if (p < passes) pass(ux, uy, p);
#pragma unroll
    for (int j = 1; j < ahead; ++j)
      if (p + j < passes) pass(wx[j - 1], uy, p + j);
  }
  return root;
}

template <class Node, class X, class Y>
struct generic_plan {
  const X* x;
  const Y* y;
  Node* roots;
  std::uint64_t full_chunks;
  int tiles_per_chunk;
  int chunk_level;
  int tail_tiles;
  std::uint64_t remainder_first;  // element index of the remainder (fewer than one tile of elements)
  int remainder_count;
  // Pre-fold (generic_engine::prefold): the full chunks [g 2^group_level, (g + 1) 2^group_level) of each complete
  // group g < full_chunks >> group_level have one root, at roots[g << group_level]; 0: every chunk has its own.
  int group_level;
  bool batch;                    // the finishing fold loads 8 roots at a time
  unsigned long long* arrivals;  // single pass: the arrival word (null: a finishing kernel runs)
};

// The single pass's arrival count (the scheme of src/cuda/sum's arrive_last): the word rests at (tag, 0) between
// calls; a word with another tag (a fresh workspace) is installed by compare-and-swap, counting each block once.
inline constexpr unsigned long long generic_arrival_tag = 0x7F4A7C159Eull;  // 40 bits, arbitrary
inline constexpr int generic_arrival_bits = 24;
__device__ inline bool generic_arrive_last(unsigned long long* word, unsigned grid) {
  constexpr unsigned long long mask = (1ull << generic_arrival_bits) - 1;
  unsigned long long old = atomicAdd(word, 1ull), assumed = 0, arrived = 0;
  if ((old >> generic_arrival_bits) == generic_arrival_tag) return (old & mask) + 1 == grid;
  do {
    assumed = old;
    const bool current = (assumed >> generic_arrival_bits) == generic_arrival_tag;
    arrived = (current ? (assumed & mask) : 0) + 1;
    old = atomicCAS(word, assumed, (generic_arrival_tag << generic_arrival_bits) | arrived);
  } while (old != assumed);
  return arrived == grid;
}

// The finishing fold with the whole block (generic_finish_threads threads): the group roots, the other chunk roots,
// the tail tiles' roots and the remainder's elements, pushed into a binary counter largest first; thread 0 writes.
template <class Node, class X, class Y, class Out, class Map, class Op, class Finalize>
__device__ __forceinline__ void generic_finish_in_block(const generic_plan<Node, X, Y>& plan, const Map& map,
                                                        const Op& op, const Finalize& finalize, Out* out) {
  __shared__ alignas(Node) unsigned char scratch_bytes[sizeof(Node) * (generic_finish_threads / 32)];
  Node* scratch = reinterpret_cast<Node*>(scratch_bytes);
  // thread 0's; the pushes below are the digits of counts, levels strictly decreasing (digit_fold, order.hpp)
  digit_fold<Node, combine_into<Node, Op>> counter{combine_into<Node, Op>{op}};
  const int gl = plan.group_level;
  const std::uint64_t groups = plan.full_chunks >> gl;
  const auto group_root = [&](std::uint64_t i) { return plan.roots[i << gl]; };
  block_push_digits<generic_finish_threads, Node>(group_root, groups, plan.chunk_level + gl, op, scratch, counter,
                                                  plan.batch);
  const std::uint64_t grouped = groups << gl;
  const auto root_at = [&](std::uint64_t i) { return plan.roots[grouped + i]; };
  block_push_digits<generic_finish_threads, Node>(root_at, plan.full_chunks - grouped, plan.chunk_level, op, scratch,
                                                  counter, plan.batch);
  const auto tail_root = [&](std::uint64_t i) { return plan.roots[plan.full_chunks + i]; };
  block_push_digits<generic_finish_threads, Node>(tail_root, std::uint64_t(plan.tail_tiles), generic_tile<X>::level, op,
                                                  scratch, counter);
  const auto element = [&](std::uint64_t i) -> Node {
    const std::uint64_t at = plan.remainder_first + i;
    if constexpr (std::is_same_v<Y, no_input>)
      return apply_map<Map, X, Y, Node>(map, plan.x[at], no_input{}, at);
    else
      return apply_map<Map, X, Y, Node>(map, plan.x[at], plan.y[at], at);
  };
  block_push_digits<generic_finish_threads, Node>(element, std::uint64_t(plan.remainder_count), 0, op, scratch,
                                                  counter);
  if (threadIdx.x == 0) *out = counter.empty() ? finalize(true, Node{}) : finalize(false, counter.fold());
}

// Chunk roots (items [0, full_chunks)) and tail-tile roots (items [full_chunks, items)), one warp per item. With
// plan.group_level > 0 (2^group_level = warps per block) the block takes items in aligned groups and writes one root
// per complete group of full chunks. Single (plan.arrivals non-null, 256 threads): the last block also finishes.
template <class Node, class X, class Y, int UnitBytes, int Ahead, bool Single, bool Prefold, class Out, class Map,
          class Op, class Finalize>
__device__ __forceinline__ void generic_chunk_body(const generic_plan<Node, X, Y>& plan, std::uint64_t items,
                                                   const Map& map, const Op& op, const Finalize& finalize, Out* out) {
  using tile = generic_tile<X>;
  constexpr bool binary = !std::is_same_v<Y, no_input>;
  extern __shared__ uint4 generic_stage_smem[];
  const int warp_in_block = threadIdx.x >> 5;
  uint4* slice_x = generic_stage_smem + std::size_t(warp_in_block) * warp_smem_units<X, Node, binary>;
  uint4* slice_y = slice_x + stage_shape<X>::slice_units;
  const std::uint64_t warp = (std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
  const std::uint64_t warps = (std::uint64_t(gridDim.x) * blockDim.x) >> 5;
  const std::uint64_t chunk = tile::elements * std::uint64_t(plan.tiles_per_chunk);
  cudaTriggerProgrammaticLaunchCompletion();
  const auto item_root = [&](std::uint64_t item) {
    const bool full = item < plan.full_chunks;
    const std::uint64_t first =
        full ? item * chunk : plan.full_chunks * chunk + (item - plan.full_chunks) * tile::elements;
    const int passes = (full ? plan.tiles_per_chunk : 1) * tile::passes;
    return warp_passes_root<Node, X, Y, UnitBytes, Ahead>(plan.x, plan.y, first, passes, slice_x, slice_y, map, op);
  };
  if constexpr (!Prefold) {  // (a compile-time choice: the group loop's registers stay out of the default kernel)
    for (std::uint64_t item = warp; item < items; item += warps) {
      const Node root = item_root(item);
      if ((threadIdx.x & 31) == 0) plan.roots[item] = root;
    }
  } else {
    __shared__ alignas(Node) unsigned char group_bytes[sizeof(Node) * (generic_max_block_threads / 32)];
    Node* group = reinterpret_cast<Node*>(group_bytes);
    const int group_size = 1 << plan.group_level;  // == warps per block
    for (std::uint64_t base = std::uint64_t(blockIdx.x) << plan.group_level; base < items; base += warps) {
      const std::uint64_t item = base + std::uint64_t(warp_in_block);
      const bool folded = base + std::uint64_t(group_size) <= plan.full_chunks;  // uniform over the block
      if (item < items) {
        const Node root = item_root(item);
        if ((threadIdx.x & 31) == 0) {
          if (folded)
            group[warp_in_block] = root;
          else
            plan.roots[item] = root;
        }
      }
      if (folded) {
        __syncthreads();
        if (warp_in_block == 0) {
          const int lane = threadIdx.x & 31;
          Node v = lane < group_size ? group[lane] : Node{};
          v = warp_subtree_reduce(v, op, plan.group_level, group_size);
          if (lane == 0) plan.roots[base] = v;
        }
        __syncthreads();  // the group slots are free again
      }
    }
  }
  if constexpr (Single) {
    __shared__ bool last;
    if ((threadIdx.x & 31) == 0) __threadfence();  // release: this warp's root stores before the arrival
    __syncthreads();
    if (threadIdx.x == 0) last = generic_arrive_last(plan.arrivals, gridDim.x);
    __syncthreads();
    if (last) {
      if (threadIdx.x == 0) *plan.arrivals = generic_arrival_tag << generic_arrival_bits;  // rest state
      __threadfence();  // acquire: every other block's roots are visible from here
      generic_finish_in_block(plan, map, op, finalize, out);
    }
  }
}

// The chunk kernel: MinBlocks = 1 is the plain __launch_bounds__(256) of run 3 (no minimum: ptxas's own register
// choice, 80 for plus<float>); 3 or 4 ask for that many resident blocks (at most 85 or 64 registers).
template <class Node, class X, class Y, int UnitBytes, int Ahead, int MinBlocks, bool Single, bool Prefold, class Out,
          class Map, class Op, class Finalize>
__global__ void __launch_bounds__(generic_max_block_threads)
    generic_chunk_kernel(generic_plan<Node, X, Y> plan, std::uint64_t items, Map map, Op op, Finalize finalize,
                         Out* out) {
  static_assert(MinBlocks == 1);
  generic_chunk_body<Node, X, Y, UnitBytes, Ahead, Single, Prefold>(plan, items, map, op, finalize, out);
}
template <class Node, class X, class Y, int UnitBytes, int Ahead, int MinBlocks, bool Single, bool Prefold, class Out,
          class Map, class Op, class Finalize>
__global__ void __launch_bounds__(generic_max_block_threads, MinBlocks)
    generic_chunk_kernel_bounded(generic_plan<Node, X, Y> plan, std::uint64_t items, Map map, Op op, Finalize finalize,
                                 Out* out) {
  generic_chunk_body<Node, X, Y, UnitBytes, Ahead, Single, Prefold>(plan, items, map, op, finalize, out);
}

template <class Node, class X, class Y, class Out, class Map, class Op, class Finalize>
__global__ void __launch_bounds__(generic_finish_threads)
    generic_finish_kernel(generic_plan<Node, X, Y> plan, Map map, Op op, Finalize finalize, Out* out) {
  cudaGridDependencySynchronize();  // the chunk kernel's roots are complete and visible from here on
  generic_finish_in_block(plan, map, op, finalize, out);
}

inline void validate_generic(const launch_config& c, const char* what) {
  if (c.block_threads != 0 &&
      (c.block_threads < 32 || c.block_threads > generic_max_block_threads || c.block_threads % 32))
    detred::detail::throw_invalid(what, "launch_config.block_threads must be 0 or a multiple of 32 in [32, 256]");
  if (c.grid_blocks < 0) detred::detail::throw_invalid(what, "launch_config.grid_blocks must be >= 0");
  const int t = c.tiles_per_chunk;
  if (t != 0 && t != 1 && t != 2 && t != 4 && t != 8 && t != 16)
    detred::detail::throw_invalid(what, "launch_config.tiles_per_chunk must be 0, 1, 2, 4, 8 or 16");
}

// Throws unless d_workspace is a 16-byte aligned pointer to at least `needed` bytes.
inline void validate_workspace(const void* d_workspace, std::size_t workspace_bytes, std::size_t needed,
                               const char* what) {
  if (d_workspace == nullptr || reinterpret_cast<std::uintptr_t>(d_workspace) % 16 != 0)
    detred::detail::throw_invalid(what, "d_workspace must be a 16-byte aligned device pointer");
  if (workspace_bytes < needed)
    detred::detail::throw_invalid(what, "workspace too small: " + std::to_string(workspace_bytes) + " bytes, " +
                                            std::to_string(needed) + " needed");
}

template <class T>
constexpr int natural_unit_bytes() {
  return alignof(T) >= 8 ? 8 : alignof(T) >= 4 ? 4 : alignof(T) >= 2 ? 2 : 1;
}

}  // namespace detail

// Bytes of device workspace a transform_reduce over n elements of X with node type Node needs, for every launch
// configuration: a 256-byte header, then one root (padded to 16 bytes) per chunk or tail tile.
template <class X, class Node>
constexpr std::size_t transform_reduce_workspace_bytes(std::uint64_t n) {
  return detail::generic_header_bytes + (n / detail::generic_tile<X>::elements + 16) * detail::root_stride<Node>;
}

// The general form: see the file comment. Y = no_input for a unary map (pass y = nullptr).
template <class Node, class X, class Y, class Out, class Map, class Op, class Finalize>
void transform_reduce_finalized(const X* d_x, const Y* d_y, std::uint64_t n, Out* d_out, void* d_workspace,
                                std::size_t workspace_bytes, cudaStream_t stream, Map map, Op op, Finalize finalize,
                                const launch_config& requested = {}, const char* what = "cuda::transform_reduce") {
  static_assert(std::is_trivially_copyable_v<X> && std::is_trivially_copyable_v<Node>);
  constexpr bool binary = !std::is_same_v<Y, no_input>;
  static_assert(!binary || sizeof(X) == sizeof(Y), "transform_reduce: both inputs need elements of the same size");
  using tile = detail::generic_tile<X>;
  detail::validate_generic(requested, what);
  if (n > 0 && (d_x == nullptr || (binary && d_y == nullptr)))
    detred::detail::throw_invalid(what, "an input pointer is null but n > 0");
  const auto addr_x = reinterpret_cast<std::uintptr_t>(d_x), addr_y = reinterpret_cast<std::uintptr_t>(d_y);
  if (addr_x % alignof(X) != 0 || (binary && addr_y % alignof(Y) != 0))
    detred::detail::throw_invalid(what, "an input pointer is not aligned to its element type");
  if (d_out == nullptr) detred::detail::throw_invalid(what, "d_out is null");
  detail::validate_workspace(d_workspace, workspace_bytes, transform_reduce_workspace_bytes<X, Node>(n), what);

  int device = 0, sms = 1;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const int block_threads = requested.block_threads ? requested.block_threads : detail::generic_max_block_threads;
  int tiles_per_chunk = requested.tiles_per_chunk;
  if (tiles_per_chunk == 0) {  // 16 tiles per chunk for large inputs; fewer until every resident warp gets two chunks
    const std::uint64_t resident_warps = std::uint64_t(sms) * 16;  // a typical occupancy of the chunk kernel
    tiles_per_chunk = 16;
    while (tiles_per_chunk > 1 && n / (tile::elements * tiles_per_chunk) < 2 * resident_warps) tiles_per_chunk /= 2;
  }
  const std::uint64_t chunk = tile::elements * std::uint64_t(tiles_per_chunk);
  detail::generic_plan<Node, X, Y> plan{};
  plan.x = d_x;
  plan.y = d_y;
  plan.roots = reinterpret_cast<Node*>(static_cast<unsigned char*>(d_workspace) + detail::generic_header_bytes);
  plan.full_chunks = n / chunk;
  plan.tiles_per_chunk = tiles_per_chunk;
  plan.chunk_level = 0;
  while ((std::uint64_t{1} << plan.chunk_level) < chunk) ++plan.chunk_level;
  const std::uint64_t rest = n - plan.full_chunks * chunk;
  plan.tail_tiles = int(rest / tile::elements);
  plan.remainder_first = plan.full_chunks * chunk + std::uint64_t(plan.tail_tiles) * tile::elements;
  plan.remainder_count = int(n - plan.remainder_first);
  const std::uint64_t items = plan.full_chunks + std::uint64_t(plan.tail_tiles);

  const detail::generic_engine engine = detail::generic_engine_from_environment(what, sizeof(Node) <= 8);
  const int warps_per_block_int = block_threads / 32;
  if (engine.prefold && (warps_per_block_int & (warps_per_block_int - 1)) == 0)
    while ((1 << plan.group_level) < warps_per_block_int) ++plan.group_level;
  plan.batch = engine.batch;
  const bool single = engine.single && items > 0 && block_threads == detail::generic_finish_threads &&
                      items / std::uint64_t(warps_per_block_int) < (std::uint64_t{1} << 23);  // the arrival count
  plan.arrivals = single ? reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(d_workspace) +
                                                                 detail::generic_arrival_offset)
                         : nullptr;

  if (items > 0) {
    const bool vectors = addr_x % 16 == 0 && (!binary || addr_y % 16 == 0);
    constexpr int unit = detail::natural_unit_bytes<X>() < (binary ? detail::natural_unit_bytes<Y>() : 16)
                             ? detail::natural_unit_bytes<X>()
                             : (binary ? detail::natural_unit_bytes<Y>() : detail::natural_unit_bytes<X>());
    using detail::generic_chunk_kernel;
    using K = void (*)(detail::generic_plan<Node, X, Y>, std::uint64_t, Map, Op, Finalize, Out*);
    // The engine's variants are instantiated for 4-byte elements on the vector path (fp32, int32: what issue 14's
    // bars measure); other element types and the element path take ahead = 2, minblocks = 1, no prefold.
    constexpr bool variants = sizeof(X) == 4;
    K kernel = nullptr;
    if (vectors && variants) {
      const int a = binary ? 2 : engine.ahead, m = engine.min_blocks;
      const bool p = plan.group_level > 0;
#define DETRED_GENERIC_KERNEL(A, M, S, P) generic_chunk_kernel<Node, X, Y, 16, A, M, S, P, Out, Map, Op, Finalize>
#define DETRED_GENERIC_BOUNDED(M, P) \
  detail::generic_chunk_kernel_bounded<Node, X, Y, 16, 2, M, false, P, Out, Map, Op, Finalize>
      if (single)
        kernel = p ? DETRED_GENERIC_KERNEL(2, 1, true, true) : DETRED_GENERIC_KERNEL(2, 1, true, false);
      else if (m == 4)
        kernel = p ? DETRED_GENERIC_BOUNDED(4, true) : DETRED_GENERIC_BOUNDED(4, false);
      else if (m == 3)
        kernel = p ? DETRED_GENERIC_BOUNDED(3, true) : DETRED_GENERIC_BOUNDED(3, false);
      else if (a == 3)
        kernel = p ? DETRED_GENERIC_KERNEL(3, 1, false, true) : DETRED_GENERIC_KERNEL(3, 1, false, false);
      else if (a == 4)
        kernel = p ? DETRED_GENERIC_KERNEL(4, 1, false, true) : DETRED_GENERIC_KERNEL(4, 1, false, false);
      else
        kernel = p ? DETRED_GENERIC_KERNEL(2, 1, false, true) : DETRED_GENERIC_KERNEL(2, 1, false, false);
#undef DETRED_GENERIC_BOUNDED
#undef DETRED_GENERIC_KERNEL
    } else {
      plan.group_level = 0;
      if (vectors)
        kernel = single ? generic_chunk_kernel<Node, X, Y, 16, 2, 1, true, false, Out, Map, Op, Finalize>
                        : generic_chunk_kernel<Node, X, Y, 16, 2, 1, false, false, Out, Map, Op, Finalize>;
      else
        kernel = single ? generic_chunk_kernel<Node, X, Y, unit, 2, 1, true, false, Out, Map, Op, Finalize>
                        : generic_chunk_kernel<Node, X, Y, unit, 2, 1, false, false, Out, Map, Op, Finalize>;
    }
    const std::size_t smem = std::size_t(block_threads / 32) * detail::warp_smem_units<X, Node, binary> * 16;
    if (smem > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
            "cudaFuncSetAttribute");
    const std::uint64_t warps_per_block = std::uint64_t(block_threads / 32);
    const std::uint64_t useful_blocks = (items + warps_per_block - 1) / warps_per_block;
    const std::uint64_t grid = requested.grid_blocks > 0 && std::uint64_t(requested.grid_blocks) < useful_blocks
                                   ? requested.grid_blocks
                                   : useful_blocks;
    kernel<<<unsigned(grid), unsigned(block_threads), smem, stream>>>(plan, items, map, op, finalize, d_out);
    check(cudaGetLastError(), "launching generic_chunk_kernel");
  }
  if (!single)
    detail::launch_finishing_block(detail::generic_finish_kernel<Node, X, Y, Out, Map, Op, Finalize>,
                                   detail::generic_finish_threads, stream, "launching generic_finish_kernel", plan, map,
                                   op, finalize, d_out);
}

namespace detail {
struct identity_map {
  template <class T>
  __device__ T operator()(const T& v) const {
    return v;
  }
};
template <class Node>
struct identity_if_empty {
  Node identity;
  __device__ Node operator()(bool empty, const Node& root) const { return empty ? identity : root; }
};
}  // namespace detail

// map(x[0]) (+) ... (+) map(x[n-1]) in the canonical order, or `identity` when n == 0 (never combined with an input),
// written to *d_out. map: (x) or (x, i) -> Node.
template <class Node, class X, class Map, class Op>
void transform_reduce(const X* d_x, std::uint64_t n, Node* d_out, Node identity, Map map, Op op, void* d_workspace,
                      std::size_t workspace_bytes, cudaStream_t stream = nullptr, const launch_config& config = {}) {
  transform_reduce_finalized<Node, X, no_input>(d_x, static_cast<const no_input*>(nullptr), n, d_out, d_workspace,
                                                workspace_bytes, stream, map, op,
                                                detail::identity_if_empty<Node>{identity}, config);
}

// x[0] (+) x[1] (+) ... (+) x[n-1] in the canonical order, op(left, right) never swapped: bit for bit the CPU's
// detred::reduce(x, n, identity, op) for every launch configuration. `identity` is returned when n == 0 and never
// combined with an input.
template <class T, class Op>
void reduce(const T* d_in, std::uint64_t n, T* d_out, T identity, Op op, void* d_workspace, std::size_t workspace_bytes,
            cudaStream_t stream = nullptr, const launch_config& config = {}) {
  transform_reduce_finalized<T, T, no_input>(d_in, static_cast<const no_input*>(nullptr), n, d_out, d_workspace,
                                             workspace_bytes, stream, detail::identity_map{}, op,
                                             detail::identity_if_empty<T>{identity}, config, "cuda::reduce");
}

}  // namespace detred::cuda
