#include "raw_reader.hpp"

#include <string>

namespace detred::audit {

read_result parse_raw(std::span<const std::byte> bytes, element_type type, byte_order order, std::string_view source) {
  const std::size_t width = element_bytes(type);
  if (bytes.empty()) return make_input_error(source, "offset 0", "empty file: no values to audit");
  if (bytes.size() % width != 0) {
    const std::size_t last = bytes.size() - bytes.size() % width;
    return make_input_error(source, "offset " + std::to_string(last),
                            "truncated: the file's " + std::to_string(bytes.size()) +
                                " bytes are not a whole number of " + std::string(to_string(type)) + " values (" +
                                std::to_string(width) + " bytes each); the last value has only " +
                                std::to_string(bytes.size() - last) + " byte(s)");
  }
  dataset data;
  data.source = std::string(source);
  data.shape = {bytes.size() / width};
  data.values = decode_values(bytes, type, order);
  return data;
}

}  // namespace detred::audit
