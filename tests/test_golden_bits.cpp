// Golden bits: detred's canonical sums (tree, tree_neumaier) for every input/accumulation type pair, on seeded inputs
// around the CPU chunk boundary, must equal tests/golden/canonical_bits.txt bit for bit. That file was written once
// by tests/golden/make_golden.py, an independent numpy implementation of docs/ORDER.md and of Neumaier's merge from
// the paper, sharing no code with detred. Any change of a canonical bit fails here; the file is regenerated only on
// purpose, together with a bump of canonical_order_version (which this test also checks against the file).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "detred/order.hpp"
#include "detred/reduce.hpp"

namespace {

struct golden_line {
  std::string kind, input, accumulation;
  std::size_t n = 0;
  std::string method, bits;
};

struct golden_file {
  int version = -1;
  std::vector<golden_line> lines;
};

golden_file read_golden() {
  golden_file g;
  std::ifstream in(DETRED_GOLDEN_FILE);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    if (line.rfind("canonical_order_version", 0) == 0) {
      std::string key;
      fields >> key >> g.version;
      continue;
    }
    golden_line l;
    fields >> l.kind >> l.input >> l.accumulation >> l.n >> l.method >> l.bits;
    g.lines.push_back(l);
  }
  return g;
}

// make_golden.py's recipe: splitmix64, values +-m * 2^(e - p) with m < 2^p, exact in the input type.
std::uint64_t splitmix64(std::uint64_t& state) {
  state += 0x9E3779B97F4A7C15ull;
  std::uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<double> golden_values(int kind, int type_index, std::size_t n) {
  static constexpr int p[] = {11, 8, 24, 53}, lo[] = {-8, -40, -40, -60}, hi[] = {8, 40, 40, 60};
  std::uint64_t state = 1000003ull * n + 17ull * std::uint64_t(type_index) + std::uint64_t(kind);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = splitmix64(state);
    const std::uint64_t q = splitmix64(state);
    const std::uint64_t m = r >> (64 - p[type_index]);
    const int e = lo[type_index] + int(q % std::uint64_t(hi[type_index] - lo[type_index] + 1));
    const double v = std::ldexp(double(m), e - p[type_index]);
    out[i] = (r & 1) ? -v : v;
  }
  if (kind == 1) {  // "cancel": mirrored pairs, and tiny values in every 16th pair and the middle
    static constexpr int tiny_exponent[] = {-24, -120, -120, -900};
    auto tiny = [&] {
      const std::uint64_t r = splitmix64(state);
      const double v = std::ldexp(double(r >> 60), tiny_exponent[type_index]);
      return (r & 1) ? -v : v;
    };
    for (std::size_t i = 0; i < n / 2; ++i) {
      if (i % 16) {
        out[n - 1 - i] = -out[i];
      } else {
        out[i] = tiny();
        out[n - 1 - i] = tiny();
      }
    }
    if (n % 2) out[n / 2] = tiny();
  }
  return out;
}

template <class T>
std::vector<T> as_type(const std::vector<double>& v) {
  std::vector<T> out;
  out.reserve(v.size());
  for (double x : v) {
    if constexpr (std::is_same_v<T, detred::half> || std::is_same_v<T, detred::bfloat16>)
      out.push_back(T::from_float(static_cast<float>(x)));
    else
      out.push_back(static_cast<T>(x));
  }
  return out;
}

template <class A>
std::string hex_bits(A value) {
  char text[32];
  if constexpr (sizeof(A) == 4)
    std::snprintf(text, sizeof text, "%08x", unsigned(detred::bits_of(value)));
  else
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(detred::bits_of(value)));
  return text;
}

template <class A, class T>
std::string sum_bits(const std::vector<T>& data, const std::string& method, unsigned threads) {
  const auto m = method == "tree" ? detred::sum_method::tree : detred::sum_method::tree_neumaier;
  return hex_bits(detred::sum<A>(data.data(), data.size(), m, detred::cpu_options{.threads = threads}));
}

template <class T>
std::string compute(const golden_line& l, const std::vector<T>& data, unsigned threads) {
  if (l.accumulation == "f32") {
    if constexpr (std::is_same_v<T, double>)
      return "(no f64 -> f32)";
    else
      return sum_bits<float>(data, l.method, threads);
  }
  return sum_bits<double>(data, l.method, threads);
}

TEST(GoldenBits, VersionMatchesTheFile) {
  const golden_file g = read_golden();
  EXPECT_EQ(g.version, detred::canonical_order_version)
      << "canonical_order_version changed: regenerate tests/golden/canonical_bits.txt on purpose "
         "(python3 tests/golden/make_golden.py), after updating its CANONICAL_ORDER_VERSION and docs/ORDER.md";
  // Two kinds x 15 sizes x 7 type pairs x 2 methods.
  EXPECT_EQ(g.lines.size(), 420u);
}

TEST(GoldenBits, EveryCanonicalSumEqualsTheIndependentReference) {
  const golden_file g = read_golden();
  ASSERT_FALSE(g.lines.empty()) << "cannot read " << DETRED_GOLDEN_FILE;
  static const std::map<std::string, int> type_index{{"f16", 0}, {"bf16", 1}, {"f32", 2}, {"f64", 3}};
  std::size_t mismatches = 0;
  for (const auto& l : g.lines) {
    const auto values = golden_values(l.kind == "wide" ? 0 : 1, type_index.at(l.input), l.n);
    for (unsigned threads : {1u, 2u, 3u, 0u}) {
      std::string got;
      if (l.input == "f16") got = compute(l, as_type<detred::half>(values), threads);
      if (l.input == "bf16") got = compute(l, as_type<detred::bfloat16>(values), threads);
      if (l.input == "f32") got = compute(l, as_type<float>(values), threads);
      if (l.input == "f64") got = compute(l, as_type<double>(values), threads);
      if (got != l.bits && ++mismatches <= 20)
        ADD_FAILURE() << l.kind << " " << l.input << "->" << l.accumulation << " n=" << l.n << " " << l.method
                      << " threads=" << threads << ": detred gives " << got << ", the golden file " << l.bits;
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

}  // namespace
