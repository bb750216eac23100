#include "json_writer.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

#include "format.hpp"

namespace detred::audit {

namespace {

using json = nlohmann::ordered_json;  // keys in the order written: facts first, as docs/AUDIT.md lists them

// A double as a JSON number (null when not finite: JSON has no Inf or NaN) and, under key + "_hex", exactly.
void put(json& object, const std::string& key, double value) {
  object[key] = std::isfinite(value) ? json(value) : json(nullptr);
  object[key + "_hex"] = hex_string(value);
}

void put_value(json& object, const std::string& key, const sum_value& value) {
  object[key] = std::isfinite(as_double(value)) ? json(as_double(value)) : json(nullptr);
  object[key + "_decimal"] = decimal_string(value);
  object[key + "_hex"] = hex_string(value);
}

json spread_json(const spread& s) {
  if (s.runs == 0) return nullptr;
  return json{{"runs", s.runs}, {"distinct", s.distinct}};
}

json result_json(const algorithm_report& r) {
  json j;
  j["algorithm"] = r.name;
  j["device"] = r.device;
  j["method"] = r.method;
  j["accumulation"] = std::string(to_string(r.accumulation));
  j["guarantee"] = std::string(to_string(r.guarantee));
  put_value(j, "value", r.value);
  put(j, "abs_error", r.error.absolute);
  put(j, "rel_error", r.error.relative);
  put(j, "ulps", r.error.ulps);
  j["correctly_rounded"] = r.error.exact_match;
  put(j, "bound", r.bound);
  put(j, "rel_bound", r.relative_bound);
  j["within_bound"] = r.within_bound ? json(*r.within_bound) : json(nullptr);
  put(j, "time_s", r.median_seconds);
  put(j, "throughput_gbs", r.throughput_gbs);
  j["repeat"] = spread_json(r.repeat);
  j["configs"] = spread_json(r.configs);
  if (r.configs.runs) j["configs"]["labels"] = r.config_labels;
  j["permute"] = spread_json(r.permute);
  if (r.permute.runs) put(j["permute"], "max_abs_error", r.permute_max_abs_error);
  j["twin"] = r.twin.empty() ? json(nullptr) : json(r.twin);
  j["matches_twin"] = r.matches_twin ? json(*r.matches_twin) : json(nullptr);
  j["failures"] = r.failures;
  j["not_checked"] = r.not_checked;
  return j;
}

}  // namespace

void write_json(std::ostream& out, const std::vector<input_report>& reports, const run_description& run) {
  json root;
  root["tool"] = "detred-audit";
  root["schema"] = 1;
  root["detred_version"] = run.version;
  root["command_line"] = run.command_line;
  root["gpu"] = run.gpu.empty() ? json(nullptr) : json(run.gpu);
  root["sweep"] = run.sweep;
  root["exit_status"] = run.exit_status;
  json inputs = json::array();
  for (const auto& r : reports) {
    json in;
    in["source"] = r.source;
    in["dtype"] = std::string(to_string(r.dtype));
    in["shape"] = r.shape;
    in["n"] = r.n;
    if (r.target_condition) put(in, "target_condition", *r.target_condition);
    put(in, "sum_abs", r.sum_of_magnitudes);
    put(in, "condition_number", r.condition_number);
    in["finite"] = r.finite;
    in["exact_sum_decimal"] = r.exact_decimal;
    json rounded;
    put(rounded, "f64", r.rounded_f64);
    if (r.rounded_f32) {
      rounded["f32"] = std::isfinite(*r.rounded_f32) ? json(double(*r.rounded_f32)) : json(nullptr);
      rounded["f32_hex"] = hex_string(*r.rounded_f32);
    }
    in["correctly_rounded"] = rounded;
    json results = json::array();
    for (const auto& a : r.results) results.push_back(result_json(a));
    in["results"] = results;
    inputs.push_back(in);
  }
  root["inputs"] = inputs;
  // Invalid UTF-8 in a file name must not make the output unparsable: replace it.
  out << root.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
}

}  // namespace detred::audit
