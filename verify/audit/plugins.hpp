// Users' own algorithms in the audit: `detred-audit --plugin libmine.so` loads shared libraries through the C ABI of
// include/detred/audit_plugin.h and adds their algorithms to the registry as rows "plugin/<name>" (docs/AUDIT.md,
// "Auditing your own sums"), audited with the same rules as detred's own.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "algorithms.hpp"

namespace detred::audit {

// A plugin that cannot be used; what() is the one line the tool prints before exiting with status 2.
struct plugin_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Loads each library (dlopen), checks its ABI version, symbols, names, guarantees, bounds and configuration counts,
// and keeps its algorithms for append_plugin_algorithms. Throws plugin_error for the first bad plugin. Libraries stay
// loaded until the process ends.
void load_plugins(const std::vector<std::string>& paths);

// Throws plugin_error when a loaded plugin's twin is not one of `known` (every row name: all_algorithm_names()), so
// that a cpu_gpu promise always has a row to be checked against.
void check_plugin_twins(const std::vector<std::string>& known);

// Appends the loaded plugins' algorithms that support inputs of type T (nothing when no plugin was loaded).
template <floating_input T>
void append_plugin_algorithms(std::vector<algorithm<T>>& table);

// The row names of every loaded plugin algorithm, for every input type, without repeats.
std::vector<std::string> plugin_algorithm_names();

}  // namespace detred::audit
