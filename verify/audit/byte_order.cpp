#include "byte_order.hpp"

#include <bit>

namespace detred::audit {

namespace {
template <class T, class Bits>
std::vector<T> decode_as(std::span<const std::byte> bytes, byte_order order) {
  std::vector<T> out(bytes.size() / sizeof(T));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto bits = static_cast<Bits>(load_unsigned(bytes.data() + i * sizeof(T), sizeof(T), order));
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
      out[i] = T::from_bits(bits);
    else
      out[i] = std::bit_cast<T>(bits);
  }
  return out;
}
}  // namespace

sample_vector decode_values(std::span<const std::byte> bytes, element_type type, byte_order order) {
  switch (type) {
    case element_type::f16:
      return decode_as<half, std::uint16_t>(bytes, order);
    case element_type::bf16:
      return decode_as<bfloat16, std::uint16_t>(bytes, order);
    case element_type::f32:
      return decode_as<float, std::uint32_t>(bytes, order);
    case element_type::f64:
      break;
  }
  return decode_as<double, std::uint64_t>(bytes, order);
}

}  // namespace detred::audit
