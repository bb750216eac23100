// detred.audit(): detred-audit's own library (verify/audit: detred_audit_core) run on an array in this process; the
// report is the tool's JSON (write_json, docs/AUDIT.md), which detred/__init__.py parses into a dict.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <sstream>

#include "common.hpp"

#ifdef DETRED_PY_HAS_AUDIT
#include "audit.hpp"
#include "json_writer.hpp"
#include "registry.hpp"
#endif

namespace detred::python {
namespace {

#ifdef DETRED_PY_HAS_AUDIT
std::string audit_json(nb::handle x, std::vector<std::string> algorithms, const std::string& device, unsigned repeat,
                       unsigned permute, bool configs, std::vector<unsigned> threads, std::uint64_t seed) {
  array_view v;
  import_array(x, "array", v);
  if (!is_floating(v.type))
    throw_type_error("array",
                     std::string("the audit reads float16, bfloat16, float32 or float64, got ") + dtype_name(v.type));
  if (v.size() == 0) throw_value_error("array", "the audit needs at least one element");
  if (device != "cpu" && device != "gpu" && device != "all")
    throw_value_error("device", "expected 'cpu', 'gpu' or 'all', got '" + device + "'");
  if (repeat == 0) throw_value_error("repeat", "must be at least 1");
  for (unsigned t : threads)
    if (t == 0 || t > 4096) throw_value_error("threads", "each thread count must be in [1, 4096]");

  audit::registry_options registry;
  registry.cpu = device != "gpu";
  registry.gpu = device != "cpu";
  registry.thread_counts = threads;
  registry.selection = algorithms;
  std::string gpu_name;
  if (registry.gpu) {
    std::string why;
    if (!audit::has_gpu_backend(&why)) throw_value_error("device", "'" + device + "': " + why);
    if (audit::gpu_device_count() == 0) throw_value_error("device", "'" + device + "': no CUDA device is visible");
    gpu_name = audit::gpu_description();
  }
  const auto known = audit::all_algorithm_names();
  for (const auto& a : algorithms) {
    bool found = false;
    for (const auto& name : known) found = found || audit::selects(a, name);
    if (!found) throw_value_error("algorithms", "unknown algorithm '" + a + "' (detred.audit_algorithms() lists them)");
  }

  audit::dataset data;
  data.source = "<python array>";
  for (int d = 0; d < v.ndim; ++d) data.shape.push_back(std::uint64_t(v.shape[d]));
  if (v.ndim == 0) data.shape.push_back(1);
  visit_float(v, "audit", [&](auto t) {
    using T = typename std::remove_cvref_t<decltype(t)>::type;
    data.values = std::vector<T>(v.as<T>(), v.as<T>() + v.size());
  });

  const audit::audit_options options{.repeat = repeat, .permute = permute, .configs = configs, .permute_seed = seed};
  std::vector<audit::input_report> reports;
  {
    nb::gil_scoped_release release;
    reports.push_back(audit::audit_dataset(data, registry, options));
  }
  if (reports.back().results.empty())
    throw_value_error("algorithms", std::string("none of them runs on a ") + dtype_name(v.type) + " array on device '" +
                                        device + "'");
  const int status = audit::any_failure(reports) ? 1 : 0;
  const audit::run_description run{.version = DETRED_PY_VERSION,
                                   .command_line = "detred.audit()",
                                   .gpu = gpu_name,
                                   .sweep = false,
                                   .exit_status = status};
  std::ostringstream out;
  audit::write_json(out, reports, run);
  return out.str();
}
#endif

}  // namespace

void bind_audit(nb::module_& m) {
  using namespace nb::literals;
#ifdef DETRED_PY_HAS_AUDIT
  m.attr("has_audit") = true;
  m.def("_audit_json", &audit_json, "array"_a.none(), "algorithms"_a, "device"_a, "repeat"_a, "permute"_a, "configs"_a,
        "threads"_a, "seed"_a);
  m.def("audit_algorithms", &audit::all_algorithm_names,
        "The stable names of every algorithm detred.audit() knows in this build (detred-audit --list-algorithms).");
#else
  m.attr("has_audit") = false;
#endif
}

}  // namespace detred::python
