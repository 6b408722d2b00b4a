// Minimal SVG charts for the exploration reports (no plotting dependency): grouped bars, a scatter
// with a highlighted front, and an ON/OFF grid.
#pragma once

#include <string>
#include <vector>

namespace capsgen::memory {

struct Series {
  std::string name;
  std::vector<double> values;  // one per category
};

std::string svg_bars(const std::string& title, const std::string& y_label, const std::vector<std::string>& categories,
                     const std::vector<Series>& series);

struct ScatterPoint {
  double x = 0, y = 0;
  int group = 0;  // colour index
};
// Points coloured by group (legend from group_names), `front` drawn as a connected line.
std::string svg_scatter(const std::string& title, const std::string& x_label, const std::string& y_label,
                        const std::vector<ScatterPoint>& points, const std::vector<std::string>& group_names,
                        const std::vector<ScatterPoint>& front);

// rows x cols cells, filled in proportion to level[r][c] in [0, 1] (0: off, 1: on all the time).
std::string svg_grid(const std::string& title, const std::vector<std::string>& row_labels,
                     const std::vector<std::string>& col_labels, const std::vector<std::vector<double>>& level);

}  // namespace capsgen::memory
