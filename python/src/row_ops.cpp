// detred._detred._rows: the batch-invariant row kernels (detred/rows.hpp, detred/norms.hpp and their CUDA twins) as
// low-level calls on caller-allocated outputs, for detred.torch's custom ops (python/detred/torch/).
#include "common.hpp"

namespace detred::python {

void bind_row_ops(nb::module_& m) { (void)m.def_submodule("_rows", "Row kernels for detred.torch (private)."); }

}  // namespace detred::python
