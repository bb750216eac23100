// libFuzzer target over detred-audit's input readers (npy, raw, text) and the npy writer.
//
// The first input byte chooses the reader: bits 0-1 the format (0 and 3 npy, 1 raw, 2 text), bits 2-3 the element
// type (f16, bf16, f32, f64), bit 4 the byte order of raw input; the rest is the file. Besides the sanitizers'
// checks, each call asserts the readers' contract: an error is one non-empty line naming the source; a data set is
// non-empty and as long as its shape says; an npy file written back from it reads back to the same bits.
// Built and run by scripts/fuzz-audit.sh (CI: scripts/ci-checks.sh); seeds in tests/audit/corpus/.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "npy_reader.hpp"
#include "npy_writer.hpp"
#include "raw_reader.hpp"
#include "text_reader.hpp"

namespace {

using namespace detred::audit;

void require(bool condition) {
  if (!condition) __builtin_trap();
}

template <class V>
bool same_bits(const V& a, const V& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0);
}

void check(const read_result& result, std::string_view source, bool npy) {
  if (const auto* error = std::get_if<input_error>(&result)) {
    require(error->message.rfind(source, 0) == 0);
    require(error->message.size() > source.size());
    require(error->message.find('\n') == std::string::npos);
    return;
  }
  const dataset& data = std::get<dataset>(result);
  require(data.size() > 0);
  std::uint64_t count = 1;
  for (auto extent : data.shape) count *= extent;
  require(count == data.size());
  if (npy && data.type() != element_type::bf16) {
    const std::string bytes = npy_bytes(data);
    const auto again = parse_npy(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), "again");
    require(std::holds_alternative<dataset>(again));
    std::visit(
        [&](const auto& original) {
          using V = std::decay_t<decltype(original)>;
          require(same_bits(original, std::get<V>(std::get<dataset>(again).values)));
        },
        data.values);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const unsigned selector = data[0];
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data + 1), size - 1);
  const auto type = static_cast<element_type>((selector >> 2) & 3u);
  switch (selector & 3u) {
    case 1:
      check(parse_raw(bytes, type, (selector >> 4) & 1u ? byte_order::big : byte_order::little, "fuzz.bin"), "fuzz.bin",
            false);
      break;
    case 2:
      check(parse_text(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()), type, "fuzz.txt"),
            "fuzz.txt", false);
      break;
    default:
      check(parse_npy(bytes, "fuzz.npy"), "fuzz.npy", true);
      break;
  }
  return 0;
}
