#include "memory/svg.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

namespace capsgen::memory {
namespace {

const char* kColors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"};

std::string esc(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

std::string header(int w, int h, const std::string& title) {
  return fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"18\" text-anchor=\"middle\" font-size=\"14\">{3}</text>\n",
      w, h, w / 2, esc(title));
}

// A "nice" upper bound for an axis.
double nice_max(double v) {
  if (v <= 0) return 1;
  const double p = std::pow(10.0, std::floor(std::log10(v)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (v <= m * p) return m * p;
  return 10 * p;
}

}  // namespace

std::string svg_bars(const std::string& title, const std::string& y_label, const std::vector<std::string>& cats,
                     const std::vector<Series>& series) {
  const int left = 70, top = 30, ph = 300, bottom = 150, cw = std::max(40, int(series.size()) * 14 + 10);
  const int pw = int(cats.size()) * cw, w = left + pw + 150, h = top + ph + bottom;
  double vmax = 0;
  for (const auto& s : series)
    for (double v : s.values) vmax = std::max(vmax, v);
  const double ymax = nice_max(vmax);
  std::string o = header(w, h, title);
  for (int t = 0; t <= 4; ++t) {
    const double y = top + ph - ph * t / 4.0;
    o += fmt::format("<line x1=\"{}\" y1=\"{:.1f}\" x2=\"{}\" y2=\"{:.1f}\" stroke=\"#ddd\"/>\n", left, y, left + pw, y);
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", left - 4, y + 4, ymax * t / 4);
  }
  o += fmt::format("<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", top + ph / 2,
                   esc(y_label));
  const int bw = (cw - 10) / std::max<int>(1, int(series.size()));
  for (std::size_t c = 0; c < cats.size(); ++c) {
    const int x0 = left + int(c) * cw + 5;
    for (std::size_t s = 0; s < series.size(); ++s) {
      const double v = c < series[s].values.size() ? series[s].values[c] : 0;
      const double bh = ph * v / ymax;
      o += fmt::format("<rect x=\"{}\" y=\"{:.1f}\" width=\"{}\" height=\"{:.1f}\" fill=\"{}\"><title>{}: {:g}</title></rect>\n",
                       x0 + int(s) * bw, top + ph - bh, bw, bh, kColors[s % 8], esc(series[s].name), v);
    }
    o += fmt::format("<text transform=\"translate({},{}) rotate(45)\">{}</text>\n", x0 + cw / 2 - 5, top + ph + 12,
                     esc(cats[c]));
  }
  o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\"/>\n", left, top + ph, left + pw);
  for (std::size_t s = 0; s < series.size(); ++s)
    o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n",
                     left + pw + 15, top + 16 * int(s), kColors[s % 8], left + pw + 30, top + 16 * int(s) + 9,
                     esc(series[s].name));
  return o + "</svg>\n";
}

std::string svg_scatter(const std::string& title, const std::string& x_label, const std::string& y_label,
                        const std::vector<ScatterPoint>& pts, const std::vector<std::string>& groups,
                        const std::vector<ScatterPoint>& front) {
  const int left = 70, top = 30, pw = 560, ph = 380, w = left + pw + 130, h = top + ph + 50;
  double xmax = 0, ymax = 0;
  for (const auto& p : pts) xmax = std::max(xmax, p.x), ymax = std::max(ymax, p.y);
  for (const auto& p : front) xmax = std::max(xmax, p.x), ymax = std::max(ymax, p.y);
  xmax = nice_max(xmax), ymax = nice_max(ymax);
  const auto X = [&](double x) { return left + pw * x / xmax; };
  const auto Y = [&](double y) { return top + ph - ph * y / ymax; };
  std::string o = header(w, h, title);
  for (int t = 0; t <= 4; ++t) {
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{:g}</text>\n", left - 4, Y(ymax * t / 4) + 4, ymax * t / 4);
    o += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", X(xmax * t / 4), top + ph + 16, xmax * t / 4);
  }
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left, top, pw, ph);
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + pw / 2, top + ph + 36, esc(x_label));
  o += fmt::format("<text transform=\"translate(14,{}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n", top + ph / 2,
                   esc(y_label));
  for (const auto& p : pts)
    o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\" fill=\"{}\" fill-opacity=\"0.5\"/>\n", X(p.x), Y(p.y),
                     kColors[p.group % 8]);
  if (!front.empty()) {
    o += "<polyline fill=\"none\" stroke=\"black\" stroke-width=\"1.5\" points=\"";
    for (const auto& p : front) o += fmt::format("{:.1f},{:.1f} ", X(p.x), Y(p.y));
    o += "\"/>\n";
  }
  for (std::size_t g = 0; g < groups.size(); ++g)
    o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", left + pw + 20,
                     top + 10 + 16 * int(g), kColors[g % 8], left + pw + 30, top + 14 + 16 * int(g), esc(groups[g]));
  o += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"black\" stroke-width=\"1.5\"/><text x=\"{3}\" y=\"{4}\">Pareto front</text>\n",
                   left + pw + 14, top + 10 + 16 * int(groups.size()), left + pw + 26, left + pw + 30, top + 14 + 16 * int(groups.size()));
  return o + "</svg>\n";
}

std::string svg_grid(const std::string& title, const std::vector<std::string>& rows, const std::vector<std::string>& cols,
                     const std::vector<std::vector<double>>& level) {
  const int left = 120, top = 30, cw = 40, rh = 14;
  const int w = left + cw * int(cols.size()) + 20, h = top + rh * int(rows.size()) + 160;
  std::string o = header(w, h, title);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>\n", left - 4, top + rh * int(r) + 11, esc(rows[r]));
    for (std::size_t c = 0; c < cols.size(); ++c)
      if (level[r][c] >= 1.0 || level[r][c] <= 0.0) {
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" stroke=\"white\"/>\n", left + cw * int(c),
                         top + rh * int(r), cw, rh, level[r][c] >= 1.0 ? "#2ca02c" : "#dddddd");
      } else {  // the awake share of the cell in green over the off grey
        const int x = left + cw * int(c), y = top + rh * int(r);
        const int wgreen = std::max(1, int(cw * level[r][c] + 0.5));
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#dddddd\" stroke=\"white\"/>\n", x, y, cw, rh);
        o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#2ca02c\"><title>{:.0f}% awake</title></rect>\n", x,
                         y + 1, wgreen, rh - 2, 100 * level[r][c]);
      }
  }
  for (std::size_t c = 0; c < cols.size(); ++c)
    o += fmt::format("<text transform=\"translate({},{}) rotate(45)\">{}</text>\n", left + cw * int(c) + 10,
                     top + rh * int(rows.size()) + 12, esc(cols[c]));
  return o + "</svg>\n";
}

}  // namespace capsgen::memory
