// detred::nccl's peer-memory transport (src/nccl/peer.hpp): the symmetric window (ncclMemAlloc, ncclCommWindowRegister
// with NCCL_WIN_COLL_SYMMETRIC), NCCL's device communicator with one LSA barrier a thread block (ncclDevCommCreate, no
// multicast), the plan of a call (rounds, slots, blocks) and the kernel choice. The kernels are in
// src/nccl/peer_kernels.cuh.
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <algorithm>
#include <cstdint>

#include "detred/cuda/error.hpp"
#include "detred/nccl/error.hpp"
#include "src/nccl/peer.hpp"
#include "src/nccl/peer_kernels.cuh"

namespace detred::nccl::detail {

struct peer_memory::impl {
  int state = 0;  // 0: not decided yet; 1: available; -1: not available
  bool devcomm_made = false;
  ncclDevComm devcomm{};
  ncclComm_t comm = nullptr;
  void* buffer = nullptr;
  ncclWindow_t window = nullptr;
  std::size_t region_bytes = 0;  // the window holds three regions: two for staging, one for reduced slices
  std::uint64_t rounds_done = 0;
  cudaEvent_t last = nullptr;
  bool last_recorded = false;

  ~impl() {
    if (last_recorded) cudaEventSynchronize(last);
    if (window) ncclCommWindowDeregister(comm, window);
    if (buffer) ncclMemFree(buffer);
    if (devcomm_made) ncclDevCommDestroy(comm, &devcomm);
    if (last) cudaEventDestroy(last);
  }

  // A window of three regions of at least `region` bytes. Collective (every rank grows at the same call); the old
  // window is deregistered once this rank's kernels have ended, and NCCL's collective deregistration waits for every
  // rank's.
  void grow(std::size_t region) {
    if (region <= region_bytes) return;
    constexpr std::size_t granule = std::size_t{2} << 20;
    region = (region + granule - 1) / granule * granule;
    if (last_recorded) cuda::check(cudaEventSynchronize(last), "detred::nccl: cudaEventSynchronize (window growth)");
    if (window) check(ncclCommWindowDeregister(comm, window), "ncclCommWindowDeregister", comm);
    window = nullptr;
    if (buffer) check(ncclMemFree(buffer), "ncclMemFree", comm);
    buffer = nullptr;
    region_bytes = 0;
    check(ncclMemAlloc(&buffer, 3 * region), "ncclMemAlloc", comm);
    check(ncclCommWindowRegister(comm, buffer, 3 * region, &window, NCCL_WIN_COLL_SYMMETRIC), "ncclCommWindowRegister",
          comm);
    region_bytes = region;
  }
};

peer_memory::peer_memory() : impl_(std::make_unique<impl>()) {}
peer_memory::~peer_memory() = default;

bool peer_memory::available(ncclComm_t comm, int ranks, int, cudaStream_t) {
  impl& m = *impl_;
  if (m.state != 0) return m.state > 0;
  m.comm = comm;
  m.state = -1;
  if (ranks > peer_max_ranks) return false;
  ncclDevCommRequirements requirements{};
  requirements.lsaBarrierCount = peer_max_blocks;
  if (ncclDevCommCreate(comm, &requirements, &m.devcomm) != ncclSuccess) return false;
  m.devcomm_made = true;
  if (m.devcomm.lsaSize != ranks || m.devcomm.nRanks != ranks) return false;
  cuda::check(cudaEventCreateWithFlags(&m.last, cudaEventDisableTiming), "detred::nccl: cudaEventCreate");
  m.state = 1;
  return true;
}

namespace {

template <class T, int W, peer_op Op>
void launch_op(const peer_args<T>& a, bool exact, unsigned grid, cudaStream_t stream) {
  if constexpr (Op == peer_op::all_gather) {
    peer_kernel<T, W, 0, false, Op><<<grid, peer_threads, 0, stream>>>(a);
  } else if (exact) {
    peer_kernel<T, 1, 0, true, Op><<<grid, peer_threads, 0, stream>>>(a);
  } else if constexpr (W > 1) {
    const bool one_row = Op != peer_op::one_shot || a.rows == 1;
    if (one_row && a.ranks == 2)
      peer_kernel<T, W, 2, false, Op><<<grid, peer_threads, 0, stream>>>(a);
    else if (one_row && a.ranks == 4)
      peer_kernel<T, W, 4, false, Op><<<grid, peer_threads, 0, stream>>>(a);
    else
      peer_kernel<T, W, 0, false, Op><<<grid, peer_threads, 0, stream>>>(a);
  } else {
    peer_kernel<T, 1, 0, false, Op><<<grid, peer_threads, 0, stream>>>(a);
  }
}

template <class T, int W>
void launch_width(const peer_args<T>& a, peer_op op, bool exact, unsigned grid, cudaStream_t stream) {
  switch (op) {
    case peer_op::one_shot:
      return launch_op<T, W, peer_op::one_shot>(a, exact, grid, stream);
    case peer_op::two_shot:
      return launch_op<T, W, peer_op::two_shot>(a, exact, grid, stream);
    case peer_op::reduce_scatter:
      return launch_op<T, W, peer_op::reduce_scatter>(a, exact, grid, stream);
    case peer_op::all_gather:
      return launch_op<T, W, peer_op::all_gather>(a, exact, grid, stream);
  }
}

bool aligned16(const void* p) { return (reinterpret_cast<std::uintptr_t>(p) & 15u) == 0; }
std::uint64_t round_up(std::uint64_t x, std::uint64_t m) { return (x + m - 1) / m * m; }

}  // namespace

// The plan of a call, the same on every rank (it depends only on the call's arguments, which match across ranks).
template <class T>
void run_typed(peer_memory::impl& m, const peer_call& call, cudaStream_t stream) {
  constexpr std::uint64_t V = 16 / sizeof(T);
  const std::uint64_t P = std::uint64_t(m.devcomm.nRanks), n = call.n, elem = sizeof(T);
  const std::uint64_t chunk = std::max<std::uint64_t>(call.chunk_bytes / elem, V);
  const int rows = call.op == peer_op::one_shot ? call.rows : 1;
  // The length of a slice (what a slot holds over all rounds) and the elements of a slot a round.
  std::uint64_t len = n, slice = 0, q = 0;
  switch (call.op) {
    case peer_op::one_shot:
      q = chunk;
      break;
    case peer_op::two_shot:
      slice = round_up((n + P - 1) / P, V);
      len = slice;
      q = chunk / P;
      break;
    case peer_op::reduce_scatter:
    case peer_op::all_gather:
      q = chunk / P;
      break;
  }
  q = std::min(round_up(std::max<std::uint64_t>(q, V), V), round_up(std::max<std::uint64_t>(len, 1), V));
  const std::uint64_t rounds = (len + q - 1) / q;
  if (rounds == 0) return;
  const std::uint64_t slot_bytes = q * elem;
  const std::uint64_t slots = (P - 1) * std::uint64_t(rows);
  m.grow(std::max<std::uint64_t>(slots * slot_bytes, slot_bytes));
  // 16-byte vectors where every pointer and every slice start allows them.
  const bool vectors = aligned16(call.in) && aligned16(call.out) && (rows == 1 || (call.row_stride * elem) % 16 == 0) &&
                       ((call.op != peer_op::reduce_scatter && call.op != peer_op::all_gather) || (n * elem) % 16 == 0);
  // Blocks: about one per 64 KiB of a round's slot, at most 128 for the two-shot all-reduce (two exchanges a round
  // keep more blocks busy) and 64 for the others, unless asked.
  unsigned grid = call.blocks;
  const std::uint64_t most = call.op == peer_op::two_shot ? peer_max_blocks : 64;
  if (grid == 0) grid = unsigned(std::clamp<std::uint64_t>(slot_bytes / (std::uint64_t{64} << 10), 1, most));
  grid = std::min<unsigned>(grid, peer_max_blocks);
  const std::uint64_t per_block = round_up((q + grid - 1) / grid, V);
  grid = unsigned((q + per_block - 1) / per_block);

  peer_args<T> a{};
  a.in = static_cast<const T*>(call.in);
  a.out = static_cast<T*>(call.out);
  a.n = n;
  a.slice = slice;
  a.row_stride = call.row_stride;
  a.rows = rows;
  a.rank = m.devcomm.rank;
  a.ranks = m.devcomm.nRanks;
  a.q = q;
  a.per_block = per_block;
  a.rounds = std::uint32_t(rounds);
  a.parity0 = std::uint32_t(m.rounds_done & 1u);
  a.window = m.window;
  a.region_bytes = m.region_bytes;
  a.slot_bytes = slot_bytes;
  a.result_offset = 2 * m.region_bytes;
  a.comm = m.devcomm;
  if (m.last_recorded)
    cuda::check(cudaStreamWaitEvent(stream, m.last, 0), "detred::nccl: cudaStreamWaitEvent (peer kernels in order)");
  if (vectors)
    launch_width<T, int(V)>(a, call.op, call.exact, grid, stream);
  else
    launch_width<T, 1>(a, call.op, call.exact, grid, stream);
  cuda::check(cudaGetLastError(), "detred::nccl: peer kernel launch");
  cuda::check(cudaEventRecord(m.last, stream), "detred::nccl: cudaEventRecord");
  m.last_recorded = true;
  m.rounds_done += rounds;
}

void peer_memory::run(ncclComm_t, const peer_call& call, cudaStream_t stream) {
  impl& m = *impl_;
  switch (call.type) {
    case peer_type::f32:
      return run_typed<float>(m, call, stream);
    case peer_type::bf16:
      return run_typed<bfloat16>(m, call, stream);
    case peer_type::f16:
      return run_typed<half>(m, call, stream);
  }
}

}  // namespace detred::nccl::detail
