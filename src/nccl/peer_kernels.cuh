// The peer-memory kernels (src/nccl/peer.hpp; data flow and ordering argument in docs/DISTRIBUTED.md, "Peer memory").
// One kernel a call. The vector is cut into rounds of q elements (of the vector, or of each slice); block b of every
// rank handles the same part [b * per_block, (b + 1) * per_block) of each round, so that the LSA barrier with index b
// orders exactly the stores and loads that touch that part. Pushed data lands in one of two staging regions of the
// receiver's window, chosen by the parity of a round counter that every rank advances alike: a region is written again
// only two rounds later, after a barrier that the receiver reaches once it has read it.
//
// Bits: each element's values are combined alone, in rank order (value g = r * rows + k): the canonical order over
// the P * rows values (docs/ORDER.md; straight-line for P = 2 and 4 with one row, the binary counter otherwise), float
// accumulation and one rounding to the output type, or correctly rounded (exact). The grid, the rounds and the vector
// width never change a bit. Plain IEEE additions (the library builds with --fmad=false, no fast-math).
//
// The device check (docs/DISTRIBUTED.md, "Errors"): block 0 stores this rank's call descriptor (four words: sequence
// number, n, operation and types with the window's history, options) into a slot of every peer's window; every block
// pushes its first round, then waits until each peer's descriptor of this call has arrived in its own window and
// compares them. Only when all are equal does it meet the peers at its barrier; otherwise it writes canonical NaN to
// the output and returns, and block 0 raises the failure report. Equal descriptors mean equal plans (rounds, slots,
// grid) on every rank, so no barrier is ever left waiting; every rank sees a mismatch when any two ranks differ.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <cuda/atomic>

#include <cstdint>

#include "detred/accumulators/exact.hpp"
#include "detred/order.hpp"
#include "detred/types/bfloat16.hpp"
#include "detred/types/float_traits.hpp"
#include "detred/types/half.hpp"
#include "src/distributed/rank_order.hpp"
#include "src/nccl/peer.hpp"

namespace detred::nccl::detail {

inline constexpr int peer_threads = 512;
inline constexpr int peer_max_ranks = 8;
inline constexpr int peer_max_blocks = 128;  // LSA barriers of the device communicator
// The descriptor slots at the window's end: two calls (by the parity of the sequence number) of peer_max_ranks slots
// of four words. A slot of call s is written again at call s + 2 only, after its reader has finished call s (each
// rank's kernels run in call order, and call s + 1 waits for every peer's descriptor of s + 1).
inline constexpr std::size_t peer_control_bytes = 2 * peer_max_ranks * 4 * sizeof(std::uint64_t);

struct peer_check {
  std::uint64_t words[4];  // this rank's descriptor; words[0], the sequence number, 0: no check
  std::size_t control;     // the descriptor slots' offset in the window
  check_report* report;    // device address of the failure report (mapped pinned memory)
};

__device__ __forceinline__ std::uint64_t* descriptor_slot(char* base, const peer_check& c, int from) {
  return reinterpret_cast<std::uint64_t*>(base + c.control +
                                          ((c.words[0] & 1u) * peer_max_ranks + std::size_t(from)) * 32);
}

// This rank's descriptor into its slot of every peer's window (one thread): the words to every peer, one system-scope
// release fence, then the sequence numbers (one fence a call rather than one a peer: each costs a round trip over
// NVLink once stores are in flight).
__device__ __forceinline__ void publish_descriptor(const peer_check& c, char* const* base, int me, int P) {
  for (int j = 0; j < P; ++j) {
    if (j == me) continue;
    volatile std::uint64_t* v = descriptor_slot(base[j], c, me);
    v[1] = c.words[1];
    v[2] = c.words[2];
    v[3] = c.words[3];
  }
  ::cuda::atomic_thread_fence(::cuda::memory_order_release, ::cuda::thread_scope_system);
  for (int j = 0; j < P; ++j) {
    if (j == me) continue;
    ::cuda::atomic_ref<std::uint64_t, ::cuda::thread_scope_system>(descriptor_slot(base[j], c, me)[0])
        .store(c.words[0], ::cuda::memory_order_relaxed);
  }
}

// The bit of a descriptor's third word set by a handshake that waits on the host (a stopping call).
inline constexpr std::uint64_t descriptor_stops = std::uint64_t{1} << 63;

// Waits for every peer's descriptor of this call (in this rank's window) and returns the lowest peer whose descriptor
// differs from this rank's, its words in `theirs`, or -1; `every_stop`: whether every peer's call stops (one thread).
// A peer that publishes without waiting (a withdrawn call, or every call of a failed context) can run ahead and write
// the slot of call s + 2 over that of call s before this rank has read it. The wait therefore ends at any sequence
// number not older than this call's; a newer one (or one that changes while the words are read) is a mismatch, reported
// as a withdrawal: a peer gets ahead only by withdrawing, so the contexts fail either way, and nothing waits for a
// descriptor that can no longer arrive.
__device__ __forceinline__ int first_mismatch(const peer_check& c, char* mine, int me, int P, std::uint64_t* theirs,
                                              bool* every_stop = nullptr) {
  using word = ::cuda::atomic_ref<std::uint64_t, ::cuda::thread_scope_system>;
  // Every peer's sequence number first (acquire: the words below are read after it), then the words (acquire loads,
  // so that the second reading of the sequence number comes after them), then the sequence number again. No fence.
  std::uint64_t seen[peer_max_ranks];
  for (int r = 0; r < P; ++r) {
    if (r == me) continue;
    word sequence(descriptor_slot(mine, c, r)[0]);
    std::uint64_t s = sequence.load(::cuda::memory_order_acquire);
    while (std::int64_t(s - c.words[0]) < 0) {
      __nanosleep(20);
      s = sequence.load(::cuda::memory_order_acquire);
    }
    seen[r] = s;
  }
  int bad = -1;
  bool stops = true;
  for (int r = 0; r < P; ++r) {
    if (r == me) continue;
    std::uint64_t* slot = descriptor_slot(mine, c, r);
    std::uint64_t w1 = word(slot[1]).load(::cuda::memory_order_acquire);
    std::uint64_t w2 = word(slot[2]).load(::cuda::memory_order_acquire);
    std::uint64_t w3 = word(slot[3]).load(::cuda::memory_order_acquire);
    if (seen[r] != c.words[0] || word(slot[0]).load(::cuda::memory_order_relaxed) != seen[r]) {
      w1 = 0;
      w2 = withdrawn_operation;
      w3 = 0;
    }
    stops = stops && (w2 & descriptor_stops) != 0;
    if (bad < 0 && (w1 != c.words[1] || w2 != c.words[2] || w3 != c.words[3])) {
      bad = r;
      theirs[0] = c.words[0];
      theirs[1] = w1;
      theirs[2] = w2;
      theirs[3] = w3;
    }
  }
  if (every_stop) *every_stop = stops && (c.words[2] & descriptor_stops) != 0;
  return bad;
}

__device__ __forceinline__ void raise_report(check_report* report, const peer_check& c, int peer,
                                             const std::uint64_t* theirs, bool every_stop = false) {
  volatile check_report* r = report;
  if (r->raised != 0) return;  // the first mismatch is the one reported
  r->peer = peer;
  r->every_rank_stopped = every_stop ? 1u : 0u;
  for (int k = 0; k < 4; ++k) {
    r->mine[k] = c.words[k];
    r->theirs[k] = theirs[k];
  }
  __threadfence_system();
  r->raised = 1;
}

// The device check without a data kernel (one thread): publish, and unless only publishing, compare.
__global__ void handshake_kernel(const __grid_constant__ peer_check c, ncclWindow_t window, int me, int P, bool wait) {
  char* base[peer_max_ranks];
  for (int r = 0; r < P; ++r) base[r] = static_cast<char*>(ncclGetPeerPointer(window, 0, r));
  publish_descriptor(c, base, me, P);
  if (!wait) return;
  std::uint64_t theirs[4];
  bool every_stop = false;
  const int bad = first_mismatch(c, base[me], me, P, theirs, &every_stop);
  if (bad >= 0) raise_report(c.report, c, bad, theirs, every_stop);
}

template <class T>
struct peer_args {
  const T* in;
  T* out;
  std::uint64_t n;           // vector (one_shot, two_shot) or shard (reduce_scatter, all_gather) length
  std::uint64_t slice;       // two_shot: elements between slices
  std::uint64_t row_stride;  // one_shot: elements between a rank's rows
  int rows;
  int rank, ranks;
  std::uint64_t q;          // elements a round, per slot
  std::uint64_t per_block;  // elements of a round a block handles
  std::uint32_t rounds, parity0;
  ncclWindow_t window;        // every rank's buffer: two staging regions, then one for reduced slices
  std::size_t region_bytes;   // one staging region (at 0 and at region_bytes)
  std::size_t slot_bytes;     // one slot of a region: q elements
  std::size_t result_offset;  // two_shot: the reduced slice, q elements
  ncclDevComm comm;
  peer_check check;
};

__device__ __forceinline__ float widen(float x) { return x; }
__device__ __forceinline__ float widen(bfloat16 x) { return x.to_float(); }
__device__ __forceinline__ float widen(half x) { return x.to_float(); }
template <class T>
__device__ __forceinline__ T narrow(float x) {
  if constexpr (std::is_same_v<T, float>)
    return canonicalize_nan(x);
  else
    return canonicalize_nan(T::from_float(x));
}

struct add_floats {
  __host__ __device__ void operator()(float& left, const float& right) const { left = left + right; }
};

// dst[0 .. count) = src[0 .. count) by the block's threads; W elements (16 bytes) at a time where W > 1, with four
// loads in flight a thread.
template <class T, int W>
__device__ __forceinline__ void copy_range(const T* src, T* dst, std::uint64_t count) {
  if constexpr (W > 1) {
    constexpr int U = 4;
    const std::uint64_t packs = count / W, step = blockDim.x;
    const uint4* s = reinterpret_cast<const uint4*>(src);
    uint4* d = reinterpret_cast<uint4*>(dst);
    for (std::uint64_t p = threadIdx.x; p < packs; p += U * step) {
      uint4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (p + u * step < packs) v[u] = s[p + u * step];
#pragma unroll
      for (int u = 0; u < U; ++u)
        if (p + u * step < packs) d[p + u * step] = v[u];
    }
    for (std::uint64_t e = packs * W + threadIdx.x; e < count; e += step) dst[e] = src[e];
  } else {
    for (std::uint64_t e = threadIdx.x; e < count; e += blockDim.x) dst[e] = src[e];
  }
}

// Where value g of an element lives: this rank's own rows in the caller's vector, the others' in staging slots
// (rank r's row k in slot (r < me ? r : r - 1) * rows + k). Both pointers are at the block's first element.
template <class T>
struct value_sources {
  const T* own;
  std::uint64_t own_stride;
  const char* staging;
  std::size_t slot_bytes;
  int me, rows;
  __device__ __forceinline__ const T* at(int g) const {
    const int r = g / rows, k = g - r * rows;
    if (r == me) return own + std::uint64_t(k) * own_stride;
    const int s = (r < me ? r : r - 1) * rows + k;
    return reinterpret_cast<const T*>(staging + std::size_t(s) * slot_bytes);
  }
};

// dst0[e] (and dst1[e] where dst1 is not null) = the reduce of the K values of element e, e < count.
template <class T, int W, int FP, bool Exact>
__device__ __forceinline__ void reduce_range(const value_sources<T>& src, int K, T* dst0, T* dst1,
                                             std::uint64_t count) {
  if constexpr (Exact) {
    for (std::uint64_t e = threadIdx.x; e < count; e += blockDim.x) {
      exact_accumulator<float> acc;
      for (int g = 0; g < K; ++g) acc.add(src.at(g)[e]);
      const T v = acc.template rounded<T>();
      dst0[e] = v;
      if (dst1) dst1[e] = v;
    }
  } else if constexpr (FP > 0) {
    static_assert(W > 1);
    const T* p[FP];
#pragma unroll
    for (int r = 0; r < FP; ++r) p[r] = src.at(r);
    const std::uint64_t packs = count / W;
    for (std::uint64_t i = threadIdx.x; i < packs; i += blockDim.x) {
      uint4 v[FP];
#pragma unroll
      for (int r = 0; r < FP; ++r) v[r] = reinterpret_cast<const uint4*>(p[r])[i];
      alignas(16) T result[W];
#pragma unroll
      for (int lane = 0; lane < W; ++lane) {
        const auto load = [&](int r) { return widen(reinterpret_cast<const T*>(&v[r])[lane]); };
        result[lane] = narrow<T>(distributed::rank_order_sum<FP>(load));
      }
      reinterpret_cast<uint4*>(dst0)[i] = *reinterpret_cast<const uint4*>(result);
      if (dst1) reinterpret_cast<uint4*>(dst1)[i] = *reinterpret_cast<const uint4*>(result);
    }
    for (std::uint64_t e = packs * W + threadIdx.x; e < count; e += blockDim.x) {
      const auto load = [&](int r) { return widen(p[r][e]); };
      const T v = narrow<T>(distributed::rank_order_sum<FP>(load));
      dst0[e] = v;
      if (dst1) dst1[e] = v;
    }
  } else {
    for (std::uint64_t e = threadIdx.x; e < count; e += blockDim.x) {
      binary_counter<float, add_floats> counter;
      for (int g = 0; g < K; ++g) counter.push(widen(src.at(g)[e]));
      const T v = narrow<T>(counter.fold());
      dst0[e] = v;
      if (dst1) dst1[e] = v;
    }
  }
}

template <class T, int W, int FP, bool Exact, peer_op Op>
__global__ void __launch_bounds__(peer_threads) peer_kernel(const __grid_constant__ peer_args<T> a) {
  // Barrier b of NCCL's device communicator: arrive stores the new epoch into each peer's inbox with release semantics
  // (after the block's threads meet), wait loads this rank's inboxes with acquire semantics (system scope).
  ncclLsaBarrierSession<ncclCoopCta> bar{ncclCoopCta(), a.comm, ncclTeamLsa(a.comm), a.comm.lsaBarrier,
                                         std::uint32_t(blockIdx.x)};
  const int me = a.rank, P = a.ranks;
  char* base[peer_max_ranks];
  for (int r = 0; r < P; ++r) base[r] = static_cast<char*>(ncclGetPeerPointer(a.window, 0, r));
  const auto slot_of = [me](int r) { return r < me ? r : r - 1; };    // the slot of rank r (!= me) here
  const auto slot_at = [me](int j) { return me < j ? me : me - 1; };  // this rank's slot at rank j (!= me)
  const bool checking = a.check.words[0] != 0;
  if (checking && blockIdx.x == 0 && threadIdx.x == 0) publish_descriptor(a.check, base, me, P);
  // Before the block's first barrier: whether every peer's descriptor equals this rank's. On a mismatch the block
  // fills its part of the output with canonical NaN and the kernel never meets a barrier.
  __shared__ int mismatch;
  const auto peers_agree = [&]() -> bool {
    if (threadIdx.x == 0) {
      std::uint64_t theirs[4];
      mismatch = first_mismatch(a.check, base[me], me, P, theirs);
      if (mismatch >= 0 && blockIdx.x == 0) raise_report(a.check.report, a.check, mismatch, theirs);
    }
    __syncthreads();
    if (mismatch < 0) return true;
    const std::uint64_t len = Op == peer_op::all_gather ? a.n * std::uint64_t(P) : a.n;
    const T nan = canonical_nan<T>();
    for (std::uint64_t e = std::uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; e < len;
         e += std::uint64_t(gridDim.x) * blockDim.x)
      a.out[e] = nan;
    return false;
  };
  // Round c's part of this block: its elements [b0, b1) of the round (b0 relative to the vector or slice), its staging
  // region (by the parity of the round counter) and its byte offset within a slot.
  struct round_part {
    std::uint64_t b0, b1;
    std::size_t stage, offset;
    std::uint32_t parity;
  };
  const auto round_of = [&](std::uint32_t c) {
    round_part r;
    r.parity = (a.parity0 + c) & 1u;
    r.stage = std::size_t(r.parity) * a.region_bytes;
    const std::uint64_t r0 = std::uint64_t(c) * a.q;
    r.b0 = r0 + std::uint64_t(blockIdx.x) * a.per_block;
    r.b1 = r.b0 + a.per_block < r0 + a.q ? r.b0 + a.per_block : r0 + a.q;
    r.offset = std::size_t(r.b0 - r0) * sizeof(T);
    return r;
  };
  // Elements of [b0, b1) below `len`.
  const auto part = [](const round_part& r, std::uint64_t len) -> std::uint64_t {
    const std::uint64_t end = r.b1 < len ? r.b1 : len;
    return r.b0 < end ? end - r.b0 : 0;
  };
  // Slot s of rank j's staging region, at the block's part.
  const auto slot = [&](const round_part& r, int j, int s) {
    return reinterpret_cast<T*>(base[j] + r.stage + std::size_t(s) * a.slot_bytes + r.offset);
  };
  // Two-shot: the length of slice j, and rank j's reduced-slice slot of a round (two, by parity).
  const auto slice_len = [&](int j) -> std::uint64_t {
    const std::uint64_t s0 = std::uint64_t(j) * a.slice;
    return a.n > s0 ? (a.n - s0 < a.slice ? a.n - s0 : a.slice) : 0;
  };
  const auto result_at = [&](const round_part& r, int j) {
    return reinterpret_cast<T*>(base[j] + a.result_offset + std::size_t(r.parity) * a.slot_bytes + r.offset);
  };
  // Round c's stores into the peers' staging regions.
  const auto push = [&](std::uint32_t c) {
    const round_part r = round_of(c);
    if constexpr (Op == peer_op::one_shot) {
      const std::uint64_t count = part(r, a.n);
      for (int j = 0; j < P; ++j) {
        if (j == me) continue;
        for (int k = 0; k < a.rows; ++k)
          copy_range<T, W>(a.in + std::uint64_t(k) * a.row_stride + r.b0, slot(r, j, slot_at(j) * a.rows + k), count);
      }
    } else if constexpr (Op == peer_op::two_shot) {
      for (int j = 0; j < P; ++j)
        if (j != me)
          copy_range<T, W>(a.in + std::uint64_t(j) * a.slice + r.b0, slot(r, j, slot_at(j)), part(r, slice_len(j)));
    } else if constexpr (Op == peer_op::reduce_scatter) {
      const std::uint64_t count = part(r, a.n);
      for (int j = 0; j < P; ++j)
        if (j != me) copy_range<T, W>(a.in + std::uint64_t(j) * a.n + r.b0, slot(r, j, slot_at(j)), count);
    } else {
      const std::uint64_t count = part(r, a.n);
      for (int j = 0; j < P; ++j)
        if (j != me) copy_range<T, W>(a.in + r.b0, slot(r, j, slot_at(j)), count);
    }
  };
  // Round c's work on what the peers pushed into this rank's staging region.
  const auto finish = [&](std::uint32_t c) {
    const round_part r = round_of(c);
    if constexpr (Op == peer_op::one_shot) {
      const value_sources<T> src{a.in + r.b0,  a.row_stride, reinterpret_cast<const char*>(slot(r, me, 0)),
                                 a.slot_bytes, me,           a.rows};
      reduce_range<T, W, FP, Exact>(src, P * a.rows, a.out + r.b0, nullptr, part(r, a.n));
    } else if constexpr (Op == peer_op::two_shot) {
      const std::uint64_t mine = std::uint64_t(me) * a.slice + r.b0;
      const value_sources<T> src{a.in + mine, 0, reinterpret_cast<const char*>(slot(r, me, 0)), a.slot_bytes, me, 1};
      reduce_range<T, W, FP, Exact>(src, P, a.out + mine, result_at(r, me), part(r, slice_len(me)));
    } else if constexpr (Op == peer_op::reduce_scatter) {
      const value_sources<T> src{
          a.in + std::uint64_t(me) * a.n + r.b0, 0, reinterpret_cast<const char*>(slot(r, me, 0)), a.slot_bytes, me, 1};
      reduce_range<T, W, FP, Exact>(src, P, a.out + r.b0, nullptr, part(r, a.n));
    } else {
      const std::uint64_t count = part(r, a.n);
      for (int q = 0; q < P; ++q)
        copy_range<T, W>(q == me ? a.in + r.b0 : slot(r, me, slot_of(q)), a.out + std::uint64_t(q) * a.n + r.b0, count);
    }
  };
  // Two-shot: round c's reduced slices, loaded from their owners into this rank's output.
  const auto gather = [&](std::uint32_t c) {
    const round_part r = round_of(c);
    for (int j = 0; j < P; ++j)
      if (j != me) copy_range<T, W>(result_at(r, j), a.out + std::uint64_t(j) * a.slice + r.b0, part(r, slice_len(j)));
  };
  // One barrier a round. Round c + 1's stores into a staging region go out after barrier c: that region was last read
  // in round c - 1, before its reader arrived at barrier c. The reduce-scatter sends them first, so that they travel
  // while the block reduces round c; the all-reduces send them after round c's work: two-shot's loads of the reduced
  // slices, queued behind a block's own stores over NVLink, ran slower (docs/PERFORMANCE.md, 4 x H100 sweep). Two-shot
  // loads round c's reduced slices after barrier c + 1 (their owners wrote them before arriving there; the slot is
  // written again in round c + 2, after barrier c + 2, which each reader reaches once it has loaded them), and one
  // more barrier ends the call.
  constexpr bool push_first = Op == peer_op::reduce_scatter;
  push(0);
  if (checking && !peers_agree()) return;
  for (std::uint32_t c = 0; c < a.rounds; ++c) {
    bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);
    if (push_first && c + 1 < a.rounds) push(c + 1);
    if constexpr (Op == peer_op::two_shot)
      if (c > 0) gather(c - 1);
    finish(c);
    if (!push_first && c + 1 < a.rounds) push(c + 1);
  }
  if constexpr (Op == peer_op::two_shot) {
    bar.sync(ncclCoopCta(), ::cuda::memory_order_acq_rel);
    gather(a.rounds - 1);
  }
}

}  // namespace detred::nccl::detail
