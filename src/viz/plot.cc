// Line plot layout (see plot.h).
// Leaves out: drawing (svg.cc, png.cc).
#include "heed/viz/plot.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <sstream>

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::viz {

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(count, 1);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;  // k * step for the integers k covering [lo, hi]
  const auto first = static_cast<int64_t>(std::ceil(lo / step - 1e-9));
  const auto last = static_cast<int64_t>(std::floor(hi / step + 1e-9));
  for (int64_t k = first; k <= last; ++k) ticks.push_back(static_cast<double>(k) * step);
  return ticks;
}

std::string tick_label(double v) {
  if (v == 0) return "0";  // also -0 and the rounding noise of k * step around 0
  std::ostringstream os;
  if (std::fabs(v) >= 1 && std::fabs(v) < 1e9 && v == std::round(v))
    os << static_cast<int64_t>(v);  // steps, updates, minutes: 10000, not 1e+04
  else
    os << std::setprecision(4) << v;
  return os.str();
}

Figure line_plot(const std::vector<Series>& series, const PlotSpec& spec) {
  Figure f;
  f.width = spec.width;
  f.height = spec.height;
  const Rgb ink{40, 40, 40}, grid_ink{225, 225, 225};
  const double font = 11, right = 12, bottom = 40, gap = 16, row_height = 14;
  double x0 = std::numeric_limits<double>::infinity(), x1 = -x0, y0 = x0, y1 = -x0;
  for (const auto& s : series)
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && std::isfinite(y))
        x0 = std::min(x0, x), x1 = std::max(x1, x), y0 = std::min(y0, y), y1 = std::max(y1, y);
  // the plot starts right of the y axis' title (vertical, centred at x = 12) and of its widest
  // tick label, with 4 px between them (a learning rate's "0.00025" once ran into the title)
  const std::vector<double> yt = std::isfinite(y0) ? nice_ticks(y0, y1) : std::vector<double>{};
  double widest = 0;
  for (double t : yt) widest = std::max(widest, text_width(tick_label(t), font - 1));
  const double left = std::max(56.0, 12 + font / 2 + 4 + widest + 5);
  const double pw = spec.width - left - right;
  // The legend: entries in series order, filling rows right-aligned; the first row shares the
  // title's, more rows push the plot down (the figure grows, the plot keeps its size).
  struct Entry {
    const Series* series;
    double width;
  };
  std::vector<std::vector<Entry>> legend(1);
  double room = pw - text_width(spec.title, font + 2) - gap;  // what is left of the row
  for (const Series& s : series) {
    if (s.points.empty()) continue;
    const double w = text_width(s.name, font);
    // a new row when this one is full (a row of its own for an entry wider than the room the
    // title leaves)
    if (w > room && (!legend.back().empty() || legend.size() == 1)) {
      legend.emplace_back();
      room = pw;
    }
    legend.back().push_back({&s, w});
    room -= w + gap;
  }
  const double extra = row_height * static_cast<double>(legend.size() - 1);
  const double top = 28 + extra;
  f.height = spec.height + extra;
  f.shapes.push_back(
      Text{.x = left, .y = 12, .text = spec.title, .size = font + 2, .bold = true, .color = ink});
  const double ph = spec.height - 28 - bottom;
  if (!std::isfinite(x0)) {
    f.shapes.push_back(Text{.x = left + pw / 2,
                            .y = top + ph / 2,
                            .text = "no data",
                            .size = font,
                            .anchor = Anchor::Middle,
                            .color = ink});
    return f;
  }
  const std::vector<double> xt = nice_ticks(x0, x1);
  x0 = std::min(x0, xt.front()), x1 = std::max(x1, xt.back());
  y0 = std::min(y0, yt.front()), y1 = std::max(y1, yt.back());
  if (x1 == x0) x1 = x0 + 1;
  if (y1 == y0) y1 = y0 + 1;
  auto px = [&](double x) { return left + (x - x0) / (x1 - x0) * pw; };
  auto py = [&](double y) { return top + ph - (y - y0) / (y1 - y0) * ph; };
  for (double t : yt) {
    f.shapes.push_back(
        Polyline{.points = {{left, py(t)}, {left + pw, py(t)}}, .color = grid_ink, .width = 1});
    f.shapes.push_back(Text{.x = left - 5,
                            .y = py(t),
                            .text = tick_label(t),
                            .size = font - 1,
                            .anchor = Anchor::End,
                            .color = ink});
  }
  for (double t : xt) {
    f.shapes.push_back(
        Polyline{.points = {{px(t), top}, {px(t), top + ph}}, .color = grid_ink, .width = 1});
    f.shapes.push_back(Text{.x = px(t),
                            .y = top + ph + 10,
                            .text = tick_label(t),
                            .size = font - 1,
                            .anchor = Anchor::Middle,
                            .color = ink});
  }
  f.shapes.push_back(Polyline{
      .points = {{left, top}, {left, top + ph}, {left + pw, top + ph}}, .color = ink, .width = 1});
  f.shapes.push_back(Text{.x = left + pw / 2,
                          .y = f.height - 8,
                          .text = spec.x_label,
                          .size = font,
                          .anchor = Anchor::Middle,
                          .color = ink});
  f.shapes.push_back(Text{.x = 12,
                          .y = top + ph / 2,
                          .text = spec.y_label,
                          .size = font,
                          .anchor = Anchor::Middle,
                          .vertical = true,
                          .color = ink});
  for (auto it = series.rbegin(); it != series.rend(); ++it) {
    if (it->points.empty()) continue;
    Polyline line{.color = it->color,
                  .width = it->width,
                  .markers = it->points.size() <= 60 || it->width == 0,
                  .marker = it->width == 0 ? 4.0 : 0.0};  // a scatter's points stand out
    for (const auto& [x, y] : it->points)
      if (std::isfinite(x) && std::isfinite(y)) line.points.emplace_back(px(x), py(y));
    f.shapes.push_back(line);
  }
  for (size_t r = 0; r < legend.size(); ++r) {
    double x = left + pw;
    for (auto it = legend[r].rbegin(); it != legend[r].rend(); ++it) {
      f.shapes.push_back(Text{.x = x,
                              .y = 12 + row_height * static_cast<double>(r),
                              .text = it->series->name,
                              .size = font,
                              .anchor = Anchor::End,
                              .color = it->series->color});
      x -= it->width + gap;
    }
  }
  return f;
}

}  // namespace heed::viz
