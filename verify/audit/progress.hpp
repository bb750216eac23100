// A progress indicator on stderr: a line redrawn in place when stderr is a terminal; otherwise (a log file, CI) one
// line every few seconds, and only once the run has taken long enough to need it. Never on stdout.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace detred::audit {

class progress_indicator {
 public:
  explicit progress_indicator(bool enabled);
  ~progress_indicator();
  progress_indicator(const progress_indicator&) = delete;
  progress_indicator& operator=(const progress_indicator&) = delete;

  // Reports that `done` of `total` steps of the current phase are finished; `what` names the last one.
  void update(const std::string& phase, std::uint64_t done, std::uint64_t total, const std::string& what);
  // Clears the line (terminal) before other output goes to stderr or the run ends.
  void clear();

 private:
  bool enabled_;
  bool terminal_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace detred::audit
