// Column sums of half, bfloat16 and float inputs (src/cuda/rows/columns.cuh), and their workspace size.
#include "src/cuda/rows/columns.cuh"

namespace detred::cuda {
std::size_t column_sum_workspace_bytes(std::uint64_t rows, std::uint64_t cols, const column_launch& launch) {
  detail::validate_columns(launch);
  return std::size_t((rows >> detail::chosen_chunk_level(rows, cols, launch)) * cols * sizeof(float));
}
}  // namespace detred::cuda

#define DETRED_INSTANTIATE_COLUMNS(T)                                                                             \
  template void detred::cuda::column_sum<T>(const T*, std::uint64_t, std::uint64_t, std::uint64_t, float*, void*, \
                                            std::size_t, cudaStream_t, const detred::cuda::column_launch&);
DETRED_INSTANTIATE_COLUMNS(float)
DETRED_INSTANTIATE_COLUMNS(detred::bfloat16)
DETRED_INSTANTIATE_COLUMNS(detred::half)
