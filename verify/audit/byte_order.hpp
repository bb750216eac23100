// Loading the bit patterns of binary values stored in either byte order (npy and raw files), independent of the host.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "dataset.hpp"

namespace detred::audit {

enum class byte_order { little, big };

// The unsigned integer of `width` bytes (2, 4 or 8) stored at bytes[0..width) in `order`.
inline std::uint64_t load_unsigned(const std::byte* bytes, std::size_t width, byte_order order) {
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const std::size_t k = order == byte_order::little ? width - 1 - i : i;
    value = (value << 8) | std::to_integer<std::uint64_t>(bytes[k]);
  }
  return value;
}

// Decodes count = bytes.size() / element_bytes(type) values, bit for bit (NaN payloads and signed zeros kept).
// Precondition: bytes.size() is a multiple of element_bytes(type).
sample_vector decode_values(std::span<const std::byte> bytes, element_type type, byte_order order);

}  // namespace detred::audit
