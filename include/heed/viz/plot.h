// Line plots for training curves (loss and dev metric against steps or minutes): axes with
// round-number ticks, one polyline per series, a legend.
// Leaves out: log scales, error bars, anything beyond what heed report draws.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "heed/viz/figure.h"

namespace heed::viz {

struct Series {
  std::string name;                               // legend entry
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  Rgb color{31, 119, 180};
  double width = 1.5;  // px of the line through the points (0: the points alone, a scatter)
};

struct PlotSpec {
  std::string title, x_label, y_label;
  double width = 440, height = 260;  // px, whole figure
};

// Empty series are skipped; no points at all gives a plot saying "no data".
Figure line_plot(const std::vector<Series>& series, const PlotSpec& spec);

// Round tick values covering [lo, hi] (about `count` of them: steps of 1, 2 or 5 x 10^k).
std::vector<double> nice_ticks(double lo, double hi, int count = 5);
// A tick's text: integers in full (10000), anything else with 4 significant digits.
std::string tick_label(double v);

}  // namespace heed::viz
