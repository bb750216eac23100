#include "npy_reader.hpp"

#include <bit>
#include <cctype>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "byte_order.hpp"

namespace detred::audit {

namespace {

std::string at(std::size_t offset) { return "offset " + std::to_string(offset); }

// The header dict numpy writes: {'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }
struct npy_header {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::uint64_t>> shape;
};

// A recursive-descent parser for exactly that dict (Python literal syntax, the subset numpy produces).
class header_parser {
 public:
  header_parser(std::string_view text, std::size_t file_offset) : text_(text), base_(file_offset) {}

  // Parses the dict into `header`; on failure returns the error's (where, what).
  std::optional<std::pair<std::string, std::string>> parse(npy_header& header) {
    skip_space();
    if (!eat('{')) return fail("the header is not a Python dict (expected '{')");
    for (;;) {
      skip_space();
      if (eat('}')) break;
      const std::size_t key_pos = pos_;
      std::string key;
      if (!read_string(key)) return fail("expected a quoted key or '}'");
      skip_space();
      if (!eat(':')) return fail("expected ':' after key " + quoted_excerpt(24, key));
      skip_space();
      if (key == "descr") {
        if (peek() == '[') return fail_at(pos_, "unsupported dtype: structured arrays are not summable");
        std::string descr;
        if (!read_string(descr)) return fail("expected a quoted dtype string for 'descr'");
        header.descr = descr;
      } else if (key == "fortran_order") {
        if (match_word("True"))
          header.fortran_order = true;
        else if (match_word("False"))
          header.fortran_order = false;
        else
          return fail("expected True or False for 'fortran_order'");
      } else if (key == "shape") {
        std::vector<std::uint64_t> shape;
        if (auto e = read_shape(shape)) return e;
        header.shape = std::move(shape);
      } else {
        return fail_at(key_pos, "unexpected key " + quoted_excerpt(24, key) + " in the header");
      }
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat('}')) break;
      return fail("expected ',' or '}' in the header dict");
    }
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected characters after the header dict");
    return std::nullopt;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool eat(char c) {
    if (peek() != c || pos_ >= text_.size()) return false;
    ++pos_;
    return true;
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  bool match_word(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool read_string(std::string& out) {
    const char quote = peek();
    if (quote != '\'' && quote != '"') return false;
    const std::size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return false;
    out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return true;
  }
  std::optional<std::pair<std::string, std::string>> read_shape(std::vector<std::uint64_t>& shape) {
    if (!eat('(')) return fail("expected a tuple '(...)' for 'shape'");
    for (;;) {
      skip_space();
      if (eat(')')) return std::nullopt;
      if (!std::isdigit(static_cast<unsigned char>(peek()))) return fail("expected a non-negative integer in 'shape'");
      std::uint64_t extent = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        const unsigned digit = static_cast<unsigned>(text_[pos_] - '0');
        if (extent > (std::numeric_limits<std::uint64_t>::max() - digit) / 10)
          return fail("an extent in 'shape' is too large");
        extent = extent * 10 + digit;
        ++pos_;
      }
      eat('L');  // Python 2 long literals, as old numpy versions wrote them
      shape.push_back(extent);
      skip_space();
      if (eat(',')) continue;
      skip_space();
      if (eat(')')) return std::nullopt;
      return fail("expected ',' or ')' in 'shape'");
    }
  }
  std::optional<std::pair<std::string, std::string>> fail(std::string what) { return fail_at(pos_, std::move(what)); }
  std::optional<std::pair<std::string, std::string>> fail_at(std::size_t pos, std::string what) {
    return std::pair{at(base_ + pos), std::move(what) + " (header text " + quoted_excerpt(24, text_.substr(pos)) + ")"};
  }

  std::string_view text_;
  std::size_t base_;
  std::size_t pos_ = 0;
};

std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) s += ",";
  return s + ")";
}

}  // namespace

read_result parse_npy(std::span<const std::byte> bytes, std::string_view source) {
  const std::string_view file(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (file.empty()) return make_input_error(source, at(0), "empty file: no values to audit");
  const std::size_t magic_part = std::min(file.size(), npy_magic.size());
  if (file.substr(0, magic_part) != npy_magic.substr(0, magic_part))
    return make_input_error(source, at(0),
                            "wrong magic: not a .npy file (expected \\x93NUMPY, found " +
                                quoted_excerpt(24, file.substr(0, magic_part)) + ")");
  if (file.size() < 8) return make_input_error(source, at(file.size()), "truncated inside the .npy preamble");
  const unsigned major = static_cast<unsigned char>(file[6]);
  const unsigned minor = static_cast<unsigned char>(file[7]);
  if (major < 1 || major > 3 || minor != 0)
    return make_input_error(source, at(6),
                            "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                                " (1.0, 2.0 and 3.0 are read)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  const std::size_t header_start = 8 + length_bytes;
  if (file.size() < header_start)
    return make_input_error(source, at(file.size()), "truncated inside the header length field");
  const std::size_t header_length = load_unsigned(bytes.data() + 8, length_bytes, byte_order::little);
  if (header_length > file.size() - header_start)
    return make_input_error(source, at(8),
                            "truncated: the header length " + std::to_string(header_length) +
                                " runs past the end of the file (" + std::to_string(file.size()) + " bytes)");
  const std::string_view header_text = file.substr(header_start, header_length);

  npy_header header;
  if (auto error = header_parser(header_text, header_start).parse(header))
    return make_input_error(source, error->first, error->second);
  if (!header.descr || !header.fortran_order || !header.shape)
    return make_input_error(source, at(header_start), "the header lacks one of 'descr', 'fortran_order', 'shape'");

  // The dtype: byte order then kind and size; only the IEEE binary floats detred sums.
  const std::string& descr = *header.descr;
  std::optional<element_type> type;
  byte_order order = byte_order::little;
  if (descr.size() == 3 && (descr[0] == '<' || descr[0] == '>' || descr[0] == '=') && descr[1] == 'f') {
    if (descr[2] == '2') type = element_type::f16;
    if (descr[2] == '4') type = element_type::f32;
    if (descr[2] == '8') type = element_type::f64;
    const bool big = descr[0] == '>' || (descr[0] == '=' && std::endian::native == std::endian::big);
    order = big ? byte_order::big : byte_order::little;
  }
  if (!type)
    return make_input_error(source, at(header_start),
                            "unsupported dtype " + quoted_excerpt(24, descr) +
                                " (detred-audit reads float16, float32 and float64: <f2 >f2 <f4 >f4 <f8 >f8)");

  const std::vector<std::uint64_t>& shape = *header.shape;
  std::uint64_t count = 1;
  std::size_t extents_above_one = 0;
  for (std::uint64_t extent : shape) {
    if (extent != 0 && count > std::numeric_limits<std::uint64_t>::max() / extent)
      return make_input_error(source, at(header_start), "shape " + shape_string(shape) + " overflows 64 bits");
    count *= extent;
    if (extent > 1) ++extents_above_one;
  }
  if (*header.fortran_order && extents_above_one > 1)
    return make_input_error(source, at(header_start),
                            "Fortran-order array of shape " + shape_string(shape) +
                                " not supported (values are read in C order; save np.ascontiguousarray(a))");
  const std::size_t data_start = header_start + header_length;
  if (count == 0)
    return make_input_error(source, at(data_start), "no values to audit (shape " + shape_string(shape) + ")");
  const std::size_t width = element_bytes(*type);
  const std::size_t available = file.size() - data_start;
  if (count > available / width)
    return make_input_error(source, at(data_start + available - available % width),
                            "truncated: shape " + shape_string(shape) + " needs " + std::to_string(count) + " " +
                                std::string(to_string(*type)) + " values from offset " + std::to_string(data_start) +
                                ", the file holds " + std::to_string(available / width) +
                                (available % width ? " and a partial one" : ""));
  if (available != count * width)
    return make_input_error(
        source, at(data_start + count * width),
        std::to_string(available - count * width) + " unexpected bytes after the data of shape " + shape_string(shape));

  dataset data;
  data.source = std::string(source);
  data.shape = shape;
  data.values = decode_values(bytes.subspan(data_start), *type, order);
  return data;
}

}  // namespace detred::audit
