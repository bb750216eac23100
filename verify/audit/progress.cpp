#include "progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace detred::audit {

namespace {
constexpr auto terminal_interval = std::chrono::milliseconds(100);
constexpr auto log_delay = std::chrono::seconds(5);  // a run shorter than this prints nothing to a non-terminal
constexpr auto log_interval = std::chrono::seconds(10);
}  // namespace

progress_indicator::progress_indicator(bool enabled)
    : enabled_(enabled),
      terminal_(isatty(STDERR_FILENO) != 0),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

progress_indicator::~progress_indicator() { clear(); }

void progress_indicator::update(const std::string& phase, std::uint64_t done, std::uint64_t total,
                                const std::string& what) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const bool finished = done == total;
  if (terminal_) {
    if (now - last_ < terminal_interval && !finished) return;
    std::fprintf(stderr, "\r\033[K%s [%llu/%llu] %s", phase.c_str(), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total), what.c_str());
    drawn_ = true;
  } else {
    if (now - start_ < log_delay || (now - last_ < log_interval && !finished)) return;
    std::fprintf(stderr, "detred-audit: %s [%llu/%llu] %s\n", phase.c_str(), static_cast<unsigned long long>(done),
                 static_cast<unsigned long long>(total), what.c_str());
  }
  std::fflush(stderr);
  last_ = now;
}

void progress_indicator::clear() {
  if (drawn_) {
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    drawn_ = false;
  }
}

}  // namespace detred::audit
