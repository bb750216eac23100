#include "npy_writer.hpp"

#include <bit>
#include <stdexcept>

namespace detred::audit {

namespace {

template <class Bits>
void append_little(std::string& out, Bits bits) {
  for (std::size_t i = 0; i < sizeof(Bits); ++i) out += static_cast<char>((std::uint64_t(bits) >> (8 * i)) & 0xffu);
}

}  // namespace

std::string npy_bytes(const dataset& data) {
  std::string descr;
  switch (data.type()) {
    case element_type::f16:
      descr = "<f2";
      break;
    case element_type::f32:
      descr = "<f4";
      break;
    case element_type::f64:
      descr = "<f8";
      break;
    case element_type::bf16:
      throw std::invalid_argument("bfloat16 has no .npy dtype; save it as raw binary instead");
  }
  std::string shape = "(";
  for (std::size_t i = 0; i < data.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(data.shape[i]);
  shape += data.shape.size() == 1 ? ",)" : ")";
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header += std::string((64 - unpadded % 64) % 64, ' ') + "\n";  // numpy aligns the data to 64 bytes

  std::string out("\x93NUMPY\x01\x00", 8);
  append_little(out, static_cast<std::uint16_t>(header.size()));
  out += header;
  std::visit(
      [&](const auto& values) {
        for (const auto& x : values) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>)
            append_little(out, x.bits);
          else if constexpr (std::is_same_v<T, float>)
            append_little(out, std::bit_cast<std::uint32_t>(x));
          else
            append_little(out, std::bit_cast<std::uint64_t>(x));
        }
      },
      data.values);
  return out;
}

}  // namespace detred::audit
