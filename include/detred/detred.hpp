// Everything detred offers on the host. Include this, link detred::detred.
#pragma once

#include "detred/accumulators/accumulator.hpp"
#include "detred/config.hpp"
#include "detred/determinism.hpp"
#include "detred/errors.hpp"
#include "detred/execution.hpp"
#include "detred/order.hpp"
#include "detred/reduce.hpp"
#include "detred/scan.hpp"
#include "detred/sum_method.hpp"
#include "detred/types/float_traits.hpp"
