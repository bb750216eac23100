// detred::nccl's peer-memory transport (src/nccl/peer.hpp): the symmetric window (ncclMemAlloc, ncclCommWindowRegister
// with NCCL_WIN_COLL_SYMMETRIC), NCCL's device communicator with one LSA barrier a thread block (ncclDevCommCreate, no
// multicast), the plan of a call (rounds, slots, blocks) and the kernel choice. The kernels are in
// src/nccl/peer_kernels.cuh.
#include <cuda_runtime.h>
#include <nccl.h>
#include <nccl_device.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "detred/cuda/error.hpp"
#include "detred/errors.hpp"
#include "detred/nccl/error.hpp"
#include "src/distributed/call_signature.hpp"
#include "src/nccl/peer.hpp"
#include "src/nccl/peer_kernels.cuh"

namespace detred::nccl::detail {

namespace {

std::string type_names(std::uint64_t types) {
  std::string s = distributed::type_name(std::uint32_t(types & 0xFu));
  if ((types >> 4) != 0) s += std::string(" accumulated in ") + distributed::type_name(std::uint32_t(types >> 4));
  return s;
}

// Why two ranks' descriptors differ, in the words of the host check (src/distributed/call_signature.hpp).
std::string mismatch_message(const check_report& r, int me) {
  const int peer = r.peer;
  const int lo = std::min(me, peer), hi = std::max(me, peer);
  const std::uint64_t* a = me < peer ? r.mine : r.theirs;  // the lower rank's words
  const std::uint64_t* b = me < peer ? r.theirs : r.mine;
  const auto operation = [](const std::uint64_t* w) { return std::uint32_t(w[2] & 0xFFFFFFFFu); };
  const auto types = [](const std::uint64_t* w) { return (w[2] >> 32) & 0xFFu; };
  const std::string L = "rank " + std::to_string(lo), H = "rank " + std::to_string(hi);
  if (operation(a) == withdrawn_operation || operation(b) == withdrawn_operation)
    return "rank " + std::to_string(operation(a) == withdrawn_operation ? lo : hi) +
           " withdrew from the call (its own arguments were invalid, or its context had failed)";
  if (types(a) != types(b)) return L + " passes " + type_names(types(a)) + " data, " + H + " " + type_names(types(b));
  if (operation(a) != operation(b))
    return L + " and " + H + " ask for different operations or methods (" + std::to_string(operation(a)) + " and " +
           std::to_string(operation(b)) + ")";
  if (a[3] != b[3])
    return L + " and " + H + " pass different options (" + std::to_string(a[3]) + " and " + std::to_string(b[3]) +
           "); options that shape the messages must match";
  if (a[1] != b[1])
    return L + " passes " + std::to_string(a[1]) + " elements, " + H + " passes " + std::to_string(b[1]) +
           "; every rank must pass the same count";
  return "the ranks' earlier calls on this context differed";
}

}  // namespace

struct peer_memory::impl {
  int state = 0;  // 0: not decided yet; 1: available; -1: not available
  bool devcomm_made = false;
  ncclDevComm devcomm{};
  ncclComm_t comm = nullptr;
  void* buffer = nullptr;
  ncclWindow_t window = nullptr;
  // The window holds three regions (two for staging, one for reduced slices), then the descriptor slots.
  std::size_t region_bytes = 0;
  std::uint64_t rounds_done = 0;
  cudaEvent_t last = nullptr;
  bool last_recorded = false;
  // The device check: the calls checked so far (each a sequence number), the windows made so far, and the failure
  // reports in mapped pinned memory ([0]: found by a kernel, fatal; [1]: found by a stopping handshake).
  std::uint64_t sequence = 0;
  std::uint64_t generation = 0;
  check_report* reports = nullptr;
  check_report* reports_device = nullptr;
  std::string failure;  // not empty once the context has failed: why

  ~impl() {
    if (last_recorded) cudaEventSynchronize(last);
    if (window) ncclCommWindowDeregister(comm, window);
    if (buffer) ncclMemFree(buffer);
    if (devcomm_made) ncclDevCommDestroy(comm, &devcomm);
    if (last) cudaEventDestroy(last);
    if (reports) cudaFreeHost(reports);
  }

  // A window of three regions of at least `region` bytes and the descriptor slots (zeroed before the peers can reach
  // them). Collective (every rank grows at the same call); the old window is deregistered once this rank's kernels
  // have ended, and NCCL's collective deregistration waits for every rank's.
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
    const std::size_t bytes = 3 * region + peer_control_bytes;
    check(ncclMemAlloc(&buffer, bytes), "ncclMemAlloc", comm);
    cuda::check(cudaMemset(static_cast<char*>(buffer) + 3 * region, 0, peer_control_bytes),
                "detred::nccl: cudaMemset (descriptor slots)");
    cuda::check(cudaDeviceSynchronize(), "detred::nccl: cudaDeviceSynchronize (descriptor slots)");
    check(ncclCommWindowRegister(comm, buffer, bytes, &window, NCCL_WIN_COLL_SYMMETRIC), "ncclCommWindowRegister",
          comm);
    region_bytes = region;
    ++generation;
  }

  // The next checked call's words: its descriptor, with the window's generation and the rounds run so far, which
  // differ between ranks once an earlier call has (so that such a context never runs a data kernel again).
  peer_check next_check(const call_descriptor& d, int report, bool stops = false) {
    peer_check c{};
    c.words[0] = ++sequence;
    c.words[1] = d.n;
    c.words[2] = std::uint64_t(d.operation) | (std::uint64_t(d.types & 0xFFu) << 32) | ((generation & 0xFu) << 40) |
                 ((rounds_done & 0x7FFFFu) << 44) | (stops ? descriptor_stops : 0);
    c.words[3] = d.options;
    c.control = 3 * region_bytes;
    c.report = reports_device + report;
    return c;
  }

  void chain(cudaStream_t stream) {
    if (last_recorded)
      cuda::check(cudaStreamWaitEvent(stream, last, 0), "detred::nccl: cudaStreamWaitEvent (peer kernels in order)");
  }
  void record(cudaStream_t stream) {
    cuda::check(cudaEventRecord(last, stream), "detred::nccl: cudaEventRecord");
    last_recorded = true;
  }

  void handshake(const char* function, const call_descriptor& descriptor, bool wait, bool stop, cudaStream_t stream) {
    const peer_check c = next_check(descriptor, stop ? 1 : 0, stop);
    chain(stream);
    handshake_kernel<<<1, 1, 0, stream>>>(c, window, devcomm.rank, devcomm.nRanks, wait);
    cuda::check(cudaGetLastError(), "detred::nccl: handshake kernel launch");
    record(stream);
    if (!stop) return;
    cuda::check(cudaStreamSynchronize(stream), "detred::nccl: cudaStreamSynchronize (argument check)");
    volatile check_report* r = reports + 1;
    if (r->raised == 0) return;
    check_report copy;
    std::memcpy(&copy, const_cast<check_report*>(reports + 1), sizeof copy);
    r->raised = 0;
    const std::string why = "mismatched arguments across ranks: " + mismatch_message(copy, devcomm.rank);
    // Where a peer ran a kernel instead of stopping here, its context has failed, and so does this one (the ranks'
    // histories differ from now on).
    if (copy.every_rank_stopped == 0 && failure.empty())
      failure = why +
                "; found at an earlier call, where another rank's kernel gave NaN: this context has failed "
                "(destroy it on every rank and make a new one; the communicator is unharmed)";
    detred::detail::throw_invalid(function, why);
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
  void* reports = nullptr;
  cuda::check(cudaHostAlloc(&reports, 2 * sizeof(check_report), cudaHostAllocMapped),
              "detred::nccl: cudaHostAlloc (check reports)");
  m.reports = static_cast<check_report*>(reports);
  std::memset(m.reports, 0, 2 * sizeof(check_report));
  void* device_reports = nullptr;
  cuda::check(cudaHostGetDevicePointer(&device_reports, reports, 0), "detred::nccl: cudaHostGetDevicePointer");
  m.reports_device = static_cast<check_report*>(device_reports);
  m.grow(1);  // the descriptor slots exist from the first call on: every later call can be checked on the device
  m.state = 1;
  return true;
}

bool peer_memory::has_window() const { return impl_->window != nullptr; }

void peer_memory::handshake(const char* function, const call_descriptor& descriptor, bool wait, bool stop,
                            cudaStream_t stream) {
  impl_->handshake(function, descriptor, wait, stop, stream);
}

void peer_memory::throw_if_failed(const char* function, cudaStream_t stream) {
  impl& m = *impl_;
  if (m.failure.empty() && (m.reports == nullptr || static_cast<volatile check_report*>(m.reports)->raised == 0))
    return;
  if (m.failure.empty()) {
    check_report copy;
    std::memcpy(&copy, const_cast<check_report*>(m.reports), sizeof copy);
    m.failure = "mismatched arguments across ranks, found on the device at an earlier call: " +
                mismatch_message(copy, m.devcomm.rank) +
                "; that call's outputs are NaN on every rank and this context has failed (destroy it on every rank "
                "and make a new one; the communicator is unharmed)";
  }
  call_descriptor withdrawn;
  withdrawn.operation = withdrawn_operation;
  if (m.window) handshake(function, withdrawn, false, false, stream);
  detred::detail::throw_invalid(function, m.failure);
}

void peer_memory::fail(const std::string& why) {
  if (impl_->failure.empty()) impl_->failure = why;
}

void peer_memory::synchronize(const char* function, cudaStream_t stream) {
  impl& m = *impl_;
  cuda::check(cudaStreamSynchronize(stream), "detred::nccl: cudaStreamSynchronize");
  if (m.last_recorded) cuda::check(cudaEventSynchronize(m.last), "detred::nccl: cudaEventSynchronize");
  throw_if_failed(function, stream);
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
  // Rounds of at most chunk_bytes of the vector, and at most 8 MiB for the all-reduces and 16 MiB for the
  // reduce-scatter: the sizes measured fastest on 4 and 2 H100s (two-shot at 256 MiB on 4 GPUs: 0.92x ncclAllReduce
  // with 8 MiB rounds, 0.86x with 32 MiB; at 16 MiB, 0.93x against 0.86x; the reduce-scatter 0.98x with 16 MiB, 0.91x
  // with 32 MiB; one-shot on 2 GPUs at 16 MiB 1.32x against 1.12x). More rounds keep more of the transfers in flight
  // across a block's barriers.
  const std::uint64_t cap = call.op == peer_op::reduce_scatter ? std::uint64_t{16} << 20
                            : call.op == peer_op::all_gather   ? std::uint64_t(call.chunk_bytes)
                                                               : std::uint64_t{8} << 20;
  const std::uint64_t chunk = std::max<std::uint64_t>(std::min<std::uint64_t>(call.chunk_bytes, cap) / elem, V);
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
  // The third region holds two-shot's reduced slices: two slots (rounds alternate), which (P - 1) slots cover for P
  // > 2.
  const std::uint64_t need =
      std::max<std::uint64_t>(slots * slot_bytes, (call.op == peer_op::two_shot ? 2 : 1) * slot_bytes);
  if (need > m.region_bytes) {
    // Growing is collective: the ranks first agree that they make the same call (a rank that needs no growth runs
    // its kernel, which sees this handshake's descriptor).
    if (call.check) m.handshake(call.function, call.descriptor, true, true, stream);
    m.grow(need);
  }
  // 16-byte vectors where every pointer and every slice start allows them.
  const bool vectors = aligned16(call.in) && aligned16(call.out) && (rows == 1 || (call.row_stride * elem) % 16 == 0) &&
                       ((call.op != peer_op::reduce_scatter && call.op != peer_op::all_gather) || (n * elem) % 16 == 0);
  // Blocks, unless asked: one per 4 KiB of a round's slot for one-shot (16 at 64 KiB on 4 GPUs, where one block left
  // the device check's latency exposed: 0.93x ncclAllReduce against 1.13x with 16), one per 16 KiB for two-shot and one
  // per 32 KiB for the reduce-scatter (128 at 256 MiB, the best count measured on 2 and 4 H100s), at most 128 (the LSA
  // barriers); the all-gather one per 64 KiB, at most 64.
  unsigned grid = call.blocks;
  const std::uint64_t most = call.op == peer_op::all_gather ? 64 : peer_max_blocks;
  const std::uint64_t per_block_bytes = call.op == peer_op::one_shot         ? std::uint64_t{4} << 10
                                        : call.op == peer_op::two_shot       ? std::uint64_t{16} << 10
                                        : call.op == peer_op::reduce_scatter ? std::uint64_t{32} << 10
                                                                             : std::uint64_t{64} << 10;
  if (grid == 0) grid = unsigned(std::clamp<std::uint64_t>(slot_bytes / per_block_bytes, 1, most));
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
  if (call.check) a.check = m.next_check(call.descriptor, 0);
  m.chain(stream);
  if (vectors)
    launch_width<T, int(V)>(a, call.op, call.exact, grid, stream);
  else
    launch_width<T, 1>(a, call.op, call.exact, grid, stream);
  cuda::check(cudaGetLastError(), "detred::nccl: peer kernel launch");
  m.record(stream);
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
