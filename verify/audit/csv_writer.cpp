#include "csv_writer.hpp"

#include <string>

#include "format.hpp"

namespace detred::audit {

namespace {

std::string field(const std::string& text) {
  if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string count(const spread& s, bool distinct) {
  if (s.runs == 0) return "";
  return std::to_string(distinct ? s.distinct : s.runs);
}

}  // namespace

void write_csv(std::ostream& out, const std::vector<input_report>& reports) {
  out << "source,dtype,n,condition_number,condition_number_hex,algorithm,device,accumulation,guarantee,value,value_hex,"
         "abs_error,abs_error_hex,rel_error,ulps,correctly_rounded,bound,bound_hex,within_bound,time_s,throughput_gbs,"
         "repeat_runs,repeat_distinct,configs_runs,configs_distinct,permute_runs,permute_distinct,"
         "permute_max_abs_error,matches_twin,failures\n";
  for (const auto& r : reports) {
    for (const auto& a : r.results) {
      std::string failures;
      for (const auto& f : a.failures) failures += (failures.empty() ? "" : "; ") + f;
      out << field(r.source) << ',' << to_string(r.dtype) << ',' << r.n << ',' << decimal_string(r.condition_number)
          << ',' << hex_string(r.condition_number) << ',' << a.name << ',' << a.device << ','
          << to_string(a.accumulation) << ',' << to_string(a.guarantee) << ',' << decimal_string(a.value) << ','
          << hex_string(a.value) << ',' << decimal_string(a.error.absolute) << ',' << hex_string(a.error.absolute)
          << ',' << decimal_string(a.error.relative) << ',' << decimal_string(a.error.ulps) << ','
          << (a.error.exact_match ? "true" : "false") << ',' << decimal_string(a.bound) << ',' << hex_string(a.bound)
          << ',' << (a.within_bound ? (*a.within_bound ? "true" : "false") : "") << ','
          << decimal_string(a.median_seconds) << ',' << decimal_string(a.throughput_gbs) << ','
          << count(a.repeat, false) << ',' << count(a.repeat, true) << ',' << count(a.configs, false) << ','
          << count(a.configs, true) << ',' << count(a.permute, false) << ',' << count(a.permute, true) << ','
          << (a.permute.runs ? decimal_string(a.permute_max_abs_error) : "") << ','
          << (a.matches_twin ? (*a.matches_twin ? "true" : "false") : "") << ',' << field(failures) << '\n';
    }
  }
}

}  // namespace detred::audit
