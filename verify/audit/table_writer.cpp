#include "table_writer.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "format.hpp"

namespace detred::audit {

namespace {

std::string pad(const std::string& text, std::size_t width) {
  return text.size() >= width ? text : text + std::string(width - text.size(), ' ');
}

std::string shape_string(const std::vector<std::uint64_t>& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::string spread_cell(const spread& s) {
  if (s.runs <= 1) return "-";
  return std::to_string(s.distinct) + "/" + std::to_string(s.runs);
}

std::string time_cell(double seconds) {
  char buffer[32];
  if (seconds <= 0) return "-";
  if (seconds < 1e-3)
    std::snprintf(buffer, sizeof buffer, "%.1fus", seconds * 1e6);
  else if (seconds < 1)
    std::snprintf(buffer, sizeof buffer, "%.2fms", seconds * 1e3);
  else
    std::snprintf(buffer, sizeof buffer, "%.2fs", seconds);
  return buffer;
}

std::string throughput_cell(double gbs) {
  if (gbs <= 0) return "-";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", gbs);
  return buffer;
}

std::string bound_cell(const algorithm_report& a) {
  if (!a.within_bound) return "-";
  return *a.within_bound ? "yes" : "NO";
}

}  // namespace

void write_table(std::ostream& out, const std::vector<input_report>& reports) {
  for (const auto& r : reports) {
    out << "input        " << printable(r.source) << '\n';
    out << "values       n = " << r.n << ", dtype " << to_string(r.dtype) << ", shape " << shape_string(r.shape)
        << (r.finite ? "" : ", with NaN or Inf") << '\n';
    out << "sum|x|       " << decimal_string(r.sum_of_magnitudes) << "  (" << hex_string(r.sum_of_magnitudes) << ")\n";
    out << "condition    "
        << (std::isnan(r.condition_number) ? std::string("undefined (NaN or Inf input)")
                                           : short_string(r.condition_number, 3));
    if (r.target_condition) out << "  (asked for " << short_string(*r.target_condition, 2) << ")";
    out << '\n';
    out << "exact sum    " << r.exact_decimal << '\n';
    out << "rounded f64  " << decimal_string(r.rounded_f64) << "  (" << hex_string(r.rounded_f64) << ")\n";
    if (r.rounded_f32)
      out << "rounded f32  " << decimal_string(*r.rounded_f32) << "  (" << hex_string(*r.rounded_f32) << ")\n";
    out << '\n';

    std::vector<std::pair<std::string, std::size_t>> columns = {
        {"algorithm", 22}, {"acc", 4},    {"guarantee", 14}, {"value", 25}, {"hex-float", 24},
        {"rel.error", 10}, {"ulps", 9},   {"rel.bound", 9},  {"in", 4},     {"time", 9},
        {"GB/s", 7},       {"repeat", 7}, {"configs", 8},    {"orders", 7}};
    for (const auto& a : r.results) columns[0].second = std::max(columns[0].second, a.name.size());  // long names
    bool any_twin = false;
    for (const auto& a : r.results) any_twin = any_twin || !a.twin.empty();
    std::string header;
    for (const auto& [name, width] : columns) header += pad(name, width + 1);
    if (any_twin) header += "=cpu";
    while (!header.empty() && header.back() == ' ') header.pop_back();
    out << header << '\n';
    for (const auto& a : r.results) {
      const std::vector<std::string> cells = {a.name,
                                              std::string(to_string(a.accumulation)),
                                              std::string(to_string(a.guarantee)),
                                              decimal_string(a.value),
                                              hex_string(a.value),
                                              short_string(a.error.relative, 2),
                                              short_string(a.error.ulps, 2),
                                              short_string(a.relative_bound, 2),
                                              bound_cell(a),
                                              time_cell(a.median_seconds),
                                              throughput_cell(a.throughput_gbs),
                                              spread_cell(a.repeat),
                                              spread_cell(a.configs),
                                              spread_cell(a.permute)};
      std::string line;
      for (std::size_t i = 0; i < cells.size(); ++i) line += pad(cells[i], columns[i].second + 1);
      if (any_twin && a.matches_twin) line += *a.matches_twin ? "yes" : "NO";
      while (!line.empty() && line.back() == ' ') line.pop_back();
      out << line << '\n';
    }
    out << '\n';
    std::size_t broken = 0;
    for (const auto& a : r.results)
      for (const auto& f : a.failures) {
        out << "FAIL " << a.name << ": " << f << '\n';
        ++broken;
      }
    std::size_t unchecked = 0;
    for (const auto& a : r.results)
      for (const auto& n : a.not_checked) {
        out << "NOT CHECKED " << a.name << ": " << n << '\n';
        ++unchecked;
      }
    for (const auto& a : r.results)
      if (a.within_bound == false)
        out << "note " << a.name << ": error " << short_string(a.error.absolute) << " exceeds the a-priori bound "
            << short_string(a.bound) << " (please report: detred documents this bound)\n";
    if (broken == 0 && unchecked == 0)
      out << "every promise kept: each deterministic algorithm gave one bit pattern\n";
    else if (broken == 0)
      out << "every checked promise kept; " << unchecked << " not checked (above)\n";
    out << '\n';
  }
  if (!reports.empty()) {
    out << "repeat, configs, orders: distinct bit patterns / runs (orders: the input's and --permute random ones);\n"
           "in: error within the a-priori bound; ulps of the correctly rounded sum in the accumulation type.\n";
  }
}

void write_sweep_table(std::ostream& out, const std::vector<input_report>& reports) {
  if (reports.empty()) return;
  out << "relative error by condition number (" << to_string(reports.front().dtype) << ", n = " << reports.front().n
      << ")\n\n";
  std::string header = pad("condition", 10);
  for (const auto& a : reports.front().results) header += pad(a.name, std::max<std::size_t>(a.name.size(), 9) + 1);
  while (!header.empty() && header.back() == ' ') header.pop_back();
  out << header << '\n';
  for (const auto& r : reports) {
    std::string line = pad(short_string(r.condition_number, 2), 10);
    for (const auto& a : r.results)
      line += pad(short_string(a.error.relative, 2), std::max<std::size_t>(a.name.size(), 9) + 1);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << '\n';
  }
  out << '\n';
  for (const auto& r : reports)
    for (const auto& a : r.results)
      for (const auto& f : a.failures)
        out << "FAIL " << a.name << " at condition " << short_string(r.condition_number) << ": " << f << '\n';
  for (const auto& r : reports)
    for (const auto& a : r.results)
      for (const auto& n : a.not_checked)
        out << "NOT CHECKED " << a.name << " at condition " << short_string(r.condition_number) << ": " << n << '\n';
}

}  // namespace detred::audit
