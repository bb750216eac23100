// What every rank of a distributed detred call says about its arguments before any data moves, so that mismatched
// types, methods or sizes give every rank the same clear error instead of a hang or garbage (docs/DISTRIBUTED.md).
// Internal (not installed); host-only, no MPI or NCCL dependency: the backends all-gather these fixed-size records and
// call check_signatures.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "detred/errors.hpp"
#include "detred/types/float_traits.hpp"

namespace detred::distributed {

// A plain 32-byte record (all ranks of a job share one byte order).
struct call_signature {
  std::uint64_t count = 0;         // elements this rank passes
  std::uint32_t input = 0;         // type_code of the element type
  std::uint32_t accumulation = 0;  // type_code of the accumulation type
  std::uint32_t operation = 0;     // which call and method (backend-defined)
  std::uint32_t ranks = 0;         // the communicator size this rank sees
  std::uint64_t options = 0;       // options that shape the messages and must match (backend-defined)
};
static_assert(sizeof(call_signature) == 32 && std::is_trivially_copyable_v<call_signature>);

// The operation a rank sends when its own data pointer is null with a nonzero count, so that every rank reports it
// (check_signatures) instead of that rank throwing before the collective and the others waiting in it.
inline constexpr std::uint32_t null_data_operation = 0xFFFFFFFFu;

template <class T>
constexpr std::uint32_t type_code() {
  if constexpr (std::is_same_v<T, half>) return 1;
  if constexpr (std::is_same_v<T, bfloat16>) return 2;
  if constexpr (std::is_same_v<T, float>) return 3;
  if constexpr (std::is_same_v<T, double>) return 4;
  return 0;
}

inline const char* type_name(std::uint32_t code) {
  switch (code) {
    case 1:
      return "half";
    case 2:
      return "bfloat16";
    case 3:
      return "float";
    case 4:
      return "double";
    default:
      return "an unknown type";
  }
}

// Throws detred::invalid_argument (the same message on every rank) when a rank's data was null with a nonzero count
// (the lowest such rank), or unless every rank passed the same types and operation, and, when same_count, the same
// element count. `all` holds the records in rank order.
inline void check_signatures(const char* function, std::span<const call_signature> all, bool same_count) {
  for (std::size_t r = 0; r < all.size(); ++r)
    if (all[r].operation == null_data_operation)
      detail::throw_invalid(function, "rank " + std::to_string(r) + ": data is null but n_local > 0");
  const call_signature& first = all[0];
  for (std::size_t r = 1; r < all.size(); ++r) {
    const call_signature& s = all[r];
    std::string why;
    if (s.ranks != first.ranks) {
      why = "ranks see different communicator sizes";
    } else if (s.input != first.input || s.accumulation != first.accumulation) {
      why = std::string("rank 0 passes ") + type_name(first.input) + " data accumulated in " +
            type_name(first.accumulation) + ", rank " + std::to_string(r) + " " + type_name(s.input) +
            " accumulated in " + type_name(s.accumulation);
    } else if (s.operation != first.operation) {
      why = "rank 0 and rank " + std::to_string(r) + " ask for different operations or methods (" +
            std::to_string(first.operation) + " and " + std::to_string(s.operation) + ")";
    } else if (s.options != first.options) {
      why = "rank 0 and rank " + std::to_string(r) + " pass different options (" + std::to_string(first.options) +
            " and " + std::to_string(s.options) + "); options that shape the messages must match";
    } else if (same_count && s.count != first.count) {
      why = "rank 0 passes " + std::to_string(first.count) + " elements, rank " + std::to_string(r) + " passes " +
            std::to_string(s.count) + "; every rank must pass the same count";
    }
    if (!why.empty()) detail::throw_invalid(function, "mismatched arguments across ranks: " + why);
  }
}

// The fixed-size record a rank all-gathers before an NCCL call (record_bytes a rank, whatever the call, so that ranks
// that disagree on the call still agree on the collective): the signature in bytes [0, 32); at record_error_offset a
// flag, 1 when the rank's own arguments are invalid; from record_payload_offset a payload: the call's data (the exact
// state of nccl::sum), or, with the flag, the rank's error message, NUL-terminated.
inline constexpr std::size_t record_bytes = 640;
inline constexpr std::size_t record_error_offset = 32;
inline constexpr std::size_t record_payload_offset = 64;

// Writes this rank's record header (signature and flag) at `slot`, and the message after it when local_error is not
// empty (cut to fit). Returns the bytes written: record_payload_offset, or record_bytes with a message.
inline std::size_t write_record(unsigned char* slot, const call_signature& mine, const std::string& local_error) {
  std::memset(slot, 0, record_payload_offset);
  std::memcpy(slot, &mine, sizeof mine);
  if (local_error.empty()) return record_payload_offset;
  slot[record_error_offset] = 1;
  const std::size_t length = std::min(local_error.size(), record_bytes - record_payload_offset - 1);
  std::memcpy(slot + record_payload_offset, local_error.data(), length);
  slot[record_payload_offset + length] = 0;
  return record_bytes;
}

// Checks the all-gathered records (`ranks` of them, in rank order), the same way on every rank: invalid_argument
// "rank r: <message>" for the lowest rank r that flagged a local error, else check_signatures.
inline void check_records(const char* function, const unsigned char* records, std::size_t ranks, bool same_count) {
  for (std::size_t r = 0; r < ranks; ++r) {
    const unsigned char* record = records + r * record_bytes;
    if (record[record_error_offset] != 0) {
      const char* message = reinterpret_cast<const char*>(record + record_payload_offset);
      std::size_t length = 0;
      while (length < record_bytes - record_payload_offset && message[length] != '\0') ++length;
      detail::throw_invalid(function, "rank " + std::to_string(r) + ": " + std::string(message, length));
    }
  }
  std::vector<call_signature> all(ranks);
  for (std::size_t r = 0; r < ranks; ++r) std::memcpy(&all[r], records + r * record_bytes, sizeof(call_signature));
  check_signatures(function, all, same_count);
}

}  // namespace detred::distributed
