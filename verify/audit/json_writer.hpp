// The audit as JSON (--json): every number that matters also as an exact C99 hex-float string under a key ending in
// "_hex", since JSON numbers lose Inf and NaN and most parsers read them as doubles. Keys and names: docs/AUDIT.md.
// Written with nlohmann-json, which guarantees well-formed output and escapes file names and messages correctly.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "report.hpp"

namespace detred::audit {

struct run_description {
  std::string version;       // detred's version
  std::string command_line;  // as given
  std::string gpu;           // the device's description, or ""
  bool sweep = false;
  int exit_status = 0;
};

void write_json(std::ostream& out, const std::vector<input_report>& reports, const run_description& run);

}  // namespace detred::audit
