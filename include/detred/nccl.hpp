// detred::nccl (target detred::nccl, find_package(detred COMPONENTS nccl)): reproducible sums and all-reduces across
// GPUs on NCCL: nccl::sum, nccl::all_reduce, nccl::reduce_scatter, nccl::all_gather and
// nccl::all_reduce_micro_batches, each taking a nccl::context (one per communicator and rank) where the
// device calls take their workspace. docs/DISTRIBUTED.md.
#pragma once

#include "detred/nccl/all_gather.hpp"
#include "detred/nccl/all_reduce.hpp"
#include "detred/nccl/context.hpp"
#include "detred/nccl/error.hpp"
#include "detred/nccl/micro_batches.hpp"
#include "detred/nccl/reduce_scatter.hpp"
#include "detred/nccl/sum.hpp"
