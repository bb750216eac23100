// The data set detred-audit audits when it is given no input: verify/audit/data/default.npy, embedded in the
// executable at build time (embed.cmake), so that the README's first command shows something on a fresh machine.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>

extern const unsigned char detred_audit_default_npy[];
extern const std::size_t detred_audit_default_npy_size;

namespace detred::audit {

// How data/default.npy was made; the command regenerates it bit for bit.
inline constexpr std::string_view default_input_name =
    "<embedded default: 16384 f64 values of order 1, verify's 'cancel' generator, seed 2026>";
inline constexpr std::string_view default_input_recipe =
    "detred-audit --gen cancel --n 16384 --seed 2026 --dtype f64 --save verify/audit/data/default.npy";

inline std::span<const std::byte> default_input_bytes() {
  return {reinterpret_cast<const std::byte*>(detred_audit_default_npy), detred_audit_default_npy_size};
}

}  // namespace detred::audit
