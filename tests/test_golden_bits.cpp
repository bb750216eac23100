// Golden bits: detred's canonical sums (tree, tree_neumaier) for every input/accumulation type pair, on seeded inputs
// around the CPU chunk boundary, must equal tests/golden/canonical_bits.txt bit for bit; every other canonical family
// (product, dot, nrm2, asum, a generic reduce, sum scans, rows, columns, norms) must equal
// tests/golden/canonical_families.txt (make_golden_families.py, the same kind of independent reference). That file was
// written once by tests/golden/make_golden.py, an independent numpy implementation of docs/ORDER.md and of Neumaier's
// merge from the paper, sharing no code with detred. Any change of a canonical bit fails here; the file is regenerated
// only on purpose, together with a bump of canonical_order_version (which this test also checks against the file).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "detred/blas.hpp"
#include "detred/norms.hpp"
#include "detred/order.hpp"
#include "detred/reduce.hpp"
#include "detred/rows.hpp"
#include "detred/scan.hpp"

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

// ---- Every other canonical family (tests/golden/canonical_families.txt, tests/golden/make_golden_families.py) ----

// make_golden_families.py's splitmix_values: "unit" values +-m 2^(e-p), e in [-4, 3]; "factor" values with the top
// significand bit set and e in {0, 1}. Exact in the input type (p significand bits).
std::vector<double> family_values(int type_index, std::size_t n, int salt, bool factor) {
  static constexpr int p[] = {11, 8, 24, 53};
  std::uint64_t state = 7777777ull * n + 131ull * std::uint64_t(type_index) + 1009ull * std::uint64_t(salt);
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint64_t r = splitmix64(state);
    const std::uint64_t q = splitmix64(state);
    std::uint64_t m = r >> (64 - p[type_index]);
    int e = -4 + int(q % 8);
    if (factor) {
      m |= std::uint64_t{1} << (p[type_index] - 1);
      e = int(q & 1);
    }
    const double v = std::ldexp(double(m), e - p[type_index]);
    out[i] = (r & 1) ? -v : v;
  }
  return out;
}

template <class V>
std::string hex_list(const std::vector<V>& values) {
  std::string s;
  for (const V& v : values) {
    if (!s.empty()) s += ',';
    if constexpr (std::is_same_v<V, detred::bfloat16>) {
      char text[8];
      std::snprintf(text, sizeof text, "%04x", unsigned(detred::bits_of(v)));
      s += text;
    } else {
      s += hex_bits(v);
    }
  }
  return s;
}

using line_map = std::map<std::string, std::string>;
void put(line_map& m, const std::string& family, const char* in, const char* acc, const std::string& c,
         const std::string& output, const std::string& bits) {
  m[family + " " + in + " " + acc + " " + c + " " + output] = bits;
}

constexpr const char* type_names[] = {"f16", "bf16", "f32", "f64"};
constexpr std::size_t family_sizes[] = {1, 2, 3, 5, 100, 1023, 4097, 65537};

template <class A, class T>
void blas_family_lines(line_map& m, int t, const char* acc) {
  for (std::size_t n : family_sizes) {
    const std::string c = "n=" + std::to_string(n);
    const auto x = as_type<T>(family_values(t, n, 1, false)), y = as_type<T>(family_values(t, n, 2, false));
    const auto f = as_type<T>(family_values(t, n, 3, true)), w = as_type<T>(golden_values(0, t, n));
    for (unsigned threads : {1u, 3u}) {
      const detred::cpu_options o{.threads = threads};
      const std::string suffix = threads == 1 ? "" : " (3 threads)";
      put(m, "product" + suffix, type_names[t], acc, c, "value", hex_bits(detred::product<A>(f.data(), n, o)));
      put(m, "dot" + suffix, type_names[t], acc, c, "value", hex_bits(detred::dot<A>(x.data(), y.data(), n, o)));
      put(m, "asum" + suffix, type_names[t], acc, c, "value", hex_bits(detred::asum<A>(x.data(), n, o)));
      put(m, "nrm2" + suffix, type_names[t], acc, c, "value", hex_bits(detred::nrm2<A>(w.data(), n, o)));
      if constexpr (std::is_same_v<T, A> || (std::is_same_v<T, float> && std::is_same_v<A, double>)) {
        const A r = detred::transform_reduce(
            x.data(), n, A(-0.0), [](A l, A r) { return (l * A(0.75)) + r; }, [](T v) { return A(v); }, o);
        put(m, "reduce_affine" + suffix, type_names[t], acc, c, "value", hex_bits(r));
      }
    }
  }
  for (std::size_t n : {std::size_t{1000}, std::size_t{65537}, std::size_t{131073}}) {
    const auto x = as_type<T>(golden_values(0, t, n));
    std::vector<A> out(n);
    detred::inclusive_sum_scan<A>(x.data(), out.data(), n, detred::cpu_options{.threads = 2});
    std::vector<A> at;
    for (std::size_t k : {std::size_t{0}, std::size_t{1}, std::size_t{6}, std::size_t{999}, n - 1})
      at.push_back(out[k]);
    put(m, "inclusive_sum_scan", type_names[t], acc, "n=" + std::to_string(n), "at=0/1/6/999/" + std::to_string(n - 1),
        hex_list(at));
  }
}

template <class T>
void row_family_lines(line_map& m, int t) {
  using namespace detred;
  const std::vector<std::int32_t> lengths = {1, 2, 3, 7, 64, 300, 1025};
  const std::uint64_t stride = 1028;
  const auto x = as_type<T>(family_values(t, lengths.size() * stride, 4, false));
  const row_shape shape{lengths.size(), 1025, stride, lengths.data(), 0};
  std::vector<float> a(lengths.size()), b(lengths.size());
  const std::string c = "lengths=1/2/3/7/64/300/1025";
  row_sum(x.data(), a.data(), shape, sum_method::tree);
  put(m, "row_sum_tree", type_names[t], "f32", c, "value", hex_list(a));
  row_sum(x.data(), a.data(), shape, sum_method::tree_neumaier);
  put(m, "row_sum_tree_neumaier", type_names[t], "f32", c, "value", hex_list(a));
  row_max(x.data(), a.data(), shape);
  put(m, "row_max", type_names[t], "f32", c, "value", hex_list(a));
  row_mean_variance(x.data(), a.data(), b.data(), shape);
  put(m, "row_mean", type_names[t], "f32", c, "value", hex_list(a));
  put(m, "row_variance", type_names[t], "f32", c, "value", hex_list(b));
  row_logsumexp(x.data(), a.data(), shape);
  put(m, "row_logsumexp", type_names[t], "f32", c, "value", hex_list(a));
  for (auto [rows, cols, st] : {std::array<std::uint64_t, 3>{3, 65, 67}, std::array<std::uint64_t, 3>{1000, 130, 131},
                                std::array<std::uint64_t, 3>{4099, 7, 9}}) {
    const auto v = as_type<T>(family_values(t, rows * st, 5, false));
    std::vector<float> out(cols);
    column_sum(v.data(), out.data(), row_shape{rows, cols, st});
    put(m, "column_sum", type_names[t], "f32",
        c.substr(0, 0) + std::to_string(rows) + "x" + std::to_string(cols) + "/stride=" + std::to_string(st), "value",
        hex_list(out));
  }
}

template <class T>
void norm_family_lines(line_map& m, int t) {
  using namespace detred;
  for (std::uint64_t c : {7u, 64u, 300u}) {
    const std::uint64_t rows = 3;
    const std::string cs = "3x" + std::to_string(c);
    const auto x = as_type<T>(family_values(t, rows * c, 6, false)), w = as_type<T>(family_values(t, c, 7, false)),
               b = as_type<T>(family_values(t, c, 8, false)), dy = as_type<T>(family_values(t, rows * c, 9, false));
    std::vector<T> out(rows * c), dx(rows * c);
    std::vector<float> mean(rows), rstd(rows), dweight(c);
    layernorm_forward(x.data(), w.data(), b.data(), out.data(), mean.data(), rstd.data(), dense_rows(rows, c));
    put(m, "layernorm_forward", type_names[t], "f32", cs, "out", hex_list(out));
    put(m, "layernorm_forward", type_names[t], "f32", cs, "mean", hex_list(mean));
    put(m, "layernorm_forward", type_names[t], "f32", cs, "rstd", hex_list(rstd));
    rmsnorm_forward(x.data(), w.data(), out.data(), rstd.data(), dense_rows(rows, c));
    put(m, "rmsnorm_forward", type_names[t], "f32", cs, "out", hex_list(out));
    put(m, "rmsnorm_forward", type_names[t], "f32", cs, "rstd", hex_list(rstd));
    rmsnorm_backward(dy.data(), x.data(), w.data(), rstd.data(), dx.data(), dweight.data(), dense_rows(rows, c));
    put(m, "rmsnorm_backward", type_names[t], "f32", cs, "dx", hex_list(dx));
    put(m, "rmsnorm_backward", type_names[t], "f32", cs, "dweight", hex_list(dweight));
    softmax_forward(x.data(), out.data(), dense_rows(rows, c));
    put(m, "softmax_forward", type_names[t], "f32", cs, "out", hex_list(out));
  }
}

TEST(GoldenBits, EveryOtherCanonicalFamilyEqualsTheIndependentReference) {
  std::string path = DETRED_GOLDEN_FILE;
  path.replace(path.rfind("canonical_bits.txt"), std::string("canonical_bits.txt").size(), "canonical_families.txt");
  std::ifstream in(path);
  ASSERT_TRUE(in) << "cannot read " << path;
  line_map golden;
  int version = -1;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (line.rfind("canonical_order_version", 0) == 0) {
      version = std::stoi(line.substr(24));
      continue;
    }
    const std::size_t last = line.rfind(' ');
    golden[line.substr(0, last)] = line.substr(last + 1);
  }
  EXPECT_EQ(version, detred::canonical_order_version) << "regenerate " << path << " only with a version bump";
  line_map got;
  blas_family_lines<float, detred::half>(got, 0, "f32");
  blas_family_lines<double, detred::half>(got, 0, "f64");
  blas_family_lines<float, detred::bfloat16>(got, 1, "f32");
  blas_family_lines<double, detred::bfloat16>(got, 1, "f64");
  blas_family_lines<float, float>(got, 2, "f32");
  blas_family_lines<double, float>(got, 2, "f64");
  blas_family_lines<double, double>(got, 3, "f64");
  row_family_lines<detred::half>(got, 0);
  row_family_lines<detred::bfloat16>(got, 1);
  row_family_lines<float>(got, 2);
  norm_family_lines<float>(got, 2);
  norm_family_lines<detred::bfloat16>(got, 1);
  std::size_t mismatches = 0, checked = 0;
  for (const auto& [key, bits] : got) {
    // The same family at 3 threads must give the golden line of 1 thread.
    std::string golden_key = key;
    if (const auto at = golden_key.find(" (3 threads)"); at != std::string::npos) golden_key.erase(at, 12);
    const auto it = golden.find(golden_key);
    if (it == golden.end()) {
      ADD_FAILURE() << "no golden line for '" << golden_key << "'";
      continue;
    }
    ++checked;
    if (it->second != bits && ++mismatches <= 20)
      ADD_FAILURE() << key << ": detred gives " << bits.substr(0, 200) << ", the golden file "
                    << it->second.substr(0, 200);
  }
  EXPECT_EQ(mismatches, 0u);
  for (const auto& [key, bits] : golden) EXPECT_TRUE(got.count(key)) << "golden line '" << key << "' was not computed";
  EXPECT_GE(checked, golden.size());
}

}  // namespace
