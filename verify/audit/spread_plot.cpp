#include "spread_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace detred::audit {

namespace {

std::string num(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", x);
  return buffer;
}

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

// Symmetric log: 0 at 0, +-1 at +-1 ulp, +-2 at +-10 ulps, ...
double symlog(double ulps) { return std::copysign(std::log10(1 + std::fabs(ulps)), ulps); }

const char* color_of(determinism g) {
  switch (g) {
    case determinism::not_guaranteed:
      return "#d62728";
    case determinism::run_to_run:
      return "#ff7f0e";
    case determinism::gpu_to_gpu:
      return "#2ca02c";
    case determinism::cpu_gpu:
      return "#1f77b4";
    case determinism::exact:
      return "#000000";
  }
  return "#7f7f7f";
}

}  // namespace

void write_spread_plot(std::ostream& out, const std::vector<input_report>& reports) {
  if (reports.empty()) return;
  const input_report& r = reports.front();
  // Deterministic rows first (gpu_to_gpu and stronger: one result over runs and configurations), then the others;
  // registry order within each group.
  std::vector<const algorithm_report*> rows;
  for (const auto& a : r.results)
    if (a.guarantee >= determinism::gpu_to_gpu) rows.push_back(&a);
  const std::size_t deterministic = rows.size();
  for (const auto& a : r.results)
    if (a.guarantee < determinism::gpu_to_gpu) rows.push_back(&a);

  double reach = 1;  // the axis spans +-reach decades of (1 + |ulps|)
  for (const auto* a : rows)
    for (double u : a->distinct_ulps)
      if (std::isfinite(u)) reach = std::max(reach, std::ceil(std::fabs(symlog(u))));

  // The canvas fits its text: the left margin the longest row label, the width the title (sans-serif at 12 px is
  // at most about 7 px a character, at 15 px about 9), so no label or title is cut, however long the names.
  const std::string title = "Every distinct result over runs and configurations (" + std::string(to_string(r.dtype)) +
                            ", n = " + std::to_string(r.n) + ", " + r.source + ")";
  std::size_t longest_label = 0;
  for (const auto* a : rows)
    longest_label = std::max(longest_label, a->name.size() + std::string(to_string(a->guarantee)).size() + 3);
  const double row_h = 20, right = 150, top = 70, bottom = 60;
  const double left = std::max(250.0, 7.0 * double(longest_label) + 24);
  const double width = std::max(left + 600 + right, left + 9.0 * double(title.size()) + 20);
  const double gap = deterministic && deterministic < rows.size() ? 24 : 0;
  const double plot_h = row_h * double(rows.size()) + gap, height = top + plot_h + bottom;
  const double plot_w = width - left - right;
  auto px = [&](double ulps) {
    const double s = std::isfinite(ulps) ? std::clamp(symlog(ulps), -reach, reach) : std::copysign(reach, ulps);
    return left + plot_w * (s + reach) / (2 * reach);
  };
  auto row_y = [&](std::size_t k) { return top + row_h * (double(k) + 0.5) + (k >= deterministic ? gap : 0); };

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height)
      << "\" viewBox=\"0 0 " << num(width) << ' ' << num(height) << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << num(left) << "\" y=\"22\" font-size=\"15\">" << escape(title) << "</text>\n";
  out << "<text x=\"" << num(left)
      << "\" y=\"42\" fill=\"#555\">one dot per distinct bit pattern; right: distinct "
         "results / runs (repeats + configurations)</text>\n";

  // Ticks at 0, +-1, +-10, +-100, ... ulps.
  for (int d = -int(reach); d <= int(reach); ++d) {
    const double ulps = d == 0 ? 0 : std::copysign(std::pow(10.0, std::abs(d)) - 1, double(d));
    const double x = left + plot_w * (double(d) + reach) / (2 * reach);
    out << "<line x1=\"" << num(x) << "\" y1=\"" << num(top) << "\" x2=\"" << num(x) << "\" y2=\"" << num(top + plot_h)
        << "\" stroke=\"" << (d == 0 ? "#999" : "#e5e5e5") << "\"/>\n";
    char label[32];
    std::snprintf(label, sizeof label, "%+.0f", ulps);
    out << "<text x=\"" << num(x) << "\" y=\"" << num(top + plot_h + 16) << "\" text-anchor=\"middle\">"
        << (d == 0 ? "0" : label) << "</text>\n";
  }
  out << "<text x=\"" << num(left + plot_w / 2) << "\" y=\"" << num(height - 22)
      << "\" text-anchor=\"middle\">signed error in ulps of the exact sum (row's accumulation type), symmetric log "
         "scale</text>\n";
  if (gap > 0) {
    const double y = top + row_h * double(deterministic) + gap / 2;
    out << "<line x1=\"10\" y1=\"" << num(y) << "\" x2=\"" << num(width - 10) << "\" y2=\"" << num(y)
        << "\" stroke=\"#444\" stroke-dasharray=\"4,3\"/>\n";
    out << "<text x=\"10\" y=\"" << num(top - 6) << "\" font-weight=\"bold\">deterministic (one result)</text>\n";
    out << "<text x=\"10\" y=\"" << num(y + 14)
        << "\" font-weight=\"bold\">no bitwise promise across runs or "
           "configurations</text>\n";
  }

  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto& a = *rows[k];
    const double y = row_y(k) + (k < deterministic || gap == 0 ? 0 : 8);
    const char* color = color_of(a.guarantee);
    if (k % 2 == 0)
      out << "<rect x=\"" << num(left) << "\" y=\"" << num(y - row_h / 2) << "\" width=\"" << num(plot_w)
          << "\" height=\"" << num(row_h) << "\" fill=\"#f7f7f7\"/>\n";
    out << "<text x=\"" << num(left - 8) << "\" y=\"" << num(y + 4) << "\" text-anchor=\"end\">"
        << escape(a.name + " (" + std::string(to_string(a.guarantee)) + ")") << "</text>\n";
    out << "<g><title>" << escape(a.name) << "</title>\n";
    for (double u : a.distinct_ulps)
      out << "<circle cx=\"" << num(px(u)) << "\" cy=\"" << num(y) << "\" r=\"4\" fill=\"" << color
          << "\" fill-opacity=\"0.6\"/>\n";
    out << "</g>\n";
    const std::uint64_t runs = a.repeat.runs + (a.configs.runs ? a.configs.runs - 1 : 0);
    out << "<text x=\"" << num(left + plot_w + 8) << "\" y=\"" << num(y + 4) << "\" fill=\"" << color << "\">"
        << a.distinct_ulps.size() << " / " << runs << "</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace detred::audit
