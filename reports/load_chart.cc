// Inline SVG load-time charts: plain shapes and text, no script, so the page
// stays one self-contained file.
#include "reports/load_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "reports/format.h"
#include "reports/matrix.h"

namespace parity {
namespace {

std::string Num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

std::string Legend(const std::vector<RunData>& runs, double x0, double y) {
  std::ostringstream svg;
  double x = x0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::string label = Truncate(runs[i].label, 40);
    svg << "<rect x=\"" << Num(x) << "\" y=\"" << Num(y - 9) << "\" width=\"14\" height=\"10\" fill=\""
        << RunColour(i) << "\"/><text x=\"" << Num(x + 18) << "\" y=\"" << Num(y) << "\">" << HtmlEscape(label)
        << "</text>";
    x += 40 + 7.0 * static_cast<double>(label.size());
  }
  return svg.str();
}

}  // namespace

double NiceStep(double max) {
  const double raw = max / 5;
  const double magnitude = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0}) {
    if (raw <= m * magnitude) return m * magnitude;
  }
  return 10 * magnitude;
}

std::string TickLabel(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

std::string RunColour(size_t index) {
  static const char* const kColours[] = {"#2b6cb0", "#c05621", "#2f855a", "#6b46c1",
                                         "#b83280", "#2c7a7b", "#975a16", "#4a5568"};
  return kColours[index % (sizeof kColours / sizeof kColours[0])];
}

std::string LoadBarsSvg(const std::vector<RunData>& runs) {
  std::vector<LoadTimes> times;
  double max = 0;
  for (const RunData& run : runs) {
    times.push_back(LoadTimes::Of(run));
    for (double v : {times.back().ColdMedian(), times.back().WarmMedian()}) {
      if (std::isfinite(v)) max = std::max(max, v);
    }
  }
  const bool any = std::any_of(times.begin(), times.end(), [](const LoadTimes& t) { return !t.cold.empty(); });
  if (!any) return "";
  if (max <= 0) max = 1;
  const double step = NiceStep(max * 1.05);
  const double axis_max = step * std::ceil(max * 1.05 / step);
  const double left = 220, right = 90, top = 34, bar = 16, group = 2 * bar + 4 + 16, width = 900;
  const double plot = width - left - right;
  const double height = top + group * static_cast<double>(runs.size()) + 44;
  const auto x_of = [&](double v) { return left + plot * v / axis_max; };
  std::ostringstream svg;
  svg << "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(width) << "\" height=\""
      << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " " << Num(height)
      << "\" role=\"img\" aria-label=\"median session creation time per run, in ms\">";
  svg << "<text x=\"" << Num(left) << "\" y=\"16\">solid: cold median · light: median of the warm medians</text>";
  const double axis_y = top + group * static_cast<double>(runs.size());
  for (double v = 0; v <= axis_max * 1.0001; v += step) {
    svg << "<line x1=\"" << Num(x_of(v)) << "\" y1=\"" << Num(top - 6) << "\" x2=\"" << Num(x_of(v)) << "\" y2=\""
        << Num(axis_y) << "\" class=\"grid\"/><text x=\"" << Num(x_of(v)) << "\" y=\"" << Num(axis_y + 16)
        << "\" text-anchor=\"middle\">" << TickLabel(v) << "</text>";
  }
  svg << "<text x=\"" << Num(left + plot / 2) << "\" y=\"" << Num(axis_y + 36)
      << "\" text-anchor=\"middle\" class=\"axis-title\">session creation time (ms)</text>";
  for (size_t i = 0; i < runs.size(); ++i) {
    const double y = top + group * static_cast<double>(i);
    svg << "<text x=\"" << Num(left - 8) << "\" y=\"" << Num(y + bar + 4) << "\" text-anchor=\"end\">"
        << HtmlEscape(Truncate(runs[i].label, 32)) << "</text>";
    const double values[2] = {times[i].ColdMedian(), times[i].WarmMedian()};
    for (int k = 0; k < 2; ++k) {
      const double by = y + k * (bar + 4);
      if (!std::isfinite(values[k])) {
        svg << "<text x=\"" << Num(left + 4) << "\" y=\"" << Num(by + 12) << "\" class=\"muted\">"
            << (k == 0 ? "no cold" : "no warm") << " load times</text>";
        continue;
      }
      svg << "<rect x=\"" << Num(left) << "\" y=\"" << Num(by) << "\" width=\""
          << Num(std::max(1.0, x_of(values[k]) - left)) << "\" height=\"" << Num(bar) << "\" fill=\""
          << RunColour(i) << "\"" << (k == 1 ? " fill-opacity=\"0.45\"" : "") << "><title>"
          << HtmlEscape(runs[i].label) << (k == 0 ? ", cold median " : ", warm median ") << FormatMs(values[k])
          << " ms</title></rect><text x=\"" << Num(x_of(values[k]) + 5) << "\" y=\"" << Num(by + 12) << "\">"
          << FormatMs(values[k]) << " ms</text>";
    }
  }
  svg << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(axis_y) << "\" x2=\"" << Num(left + plot) << "\" y2=\""
      << Num(axis_y) << "\" class=\"axis\"/></svg>";
  return svg.str();
}

std::string LoadCurveSvg(const std::vector<RunData>& runs) {
  std::vector<LoadTimes> times;
  double lo = INFINITY, hi = 0;
  for (const RunData& run : runs) {
    times.push_back(LoadTimes::Of(run));
    for (double v : times.back().cold) {
      if (v > 0 && std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
    }
  }
  if (hi <= 0) return "";
  // Whole decades around the data: at least one, so a flat line still has an axis.
  const double floor_decade = std::floor(std::log10(lo));
  double ceil_decade = std::ceil(std::log10(hi));
  if (ceil_decade <= floor_decade) ceil_decade = floor_decade + 1;
  const double left = 70, right = 20, top = 34, bottom = 52, width = 900, height = 340;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto x_of = [&](double share) { return left + plot_w * share; };
  const auto y_of = [&](double ms) {
    const double d = std::log10(std::max(ms, std::pow(10, floor_decade)));
    return top + plot_h * (1 - (d - floor_decade) / (ceil_decade - floor_decade));
  };
  std::ostringstream svg;
  svg << "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << Num(width) << "\" height=\""
      << Num(height) << "\" viewBox=\"0 0 " << Num(width) << " " << Num(height)
      << "\" role=\"img\" aria-label=\"cold session creation time of every case, sorted, in ms\">";
  svg << Legend(runs, left, 16);
  for (double d = floor_decade; d <= ceil_decade; ++d) {
    const double y = y_of(std::pow(10, d));
    svg << "<line x1=\"" << Num(left) << "\" y1=\"" << Num(y) << "\" x2=\"" << Num(left + plot_w) << "\" y2=\""
        << Num(y) << "\" class=\"grid\"/><text x=\"" << Num(left - 6) << "\" y=\"" << Num(y + 4)
        << "\" text-anchor=\"end\">" << TickLabel(std::pow(10, d)) << "</text>";
  }
  for (int p = 0; p <= 100; p += 25) {
    const double x = x_of(p / 100.0);
    svg << "<line x1=\"" << Num(x) << "\" y1=\"" << Num(top) << "\" x2=\"" << Num(x) << "\" y2=\""
        << Num(top + plot_h) << "\" class=\"grid\"/><text x=\"" << Num(x) << "\" y=\"" << Num(top + plot_h + 16)
        << "\" text-anchor=\"middle\">" << p << "%</text>";
  }
  svg << "<text x=\"" << Num(left + plot_w / 2) << "\" y=\"" << Num(height - 10)
      << "\" text-anchor=\"middle\" class=\"axis-title\">share of cases, sorted by cold session creation "
         "time</text><text transform=\"translate(16 "
      << Num(top + plot_h / 2) << ") rotate(-90)\" text-anchor=\"middle\" class=\"axis-title\">cold load (ms, log)</text>";
  svg << "<rect x=\"" << Num(left) << "\" y=\"" << Num(top) << "\" width=\"" << Num(plot_w) << "\" height=\""
      << Num(plot_h) << "\" class=\"frame\"/>";
  constexpr size_t kMaxPoints = 400;  // keeps a 2000-case run's page small
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::vector<double>& v = times[i].cold;
    if (v.empty()) continue;
    if (v.size() == 1) {
      svg << "<circle cx=\"" << Num(x_of(0.5)) << "\" cy=\"" << Num(y_of(v[0])) << "\" r=\"3\" fill=\""
          << RunColour(i) << "\"/>";
      continue;
    }
    const size_t n = std::min(v.size(), kMaxPoints);
    svg << "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" << RunColour(i) << "\" points=\"";
    for (size_t k = 0; k < n; ++k) {
      const size_t index = static_cast<size_t>(std::llround(static_cast<double>(k) * (v.size() - 1) / (n - 1)));
      const double share = static_cast<double>(index) / static_cast<double>(v.size() - 1);
      svg << (k ? " " : "") << Num(x_of(share)) << "," << Num(y_of(v[index]));
    }
    svg << "\"><title>" << HtmlEscape(runs[i].label) << ": " << v.size() << " cases, " << FormatMs(v.front())
        << " – " << FormatMs(v.back()) << " ms</title></polyline>";
  }
  svg << "</svg>";
  return svg.str();
}

}  // namespace parity
