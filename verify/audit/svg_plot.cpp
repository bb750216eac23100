#include "svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <map>
#include <set>
#include <string>

namespace detred::audit {

namespace {

// The smallest canvas and right margin (the legend's); write_svg_plot widens both to fit the longest name and the
// title (sans-serif at 12 px is at most about 7 px a character, at 15 px about 9).
constexpr double min_width = 900, height = 560;
constexpr double left = 80, min_right = 220, top = 40, bottom = 60;

const char* const palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
                               "#e377c2", "#17becf", "#7f7f7f", "#bcbd22", "#000000", "#aec7e8"};

std::string number(double x) {
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

}  // namespace

void write_svg_plot(std::ostream& out, const std::vector<input_report>& sweep) {
  const std::string title = sweep.empty() ? std::string("detred-audit sweep")
                                          : "Relative error of each sum vs condition number (" +
                                                std::string(to_string(sweep.front().dtype)) +
                                                ", n = " + std::to_string(sweep.front().n) + ")";
  std::size_t longest_name = 0;
  if (!sweep.empty())
    for (const auto& a : sweep.front().results) longest_name = std::max(longest_name, a.name.size());
  const double right = std::max(min_right, 46 + 7.0 * double(longest_name) + 10);
  const double width = std::max({min_width - min_right + right, left + 9.0 * double(title.size()) + 20});
  // Axes in decades. Errors of exactly 0 are drawn on a band below the lowest decade, labelled "0".
  double x_max_decade = 1, y_min_decade = -17, y_max_decade = 0;
  for (const auto& r : sweep) {
    if (std::isfinite(r.condition_number) && r.condition_number > 0)
      x_max_decade = std::max(x_max_decade, std::ceil(std::log10(r.condition_number)));
    for (const auto& a : r.results) {
      const double e = a.error.relative;
      if (e > 0 && std::isfinite(e)) {
        y_min_decade = std::min(y_min_decade, std::floor(std::log10(e)));
        y_max_decade = std::max(y_max_decade, std::ceil(std::log10(e)));
      }
    }
  }
  const double zero_band = y_min_decade - 1.5;  // where exact results go, clear of the lowest tick
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto px = [&](double decade) { return left + plot_w * decade / x_max_decade; };
  auto py = [&](double decade) { return top + plot_h * (y_max_decade - decade) / (y_max_decade - zero_band); };
  auto y_of = [&](double e) {
    if (!(e > 0)) return py(zero_band);
    if (!std::isfinite(e)) return py(y_max_decade);
    return py(std::log10(e));
  };

  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << number(width) << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << number(width) << ' ' << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << number(left) << "\" y=\"24\" font-size=\"15\">" << escape(title) << "</text>\n";

  // Grid and tick labels, one per decade (every other one when crowded).
  const int x_step = x_max_decade > 16 ? 2 : 1;
  for (int d = 0; d <= int(x_max_decade); d += x_step) {
    out << "<line x1=\"" << number(px(d)) << "\" y1=\"" << number(top) << "\" x2=\"" << number(px(d)) << "\" y2=\""
        << number(top + plot_h) << "\" stroke=\"#e5e5e5\"/>\n";
    out << "<text x=\"" << number(px(d)) << "\" y=\"" << number(top + plot_h + 18) << "\" text-anchor=\"middle\">1e"
        << d << "</text>\n";
  }
  const int y_step = (y_max_decade - y_min_decade) > 20 ? 2 : 1;
  for (int d = int(y_max_decade); d >= int(y_min_decade); d -= y_step) {
    out << "<line x1=\"" << number(left) << "\" y1=\"" << number(py(d)) << "\" x2=\"" << number(left + plot_w)
        << "\" y2=\"" << number(py(d)) << "\" stroke=\"#e5e5e5\"/>\n";
    out << "<text x=\"" << number(left - 6) << "\" y=\"" << number(py(d) + 4) << "\" text-anchor=\"end\">1e" << d
        << "</text>\n";
  }
  out << "<text x=\"" << number(left - 6) << "\" y=\"" << number(py(zero_band) + 4)
      << "\" text-anchor=\"end\">0 (exact)</text>\n";
  out << "<rect x=\"" << number(left) << "\" y=\"" << number(top) << "\" width=\"" << number(plot_w) << "\" height=\""
      << number(plot_h) << "\" fill=\"none\" stroke=\"black\"/>\n";
  out << "<text x=\"" << number(left + plot_w / 2) << "\" y=\"" << number(height - 18)
      << "\" text-anchor=\"middle\">condition number  sum|x| / |sum x|</text>\n";
  out << "<text transform=\"translate(18," << number(top + plot_h / 2)
      << ") rotate(-90)\" text-anchor=\"middle\">relative error |computed - s| / |s|</text>\n";

  // Guides: u * condition for each accumulation type in the sweep.
  std::set<element_type> accumulations;
  for (const auto& r : sweep)
    for (const auto& a : r.results) accumulations.insert(a.accumulation);
  for (element_type acc : accumulations) {
    const double log_u = acc == element_type::f32 ? -24 * std::log10(2.0) : -53 * std::log10(2.0);
    // The segment of log10(err) = log_u + d inside the plot.
    const double d0 = std::max(0.0, zero_band + 1 - log_u), d1 = std::min(x_max_decade, y_max_decade - log_u);
    if (d1 <= d0) continue;
    out << "<line x1=\"" << number(px(d0)) << "\" y1=\"" << number(py(log_u + d0)) << "\" x2=\"" << number(px(d1))
        << "\" y2=\"" << number(py(log_u + d1)) << "\" stroke=\"#999\" stroke-dasharray=\"6,4\"/>\n";
    out << "<text x=\"" << number(px(d1) - 4) << "\" y=\"" << number(py(log_u + d1) + 14)
        << "\" text-anchor=\"end\" fill=\"#666\">u(" << to_string(acc) << ") x condition</text>\n";
  }

  // One polyline with markers per algorithm, in registry order.
  std::vector<std::string> names;
  if (!sweep.empty())
    for (const auto& a : sweep.front().results) names.push_back(a.name);
  for (std::size_t k = 0; k < names.size(); ++k) {
    const char* color = palette[k % std::size(palette)];
    std::string points;
    std::string markers;
    for (const auto& r : sweep) {
      if (!(r.condition_number >= 1) || !std::isfinite(r.condition_number)) continue;
      for (const auto& a : r.results) {
        if (a.name != names[k]) continue;
        const double x = px(std::log10(r.condition_number)), y = y_of(a.error.relative);
        points += number(x) + "," + number(y) + " ";
        markers += "<circle cx=\"" + number(x) + "\" cy=\"" + number(y) + "\" r=\"3\" fill=\"" + color + "\"/>\n";
      }
    }
    out << "<g><title>" << escape(names[k]) << "</title>\n<polyline fill=\"none\" stroke=\"" << color
        << "\" stroke-width=\"1.5\" points=\"" << points << "\"/>\n"
        << markers << "</g>\n";
    const double ly = top + 10 + 18 * double(k);
    out << "<line x1=\"" << number(width - right + 15) << "\" y1=\"" << number(ly) << "\" x2=\""
        << number(width - right + 40) << "\" y2=\"" << number(ly) << "\" stroke=\"" << color
        << "\" stroke-width=\"2\"/>\n";
    out << "<text x=\"" << number(width - right + 46) << "\" y=\"" << number(ly + 4) << "\">" << escape(names[k])
        << "</text>\n";
  }
  out << "</svg>\n";
}

}  // namespace detred::audit
