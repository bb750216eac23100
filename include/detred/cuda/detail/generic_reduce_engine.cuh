// The engine behind detred/cuda/transform_reduce.cuh, detred/cuda/reduce.hpp (product) and detred/cuda/blas.hpp
// (dot, nrm2, asum): chunk kernel, finishing kernel, workspace layout and launch. Not API: it may change in any
// release. Every choice below changes speed only, never bits: each piece of work is an aligned complete subtree of the
// canonical order (docs/ORDER.md), joined in index order.
//
// Work decomposition. A pass is 32 lanes x Items consecutive elements (detail/generic_warp_stage.cuh); its loads are
// staged through shared memory so that they are coalesced, then each lane reduces its Items elements in registers
// (thread_subtree), the warp joins its 32 lanes (warp_subtree_reduce), and a counter joins a chunk's passes. A tile
// is the largest power-of-two number of passes within 16 KiB of the first input; a chunk is tiles_per_chunk tiles,
// one warp per chunk. A finishing kernel (one block, programmatic dependent launch) pushes the chunk roots, the tail
// tiles' roots and the remaining elements' complete trees into a digit fold, largest first, and folds it.
//
// The launch shape, measured on the H100 (docs/PERFORMANCE.md, generic reduce) and used on every device:
// - loads in flight while a pass is reduced: with one input, the next three passes (4-byte elements on the 16-byte
//   vector path with a node of at most 8 bytes) or the next two (everything else); with two inputs, the next pass of
//   each;
// - nodes of at most 8 bytes, 4-byte elements on the vector path: each block joins the roots of its warps' consecutive
//   chunks (an aligned group of block_threads / 32 chunks, when that is a power of two above 1) before writing one,
//   so the finishing fold reads 8x fewer roots;
// - nodes of at most 8 bytes: the finishing fold loads a thread's roots 8 at a time before joining them.
#pragma once

#include <cuda_runtime.h>

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "detred/cuda/block/generic_block_reduce.cuh"
#include "detred/cuda/detail/dependent_launch.cuh"
#include "detred/cuda/detail/generic_warp_stage.cuh"
#include "detred/cuda/error.hpp"
#include "detred/cuda/reduce.hpp"
#include "detred/cuda/warp/generic_warp_reduce.cuh"
#include "detred/cuda/workspace.hpp"
#include "detred/errors.hpp"

namespace detred::cuda::detail {

// Marks "no second input" (a unary map).
struct no_input {};

inline constexpr int generic_max_block_threads = 256;  // the chunk kernel's __launch_bounds__ and default block
inline constexpr int generic_finish_threads = 256;
inline constexpr std::size_t generic_header_bytes = 256;  // workspace: a header, then the roots
inline constexpr int generic_counter_levels = 7;          // passes per chunk: at most 16 tiles x 8 passes

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

// Root of `passes` consecutive passes starting at element `first` (one warp; returned in every lane). One input:
// Ahead register sets (2 or 3), used in turn, so that the loads of the next Ahead passes are in flight while a pass is
// reduced; two inputs: one register set each, the next pass in flight.
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
  // The block's pre-fold: the full chunks [g 2^group_level, (g + 1) 2^group_level) of each complete group
  // g < full_chunks >> group_level have one root, at roots[g << group_level]; 0: every chunk has its own.
  int group_level;
  bool batch;  // the finishing fold loads 8 roots at a time
};

// The finishing fold with the whole block (generic_finish_threads threads): the group roots, the other chunk roots,
// the tail tiles' roots and the remainder's elements, pushed into a digit fold (detred/order.hpp) largest first;
// thread 0 writes.
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

// Chunk roots (items [0, full_chunks)) and tail-tile roots (items [full_chunks, items)), one warp per item. Prefold
// (plan.group_level > 0, 2^group_level = warps per block): the block takes items in aligned groups and writes one
// root per complete group of full chunks. A compile-time choice: the group loop's registers stay out of the other
// kernel.
template <class Node, class X, class Y, int UnitBytes, int Ahead, bool Prefold, class Map, class Op>
__global__ void __launch_bounds__(generic_max_block_threads)
    generic_chunk_kernel(generic_plan<Node, X, Y> plan, std::uint64_t items, Map map, Op op) {
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
  if constexpr (!Prefold) {
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
}

template <class Node, class X, class Y, class Out, class Map, class Op, class Finalize>
__global__ void __launch_bounds__(generic_finish_threads)
    generic_finish_kernel(generic_plan<Node, X, Y> plan, Map map, Op op, Finalize finalize, Out* out) {
  cudaGridDependencySynchronize();  // the chunk kernel's roots are complete and visible from here on
  generic_finish_in_block(plan, map, op, finalize, out);
}

// Throws invalid_argument naming the field (`what`: the public call) unless every field is 0 or in its range.
inline void validate_reduce_options(const reduce_options& o, const char* what) {
  if (o.block_threads != 0 &&
      (o.block_threads < 32 || o.block_threads > generic_max_block_threads || o.block_threads % 32))
    detred::detail::throw_invalid(what, "reduce_options.block_threads must be 0 or a multiple of 32 in [32, 256]");
  if (o.grid_blocks < 0) detred::detail::throw_invalid(what, "reduce_options.grid_blocks must be >= 0");
  const int t = o.tiles_per_chunk;
  if (t != 0 && t != 1 && t != 2 && t != 4 && t != 8 && t != 16)
    detred::detail::throw_invalid(what, "reduce_options.tiles_per_chunk must be 0, 1, 2, 4, 8 or 16");
}

// Throws unless d_workspace is 16-byte aligned (the roots are read as 16-byte aligned nodes).
inline void validate_workspace_alignment(const void* d_workspace, const char* what) {
  if (reinterpret_cast<std::uintptr_t>(d_workspace) % 16 != 0)
    detred::detail::throw_invalid(what, "d_workspace must be 16-byte aligned");
}

// Bytes of workspace for n elements of X reduced to nodes of type Node, for every launch shape: the header, then one
// root (padded to 16 bytes) per chunk or tail tile (at most n / tile + 16 of them).
template <class X, class Node>
constexpr std::size_t generic_workspace_bytes(std::uint64_t n) {
  return generic_header_bytes + (n / generic_tile<X>::elements + 16) * root_stride<Node>;
}

template <class T>
constexpr int natural_unit_bytes() {
  return alignof(T) >= 8 ? 8 : alignof(T) >= 4 ? 4 : alignof(T) >= 2 ? 2 : 1;
}

// The engine's entry, following the workspace idiom (detred/cuda/workspace.hpp): a size query when d_workspace is
// null, else finalize(n == 0, map(x[0]) (+) ... (+) map(x[n-1])) written to *d_out (root unspecified when n == 0).
// Y = no_input for a unary map (d_y null). `what` names the public call in errors.
template <class Node, class X, class Y, class Out, class Map, class Op, class Finalize>
void generic_reduce(void* d_workspace, std::size_t& workspace_bytes, const X* d_x, const Y* d_y, Out* d_out,
                    std::uint64_t n, Map map, Op op, Finalize finalize, cudaStream_t stream,
                    const reduce_options& options, const char* what) {
  static_assert(std::is_trivially_copyable_v<X> && std::is_trivially_copyable_v<Node>);
  constexpr bool binary = !std::is_same_v<Y, no_input>;
  static_assert(!binary || sizeof(X) == sizeof(Y), "transform_reduce: both inputs need elements of the same size");
  using tile = generic_tile<X>;
  validate_reduce_options(options, what);
  if (workspace_query(d_workspace, workspace_bytes, generic_workspace_bytes<X, Node>(n), what)) return;
  validate_workspace_alignment(d_workspace, what);
  if (n > 0 && (d_x == nullptr || (binary && d_y == nullptr)))
    detred::detail::throw_invalid(what, "an input pointer is null but n > 0");
  const auto addr_x = reinterpret_cast<std::uintptr_t>(d_x), addr_y = reinterpret_cast<std::uintptr_t>(d_y);
  if (addr_x % alignof(X) != 0 || (binary && addr_y % alignof(Y) != 0))
    detred::detail::throw_invalid(what, "an input pointer is not aligned to its element type");
  if (d_out == nullptr) detred::detail::throw_invalid(what, "d_out is null");

  int device = 0, sms = 1;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute");
  const int block_threads = options.block_threads ? options.block_threads : generic_max_block_threads;
  int tiles_per_chunk = options.tiles_per_chunk;
  if (tiles_per_chunk == 0) {  // 16 tiles per chunk for large inputs; fewer until every resident warp gets two chunks
    const std::uint64_t resident_warps = std::uint64_t(sms) * 16;  // a typical occupancy of the chunk kernel
    tiles_per_chunk = 16;
    while (tiles_per_chunk > 1 && n / (tile::elements * tiles_per_chunk) < 2 * resident_warps) tiles_per_chunk /= 2;
  }
  const std::uint64_t chunk = tile::elements * std::uint64_t(tiles_per_chunk);
  generic_plan<Node, X, Y> plan{};
  plan.x = d_x;
  plan.y = d_y;
  plan.roots = reinterpret_cast<Node*>(static_cast<unsigned char*>(d_workspace) + generic_header_bytes);
  plan.full_chunks = n / chunk;
  plan.tiles_per_chunk = tiles_per_chunk;
  plan.chunk_level = 0;
  while ((std::uint64_t{1} << plan.chunk_level) < chunk) ++plan.chunk_level;
  const std::uint64_t rest = n - plan.full_chunks * chunk;
  plan.tail_tiles = int(rest / tile::elements);
  plan.remainder_first = plan.full_chunks * chunk + std::uint64_t(plan.tail_tiles) * tile::elements;
  plan.remainder_count = int(n - plan.remainder_first);
  const std::uint64_t items = plan.full_chunks + std::uint64_t(plan.tail_tiles);

  constexpr bool small_node = sizeof(Node) <= 8;
  plan.batch = small_node;

  if (items > 0) {
    const bool vectors = addr_x % 16 == 0 && (!binary || addr_y % 16 == 0);
    constexpr int unit = natural_unit_bytes<X>() < (binary ? natural_unit_bytes<Y>() : 16)
                             ? natural_unit_bytes<X>()
                             : (binary ? natural_unit_bytes<Y>() : natural_unit_bytes<X>());
    using K = void (*)(generic_plan<Node, X, Y>, std::uint64_t, Map, Op);
    K kernel = nullptr;
    if (!vectors) {
      kernel = generic_chunk_kernel<Node, X, Y, unit, 2, false, Map, Op>;
    } else if constexpr (sizeof(X) == 4 && small_node) {
      constexpr int ahead = binary ? 2 : 3;  // two inputs: one pass each in flight whatever Ahead says
      const int warps_per_block = block_threads / 32;
      if ((warps_per_block & (warps_per_block - 1)) == 0)
        while ((1 << plan.group_level) < warps_per_block) ++plan.group_level;
      kernel = plan.group_level > 0 ? generic_chunk_kernel<Node, X, Y, 16, ahead, true, Map, Op>
                                    : generic_chunk_kernel<Node, X, Y, 16, ahead, false, Map, Op>;
    } else {
      kernel = generic_chunk_kernel<Node, X, Y, 16, 2, false, Map, Op>;
    }
    const std::size_t smem = std::size_t(block_threads / 32) * warp_smem_units<X, Node, binary> * 16;
    if (smem > 48 * 1024)
      check(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)),
            "cudaFuncSetAttribute");
    const std::uint64_t warps_per_block = std::uint64_t(block_threads / 32);
    const std::uint64_t useful_blocks = (items + warps_per_block - 1) / warps_per_block;
    const std::uint64_t grid = options.grid_blocks > 0 && std::uint64_t(options.grid_blocks) < useful_blocks
                                   ? options.grid_blocks
                                   : useful_blocks;
    kernel<<<unsigned(grid), unsigned(block_threads), smem, stream>>>(plan, items, map, op);
    check(cudaGetLastError(), "launching generic_chunk_kernel");
  }
  launch_finishing_block(generic_finish_kernel<Node, X, Y, Out, Map, Op, Finalize>, generic_finish_threads, stream,
                         "launching generic_finish_kernel", plan, map, op, finalize, d_out);
}

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

}  // namespace detred::cuda::detail
