#include "text_reader.hpp"

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

namespace detred::audit {

namespace {

// strtod with the given rounding direction (glibc honours the current rounding mode, for decimal and hex input);
// the mode is restored before returning. Returns nullopt unless the whole token is a number.
std::optional<double> strtod_rounded(const std::string& token, int rounding_mode) {
  const int saved = std::fegetround();
  std::fesetround(rounding_mode);
  char* end = nullptr;
  const double value = std::strtod(token.c_str(), &end);
  std::fesetround(saved);
  if (token.empty() || end != token.c_str() + token.size()) return std::nullopt;
  return value;
}

// Round to odd from double to float: the nearest float if exact, else whichever neighbouring float has an odd last
// significand bit. Rounding that to a format of at most 22 bits is then the same as rounding the double directly.
float round_to_odd_float(double d) {
  const float nearest = static_cast<float>(d);
  if (std::isnan(d) || static_cast<double>(nearest) == d) return nearest;
  if (std::bit_cast<std::uint32_t>(nearest) & 1u) return nearest;
  const float toward = static_cast<double>(nearest) > d ? -std::numeric_limits<float>::infinity()
                                                        : std::numeric_limits<float>::infinity();
  return std::nextafter(nearest, toward);
}

// Round to odd from the exact decimal (or hex) value of the token to double: the value if it is a double, else
// the neighbour with an odd last bit, found from the values rounded down and up.
std::optional<double> parse_round_to_odd(const std::string& token) {
  const auto down = strtod_rounded(token, FE_DOWNWARD);
  if (!down) return std::nullopt;
  const auto up = strtod_rounded(token, FE_UPWARD);
  if (std::isnan(*down) || std::bit_cast<std::uint64_t>(*down) == std::bit_cast<std::uint64_t>(*up)) return down;
  return (std::bit_cast<std::uint64_t>(*down) & 1u) ? down : up;
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

// True when `token` spells an infinity ("inf", "-Infinity", ...), as opposed to a finite number that overflowed.
bool spells_infinity(std::string_view token) {
  for (std::size_t i = 0; i + 3 <= token.size(); ++i)
    if ((token[i] | 0x20) == 'i' && (token[i + 1] | 0x20) == 'n' && (token[i + 2] | 0x20) == 'f') return true;
  return false;
}

template <class T>
read_result parse_text_as(std::string_view text, std::string_view source) {
  std::vector<T> values;
  std::size_t overflows = 0;
  std::string first_overflow;
  std::size_t line_number = 0;
  // A UTF-8 byte order mark, as spreadsheet exports write, is not part of the first number.
  std::size_t line_start = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  while (line_start < text.size()) {
    ++line_number;
    std::size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    if (const std::size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    auto where = [&](std::size_t column) {
      return "line " + std::to_string(line_number) + ", column " + std::to_string(column + 1);
    };
    // Fields: numbers separated by whitespace, or by one comma with optional whitespace around it.
    bool after_comma = false;  // a comma was read and no number yet after it
    bool have_value = false;   // a number was read on this line
    std::size_t pos = 0;
    for (;;) {
      while (pos < line.size() && is_space(line[pos])) ++pos;
      if (pos == line.size()) {
        if (after_comma) return make_input_error(source, where(pos), "empty field after ','");
        break;
      }
      if (line[pos] == ',') {
        if (!have_value || after_comma) return make_input_error(source, where(pos), "empty field before ','");
        after_comma = true;
        ++pos;
        continue;
      }
      std::size_t end = pos;
      while (end < line.size() && !is_space(line[end]) && line[end] != ',') ++end;
      const std::string_view token = line.substr(pos, end - pos);
      const auto value = parse_number<T>(token);
      if (!value) return make_input_error(source, where(pos), "not a number: " + quoted_excerpt(32, token));
      if (std::isinf(widen<double>(*value)) && !spells_infinity(token) && overflows++ == 0)
        first_overflow = where(pos) + ": " + quoted_excerpt(32, token) + " overflows to " +
                         (widen<double>(*value) > 0 ? "+" : "-") + "Inf as " +
                         std::string(to_string(element_type_of<T>()));
      values.push_back(*value);
      have_value = true;
      after_comma = false;
      pos = end;
    }
    line_start = line_end + 1;
  }
  if (text.empty()) return make_input_error(source, "line 1", "empty file: no values to audit");
  if (line_number == 0) return make_input_error(source, "line 1", "no numbers in the file");
  if (values.empty()) return make_input_error(source, "line " + std::to_string(line_number), "no numbers in the file");
  dataset data;
  data.source = std::string(source);
  data.shape = {values.size()};
  data.values = std::move(values);
  if (overflows)
    data.warning = std::string(source) + ": " + first_overflow +
                   (overflows > 1 ? " (and " + std::to_string(overflows - 1) + " more values)" : "");
  return data;
}

}  // namespace

std::optional<double> parse_number_as_double(std::string_view token) {
  return strtod_rounded(std::string(token), FE_TONEAREST);
}

template <>
std::optional<double> parse_number<double>(std::string_view token) {
  return parse_number_as_double(token);
}

template <>
std::optional<float> parse_number<float>(std::string_view token) {
  const std::string copy(token);
  char* end = nullptr;
  const float value = std::strtof(copy.c_str(), &end);  // correctly rounded in the default rounding mode
  if (copy.empty() || end != copy.c_str() + copy.size()) return std::nullopt;
  return value;
}

template <>
std::optional<half> parse_number<half>(std::string_view token) {
  const auto odd = parse_round_to_odd(std::string(token));
  if (!odd) return std::nullopt;
  return half::from_float(round_to_odd_float(*odd));
}

template <>
std::optional<bfloat16> parse_number<bfloat16>(std::string_view token) {
  const auto odd = parse_round_to_odd(std::string(token));
  if (!odd) return std::nullopt;
  return bfloat16::from_float(round_to_odd_float(*odd));
}

read_result parse_text(std::string_view text, element_type type, std::string_view source) {
  switch (type) {
    case element_type::f16:
      return parse_text_as<half>(text, source);
    case element_type::bf16:
      return parse_text_as<bfloat16>(text, source);
    case element_type::f32:
      return parse_text_as<float>(text, source);
    case element_type::f64:
      break;
  }
  return parse_text_as<double>(text, source);
}

}  // namespace detred::audit
