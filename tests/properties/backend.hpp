// The backends the property suites run against. A property is written once, as a template over a Backend, and each
// test program instantiates it for the backends it has: test_properties_cpu for cpu_backend (label cpu, in CI),
// test_properties_cuda for cuda_backend (label gpu, cuda_backend.hpp).
//
// A Backend provides:
//   static constexpr const char* name;
//   static bool available();                        // false: every test of the suite is skipped, saying why
//   static std::string unavailable_reason();
//   static bool supports(sum_method);               // the methods it implements
//   struct config;                                  // how one call is run (threads, launch shape, alignment): never
//                                                   // changes a bit, which is what the properties check
//   static rc::Gen<config> configs();               // random configurations, shown in counterexamples
//   template <class A, class T> static A sum(std::span<const T>, sum_method, const config&);
#pragma once

#include <rapidcheck.h>

#include <ostream>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "detred/reduce.hpp"
#include "detred/scan.hpp"
#include "detred/sum_method.hpp"

namespace detred::test {

struct cpu_backend {
  static constexpr const char* name = "cpu";
  static bool available() { return true; }
  static std::string unavailable_reason() { return {}; }
  static bool supports(sum_method) { return true; }

  struct config {
    unsigned threads = 1;
  };
  // 1 to 16 worker threads (more threads than chunks is allowed and must not matter).
  static rc::Gen<config> configs() {
    return rc::gen::map(rc::gen::inRange(1u, 17u), [](unsigned threads) { return config{threads}; });
  }

  template <class A, class T>
  static A sum(std::span<const T> x, sum_method method, const config& c) {
    return detred::sum<A>(x.data(), x.size(), method, cpu_options{c.threads});
  }

  // The rest of reduce.hpp and scan.hpp (the CUDA backend has none of these yet: ReductionProperties is instantiated
  // for the CPU only).
  template <class A, class T>
  static A product(std::span<const T> x, const config& c) {
    return detred::product<A>(x.data(), x.size(), cpu_options{c.threads});
  }
  template <class T>
  static T min(std::span<const T> x) {
    return detred::min(x.data(), x.size());
  }
  template <class T>
  static T max(std::span<const T> x) {
    return detred::max(x.data(), x.size());
  }
  template <class T>
  static std::size_t argmin(std::span<const T> x) {
    return detred::argmin(x.data(), x.size());
  }
  template <class T>
  static std::size_t argmax(std::span<const T> x) {
    return detred::argmax(x.data(), x.size());
  }
  template <class V, class Op>
  static V reduce(std::span<const V> x, V identity, Op op, const config& c) {
    return detred::reduce(x.data(), x.size(), std::move(identity), op, cpu_options{c.threads});
  }
  template <class V, class Op>
  static std::vector<V> inclusive_scan(std::span<const V> x, Op op, const config& c) {
    std::vector<V> out(x.size());
    detred::inclusive_scan(x.data(), out.data(), x.size(), op, cpu_options{c.threads});
    return out;
  }
  template <class V, class Op>
  static std::vector<V> exclusive_scan(std::span<const V> x, V identity, Op op, const config& c) {
    std::vector<V> out(x.size());
    detred::exclusive_scan(x.data(), out.data(), x.size(), std::move(identity), op, cpu_options{c.threads});
    return out;
  }
  template <class A, class T>
  static std::vector<A> inclusive_sum_scan(std::span<const T> x, const config& c) {
    std::vector<A> out(x.size());
    detred::inclusive_sum_scan<A>(x.data(), out.data(), x.size(), cpu_options{c.threads});
    return out;
  }
  template <class A, class T>
  static std::vector<A> exclusive_sum_scan(std::span<const T> x, const config& c) {
    std::vector<A> out(x.size());
    detred::exclusive_sum_scan<A>(x.data(), out.data(), x.size(), cpu_options{c.threads});
    return out;
  }
};

inline void showValue(const cpu_backend::config& c, std::ostream& os) {
  os << "cpu_options{.threads = " << c.threads << "}";
}

}  // namespace detred::test
