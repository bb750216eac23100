// Runs one function per GPU rank, the way detred's NCCL tests and benchmark do: ONE process drives P GPUs, a host
// thread per GPU, communicators from ncclCommInitAll (docs/DISTRIBUTED.md, "Tests"). Each thread makes its GPU current
// and gets a detred::nccl::context for its rank. An exception on any thread is rethrown here (the lowest rank's).
#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <cstdlib>
#include <exception>
#include <functional>
#include <thread>
#include <vector>

#include "detred/cuda/device.hpp"
#include "detred/nccl/context.hpp"
#include "detred/nccl/error.hpp"

namespace detred::test {

inline int gpu_count() { return cuda::device_count(); }

inline void run_on_gpus(int gpus, const std::function<void(nccl::context&, int rank)>& work) {
  // NVLink multicast stays off on shared machines (a program using it can take the host's GPUs out of service); a
  // value the caller set is kept.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  std::vector<ncclComm_t> comms(static_cast<std::size_t>(gpus));
  std::vector<int> devices(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) devices[std::size_t(g)] = g;
  nccl::check(ncclCommInitAll(comms.data(), gpus, devices.data()), "ncclCommInitAll");
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(gpus));
  std::vector<std::thread> threads;
  for (int g = 0; g < gpus; ++g)
    threads.emplace_back([&, g] {
      try {
        cuda::check(cudaSetDevice(g), "cudaSetDevice");
        nccl::context ctx(comms[std::size_t(g)]);
        work(ctx, g);
      } catch (...) {
        errors[std::size_t(g)] = std::current_exception();
      }
    });
  for (std::thread& t : threads) t.join();
  for (ncclComm_t c : comms) ncclCommDestroy(c);
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace detred::test
