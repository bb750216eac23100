#include "dataset.hpp"

namespace detred::audit {

std::string_view to_string(element_type type) {
  switch (type) {
    case element_type::f16:
      return "f16";
    case element_type::bf16:
      return "bf16";
    case element_type::f32:
      return "f32";
    case element_type::f64:
      return "f64";
  }
  return "unknown";
}

std::optional<element_type> parse_element_type(std::string_view name) {
  for (element_type t : {element_type::f16, element_type::bf16, element_type::f32, element_type::f64})
    if (name == to_string(t)) return t;
  return std::nullopt;
}

std::size_t element_bytes(element_type type) {
  switch (type) {
    case element_type::f16:
    case element_type::bf16:
      return 2;
    case element_type::f32:
      return 4;
    case element_type::f64:
      return 8;
  }
  return 0;
}

element_type dataset::type() const {
  return std::visit([](const auto& v) { return element_type_of<typename std::decay_t<decltype(v)>::value_type>(); },
                    values);
}

std::size_t dataset::size() const {
  return std::visit([](const auto& v) { return v.size(); }, values);
}

std::string quoted_excerpt(std::size_t max_chars, std::string_view text) {
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < max_chars; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\'') {
      out += static_cast<char>(c);
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (text.size() > max_chars) out += "...";
  return out + "'";
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c != 0x7f) {
      out += ch;
    } else {
      static constexpr char hex[] = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

input_error make_input_error(std::string_view source, std::string_view where, std::string_view what) {
  std::string message(source);
  message += ": ";
  if (!where.empty()) {
    message += where;
    message += ": ";
  }
  message += what;
  // One line, whatever the file contained: control characters quoted by the reader never reach a terminal raw.
  for (char& c : message)
    if (c == '\n' || c == '\r') c = ' ';
  return input_error{std::move(message)};
}

}  // namespace detred::audit
