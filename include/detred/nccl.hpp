// detred::nccl (target detred::nccl, find_package(detred COMPONENTS nccl)): reproducible sums and all-reduces across
// GPUs on NCCL. docs/DISTRIBUTED.md.
#pragma once

#include "detred/nccl/all_reduce.hpp"
#include "detred/nccl/context.hpp"
#include "detred/nccl/error.hpp"
#include "detred/nccl/sum.hpp"
