// cuda::sum's workspace size (include/detred/cuda/sum.hpp): host code, shared by every type pair.
#include <cstddef>
#include <cstdint>
#include <string>

#include "detred/cuda/sum.hpp"
#include "detred/errors.hpp"
#include "src/cuda/common/launch_policy.hpp"
#include "src/cuda/common/workspace.hpp"

namespace detred::cuda::detail {

std::size_t sum_workspace_size(std::uint64_t n, const sum_options& options) {
  validate(options);
  switch (options.method) {
    case sum_method::tree:
    case sum_method::tree_neumaier:
    case sum_method::exact:
      return workspace_bytes_for(n, options.method);
    default:
      detred::detail::throw_invalid("cuda::sum", std::string("sum_options.method: sum_method::") +
                                                     std::string(to_string(options.method)) +
                                                     " is sequential and has no GPU version; use tree, "
                                                     "tree_neumaier or exact");
  }
}

}  // namespace detred::cuda::detail
