// detred.scatter_add, index_add, segment_sum: the exact scatter family (detred/scatter.hpp and its CUDA twin).
#include "common.hpp"

namespace detred::python {

void bind_scatter(nb::module_& m) { (void)m; }

}  // namespace detred::python
