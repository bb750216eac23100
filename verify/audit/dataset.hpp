// What the audit tool reads: a data set held in its own element type, or a one-line input error.
//
// Every reader (npy_reader, raw_reader, text_reader) is a pure function from bytes to a read_result: either the whole
// data set, or an input_error whose message names the source, the byte offset or line, and what was wrong. A reader
// never returns part of a file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "detred/types/float_traits.hpp"

namespace detred::audit {

// The element types the audit tool reads; the names are the --dtype values and the JSON "dtype" strings.
enum class element_type { f16, bf16, f32, f64 };

std::string_view to_string(element_type type);
std::optional<element_type> parse_element_type(std::string_view name);
std::size_t element_bytes(element_type type);

// The values, in the input's own type (never converted on reading: a float32 file is audited as float32).
using sample_vector = std::variant<std::vector<half>, std::vector<bfloat16>, std::vector<float>, std::vector<double>>;

template <floating_input T>
constexpr element_type element_type_of() {
  if constexpr (std::same_as<T, half>)
    return element_type::f16;
  else if constexpr (std::same_as<T, bfloat16>)
    return element_type::bf16;
  else if constexpr (std::same_as<T, float>)
    return element_type::f32;
  else
    return element_type::f64;
}

struct dataset {
  std::string source;                // the file name, "<generated: ...>" or "<embedded default>"
  std::vector<std::uint64_t> shape;  // as stored (npy); {n} for raw, text and generated inputs
  sample_vector values;
  // A reader's one-line warning about values it read (e.g. text that overflowed to Inf when rounded), or "".
  std::string warning;

  element_type type() const;
  std::size_t size() const;
};

// One line, "<source>: <where>: <what>", e.g. "x.npy: offset 10: header length 70000 runs past the end of the file".
struct input_error {
  std::string message;
};

using read_result = std::variant<dataset, input_error>;

// Printable form of a piece of input for an error message, in single quotes: at most max_chars characters (then
// "..."), control and non-ASCII bytes as \xNN.
std::string quoted_excerpt(std::size_t max_chars, std::string_view text);

// `text` with every control byte (below 0x20, and 0x7f) written as \xNN: safe to print on a terminal.
std::string printable(std::string_view text);

// Builds the one-line message; `where` is e.g. "offset 12" or "line 3, column 7".
input_error make_input_error(std::string_view source, std::string_view where, std::string_view what);

}  // namespace detred::audit
