// The attention heatmap (Bahdanau et al. 2015, fig. 3): one row per output token (or, for the
// classifier, per hop), one column per source token, cell brightness = attention weight on the
// viridis scale (0 dark, 1 bright), with a colour bar; and a grid to lay several side by side.
// Leaves out: reading models (cli/attention.cc), writing files (figure.h).
#pragma once

#include <string>
#include <vector>

#include "heed/viz/figure.h"

namespace heed::viz {

struct Heatmap {
  std::string title;                         // above the matrix (empty: none)
  std::vector<std::string> rows;             // [R] labels on the left: output tokens or hops
  std::vector<std::string> cols;             // [C] labels on top: source tokens
  std::vector<std::vector<float>> weights;   // [R][C] in [0, 1]
  std::vector<std::pair<int, int>> marks{};  // (row, column) cells outlined: CTC's most probable
                                             // alignment, monotonic attention's stops
};

struct HeatmapStyle {
  double cell = 18;             // cell side, px
  double font = 12;             // label size, px
  size_t max_label_chars = 24;  // longer tokens are cut with "…"
  bool color_bar = true;
  double label_width = 0;  // the row labels' column at least this wide, px (so that
                           // heatmaps stacked one above the other share their columns)
};

// Throws heed::Error when weights is not R x C.
Figure heatmap_figure(const Heatmap& h, const HeatmapStyle& style = {});

// A bold title line above a figure.
Figure titled(const Figure& body, const std::string& title, double font = 14);

// Figures in rows of `columns`: each column as wide as its widest figure, each row as tall as
// its tallest.
Figure grid(const std::vector<Figure>& figures, size_t columns, double gap = 24);

}  // namespace heed::viz
