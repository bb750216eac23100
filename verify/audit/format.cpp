#include "format.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace detred::audit {

namespace {
std::string special(double x) {
  if (std::isnan(x)) return "nan";
  return x > 0 ? "inf" : "-inf";
}
}  // namespace

std::string hex_string(double x) {
  if (!std::isfinite(x)) return special(x);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%a", x);
  return buffer;
}

// A float printed through double keeps its value; "%a" then shows the float's significand (at most 6 hex digits).
std::string hex_string(float x) { return hex_string(static_cast<double>(x)); }

std::string hex_string(const sum_value& x) {
  return std::visit([](auto v) { return hex_string(v); }, x);
}

template <class F>
std::string shortest(F x) {
  if (!std::isfinite(x)) return special(x);
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, x);
  return std::string(buffer, result.ptr);
}

std::string decimal_string(double x) { return shortest(x); }
std::string decimal_string(float x) { return shortest(x); }
std::string decimal_string(const sum_value& x) {
  return std::visit([](auto v) { return decimal_string(v); }, x);
}

std::string short_string(double x, int digits) {
  if (!std::isfinite(x)) return special(x);
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*e", digits - 1, x);
  return buffer;
}

double as_double(const sum_value& x) {
  return std::visit([](auto v) { return static_cast<double>(v); }, x);
}

}  // namespace detred::audit
