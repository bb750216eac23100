// Every host family of detred (sums, reduces, scans, BLAS-1, rows and norms, accumulators). Include this, link
// detred::detred. The device API is in detred/cuda/, the distributed components in detred/mpi.hpp and detred/nccl.hpp.
#pragma once

#include "detred/accumulators/accumulator.hpp"
#include "detred/blas.hpp"
#include "detred/config.hpp"
#include "detred/determinism.hpp"
#include "detred/errors.hpp"
#include "detred/execution.hpp"
#include "detred/norms.hpp"
#include "detred/order.hpp"
#include "detred/reduce.hpp"
#include "detred/rows.hpp"
#include "detred/scan.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"
