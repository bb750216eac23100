// Exceptions thrown at detred's API boundary. Library code never calls exit() and never ignores an error code.
#pragma once

#include <stdexcept>
#include <string>

namespace detred {

// A call was made with arguments that violate its contract (null data with n > 0, mismatched sizes, ...).
class invalid_argument : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

namespace detail {
[[noreturn]] inline void throw_invalid(const char* function, const std::string& what) {
  throw invalid_argument(std::string("detred::") + function + ": " + what);
}
}  // namespace detail

}  // namespace detred
