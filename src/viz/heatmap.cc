// Heatmap and grid layouts (see heatmap.h).
// Leaves out: drawing (svg.cc, png.cc).
#include "heed/viz/heatmap.h"

#include <algorithm>
#include <cstdio>

#include "heed/util/error.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace heed::viz {
namespace {

// At most n code points of s, with "…" when cut.
std::string shorten(const std::string& s, size_t n) {
  size_t points = 0;
  for (size_t i = 0; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) continue;  // continuation byte
    if (points++ == n) return s.substr(0, i) + "…";
  }
  return s;
}

std::string weight_text(float w) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(w));
  return buf;
}

}  // namespace

Figure heatmap_figure(const Heatmap& h, const HeatmapStyle& st) {
  check(h.weights.size() == h.rows.size(), "heatmap: ", h.weights.size(), " rows of weights for ",
        h.rows.size(), " row labels");
  for (size_t r = 0; r < h.weights.size(); ++r)
    check(h.weights[r].size() == h.cols.size(), "heatmap: row ", r, " has ", h.weights[r].size(),
          " weights for ", h.cols.size(), " column labels");
  std::vector<std::string> rows, cols;
  for (const auto& s : h.rows) rows.push_back(shorten(s, st.max_label_chars));
  for (const auto& s : h.cols) cols.push_back(shorten(s, st.max_label_chars));
  auto widest = [&](const std::vector<std::string>& v) {
    double w = 0;
    for (const auto& s : v) w = std::max(w, text_width(s, st.font));
    return w;
  };
  const double title_h = h.title.empty() ? 0 : st.font * 2;
  const double left = std::max(widest(rows), st.label_width) + 8;  // row labels, right-aligned
  const double top = title_h + widest(cols) + 8;                   // column labels, vertical
  const double R = static_cast<double>(rows.size()), C = static_cast<double>(cols.size());
  Figure f;
  const Rgb ink{40, 40, 40};
  if (!h.title.empty())
    f.shapes.push_back(Text{
        .x = 0, .y = st.font, .text = h.title, .size = st.font + 1, .bold = true, .color = ink});
  for (size_t c = 0; c < cols.size(); ++c)
    f.shapes.push_back(Text{.x = left + (static_cast<double>(c) + 0.5) * st.cell,
                            .y = top - 4,
                            .text = cols[c],
                            .size = st.font,
                            .vertical = true,
                            .color = ink,
                            .css_class = "src"});
  for (size_t r = 0; r < rows.size(); ++r) {
    const double y = top + static_cast<double>(r) * st.cell;
    f.shapes.push_back(Text{.x = left - 4,
                            .y = y + st.cell / 2,
                            .text = rows[r],
                            .size = st.font,
                            .anchor = Anchor::End,
                            .color = ink,
                            .css_class = "out"});
    for (size_t c = 0; c < cols.size(); ++c)
      f.shapes.push_back(
          Rect{.x = left + static_cast<double>(c) * st.cell,
               .y = y,
               .w = st.cell,
               .h = st.cell,
               .fill = viridis(h.weights[r][c]),
               .css_class = "cell",
               .tooltip = h.rows[r] + " → " + h.cols[c] + ": " + weight_text(h.weights[r][c])});
  }
  for (const auto& [r, c] : h.marks) {  // a red outline inside the cell (visible on viridis)
    check(r >= 0 && r < static_cast<int>(R) && c >= 0 && c < static_cast<int>(C), "heatmap: mark (",
          r, ", ", c, ") outside ", R, " x ", C);
    const double x0 = left + c * st.cell + 1.5, y0 = top + r * st.cell + 1.5, x1 = x0 + st.cell - 3,
                 y1 = y0 + st.cell - 3;
    f.shapes.push_back(Polyline{.points = {{x0, y0}, {x1, y0}, {x1, y1}, {x0, y1}, {x0, y0}},
                                .color = Rgb{230, 30, 30},
                                .width = 1.5});
  }
  f.width = left + C * st.cell;
  f.height = top + R * st.cell;
  if (st.color_bar) {  // 0 at the bottom, 1 at the top
    const double x = f.width + 12, bar_h = std::max(R * st.cell, 64.0), steps = 32;
    for (int i = 0; i < steps; ++i)
      f.shapes.push_back(Rect{.x = x,
                              .y = top + bar_h * (1 - (i + 1) / steps),
                              .w = 10,
                              .h = bar_h / steps + 0.5,
                              .fill = viridis((i + 0.5) / steps)});
    f.shapes.push_back(
        Text{.x = x + 14, .y = top + 4, .text = "1", .size = st.font - 2, .color = ink});
    f.shapes.push_back(
        Text{.x = x + 14, .y = top + bar_h - 4, .text = "0", .size = st.font - 2, .color = ink});
    f.width = x + 14 + text_width("0", st.font);
    f.height = std::max(f.height, top + bar_h);
  }
  f.width += 4;
  f.height += 4;
  return f;
}

Figure titled(const Figure& body, const std::string& title, double font) {
  Figure f;
  f.shapes.push_back(Text{.x = 0, .y = font * 0.8, .text = title, .size = font, .bold = true});
  f.width = text_width(title, font) + 8;
  f.place(body, 0, font * 2);
  return f;
}

Figure grid(const std::vector<Figure>& figures, size_t columns, double gap) {
  Figure out;
  columns = std::max<size_t>(columns, 1);
  std::vector<double> col_w(columns, 0), row_h((figures.size() + columns - 1) / columns, 0);
  for (size_t i = 0; i < figures.size(); ++i) {
    col_w[i % columns] = std::max(col_w[i % columns], figures[i].width);
    row_h[i / columns] = std::max(row_h[i / columns], figures[i].height);
  }
  double y = 0;
  for (size_t r = 0; r < row_h.size(); ++r) {
    double x = 0;
    for (size_t c = 0; c < columns && r * columns + c < figures.size(); ++c) {
      out.place(figures[r * columns + c], x, y);
      x += col_w[c] + gap;
    }
    y += row_h[r] + gap;
  }
  return out;
}

}  // namespace heed::viz
