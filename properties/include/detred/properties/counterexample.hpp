// Counterexamples a user can replay: the failing input of a property written where detred-audit reads it (.npy for
// binary16, binary32 and binary64 inputs; a text file of C99 hex floats for bfloat16, read with --dtype bf16), with
// the command line that audits it. Every value is written exactly.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <span>
#include <sstream>
#include <string>

#include "detred/types/float_traits.hpp"

namespace detred::test {

// Where counterexamples go: $DETRED_COUNTEREXAMPLE_DIR, else the current directory (ctest's: the build folder).
inline std::string counterexample_directory() {
  const char* dir = std::getenv("DETRED_COUNTEREXAMPLE_DIR");
  return dir != nullptr && dir[0] != '\0' ? std::string(dir) : std::string(".");
}

// Writes x as a little-endian .npy (version 1.0, C order, 1-D): '<f2', '<f4' or '<f8'.
template <class T>
bool write_npy(const std::string& path, std::span<const T> x) {
  const char* descr = sizeof(T) == 2 ? "<f2" : sizeof(T) == 4 ? "<f4" : "<f8";
  std::string header =
      "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': (" + std::to_string(x.size()) + ",), }";
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  const char magic[] = {'\x93', 'N', 'U', 'M', 'P', 'Y', 1, 0};
  out.write(magic, sizeof magic);
  const std::uint16_t length = static_cast<std::uint16_t>(header.size());
  const char length_bytes[] = {static_cast<char>(length & 0xff), static_cast<char>(length >> 8)};
  out.write(length_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (const T& v : x) {  // little-endian hosts only (x86-64, aarch64): the bytes as they are
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    out.write(bytes, sizeof(T));
  }
  return static_cast<bool>(out);
}

// Saves a failing input of the current test as <dir>/counterexample-<suite>.<test>.npy (or .txt for bfloat16) and
// returns the line to print: the file and the detred-audit command that audits it. Called at every failure while
// RapidCheck shrinks, so the file left is the last failure found: the shrunk counterexample.
template <class T>
std::string save_counterexample(std::span<const T> x, const std::string& plugin_hint = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info ? std::string(info->test_suite_name()) + "." + info->name() : "property";
  for (char& c : name)
    if (c == '/') c = '_';
  std::string path = counterexample_directory() + "/counterexample-" + name;
  std::string audit = "detred-audit ";
  if constexpr (std::same_as<T, bfloat16>) {
    path += ".txt";
    std::ofstream out(path);
    for (const T& v : x) out << std::hexfloat << static_cast<double>(v.to_float()) << '\n';
    audit += path + " --dtype bf16";
  } else {
    path += ".npy";
    write_npy<T>(path, x);
    audit += path;
  }
  if (!plugin_hint.empty()) audit += " --plugin " + plugin_hint;
  return "counterexample saved: " + path + "  (replay: " + audit + ")";
}

}  // namespace detred::test
