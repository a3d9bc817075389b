// The drawing layer: the viridis scale, heatmap and plot layouts (one cell per pair, labels as
// text, checked dimensions), SVG escaping, and PNGs read back by cairo with the figure's size
// and the right colour under a cell.
#include <gtest/gtest.h>

#include <cairo.h>

#include <cmath>
#include <filesystem>
#include <regex>
#include <set>

#include "heed/viz/figure.h"
#include "heed/viz/heatmap.h"
#include "heed/viz/plot.h"
#include "support/errors.h"

// Designated initializers leave the other members at their defaults on purpose (GCC 12
// warns about each one under -Wextra).
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

namespace fs = std::filesystem;
using namespace heed;
using namespace heed::viz;

namespace {

double luminance(Rgb c) {
  return 0.2126 * c.r + 0.7152 * c.g + 0.0722 * c.b;
}

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

Heatmap small_map() {
  return {.title = "t",
          .rows = {"das", "Haus", "</s>"},
          .cols = {"the", "house", "<b>&"},
          .weights = {{0.9f, 0.05f, 0.05f}, {0.1f, 0.8f, 0.1f}, {0, 0, 1}}};
}

}  // namespace

TEST(Viridis, EndpointsAndRisingBrightness) {
  EXPECT_EQ(viridis(0).r, 68);
  EXPECT_EQ(viridis(1).g, 231);
  EXPECT_EQ(viridis(-3).b, viridis(0).b);  // clamped
  EXPECT_EQ(viridis(std::nan("")).r, viridis(0).r);
  for (int i = 0; i < 100; ++i)  // "brightness = weight"
    EXPECT_LT(luminance(viridis(i / 100.0)), luminance(viridis((i + 1) / 100.0))) << i;
}

TEST(TextWidth, CountsCodePointsAndWideCharacters) {
  EXPECT_DOUBLE_EQ(text_width("ab", 10), 12);
  EXPECT_DOUBLE_EQ(text_width("äö", 10), 12);    // two code points, four bytes
  EXPECT_DOUBLE_EQ(text_width("日本", 10), 20);  // wide
}

TEST(Heatmap, OneCellPerPairWithTokensAsText) {
  const Figure f = heatmap_figure(small_map());
  const std::string svg = to_svg(f);
  EXPECT_EQ(count(svg, "<rect class=\"cell\""), 9u);
  EXPECT_EQ(count(svg, "class=\"src\""), 3u);
  EXPECT_EQ(count(svg, "class=\"out\""), 3u);
  EXPECT_NE(svg.find(">Haus</text>"), std::string::npos);
  EXPECT_NE(svg.find(">&lt;b&gt;&amp;</text>"), std::string::npos);  // escaped, still the token
  EXPECT_EQ(svg.find("<b>&"), std::string::npos);
  EXPECT_NE(svg.find("<title>Haus → house: 0.800</title>"), std::string::npos);
  EXPECT_GT(f.width, 3 * 18.0);
  EXPECT_GT(f.height, 3 * 18.0);
}

TEST(Heatmap, LongTokensAreCutAndMismatchesRejected) {
  Heatmap h = small_map();
  h.cols[0] = std::string(40, 'x');
  const std::string svg = to_svg(heatmap_figure(h));
  EXPECT_NE(svg.find(std::string(24, 'x') + "…</text>"), std::string::npos);
  h.weights[1].pop_back();
  EXPECT_NE(heed::testing::error_of([&] {
              heatmap_figure(h);
            }).find("row 1 has 2 weights for 3 column labels"),
            std::string::npos);
  h = small_map();
  h.rows.pop_back();
  EXPECT_NE(heed::testing::error_of([&] {
              heatmap_figure(h);
            }).find("3 rows of weights for 2 row labels"),
            std::string::npos);
}

TEST(Grid, PlacesFiguresInRows) {
  const Figure one = heatmap_figure(small_map());
  const Figure g = grid({one, one, one}, 2, 10);
  EXPECT_DOUBLE_EQ(g.width, 2 * one.width + 10);
  EXPECT_DOUBLE_EQ(g.height, 2 * one.height + 10);
  EXPECT_EQ(g.shapes.size(), 3 * one.shapes.size());
  Figure small;
  small.width = small.height = 5;
  const Figure mixed = grid({one, small, small, small}, 2, 10);  // columns and rows sized apart
  EXPECT_DOUBLE_EQ(mixed.width, one.width + 10 + 5);
  EXPECT_DOUBLE_EQ(mixed.height, one.height + 10 + 5);
}

TEST(Png, ReadsBackWithTheFiguresSizeAndCellColours) {
  Figure f;
  f.width = 40.4;
  f.height = 30;
  f.shapes.push_back(Rect{.x = 10, .y = 10, .w = 10, .h = 10, .fill = viridis(1)});
  f.shapes.push_back(Text{.x = 2, .y = 25, .text = "Größe 日本"});
  const std::string path = (fs::temp_directory_path() / "heed_viz_test.png").string();
  write_figure(f, path);
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  ASSERT_EQ(cairo_surface_status(s), CAIRO_STATUS_SUCCESS);
  EXPECT_EQ(cairo_image_surface_get_width(s), 41);
  EXPECT_EQ(cairo_image_surface_get_height(s), 30);
  const unsigned char* px = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  auto pixel = [&](int x, int y) {  // cairo's RGB24: one uint32 0x00RRGGBB per pixel
    const uint32_t v = *reinterpret_cast<const uint32_t*>(px + y * stride + 4 * x);
    return Rgb{static_cast<uint8_t>(v >> 16), static_cast<uint8_t>(v >> 8),
               static_cast<uint8_t>(v)};
  };
  EXPECT_EQ(pixel(15, 15).r, 253);  // inside the cell: viridis(1)
  EXPECT_EQ(pixel(15, 15).g, 231);
  EXPECT_EQ(pixel(35, 5).r, 255);  // background
  int dark = 0;                    // the text left ink
  for (int x = 0; x < 41; ++x)
    for (int y = 20; y < 30; ++y) dark += luminance(pixel(x, y)) < 128;
  EXPECT_GT(dark, 5);
  cairo_surface_destroy(s);
  fs::remove(path);
  EXPECT_NE(heed::testing::error_of([&] {
              write_figure(f, "x.jpg");
            }).find("x.jpg: unknown image format"),
            std::string::npos);
}

TEST(Plot, NiceTicksAndCurves) {
  EXPECT_EQ(nice_ticks(0, 10, 5), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  const std::vector<double> ticks = nice_ticks(0.13, 0.61, 5), want = {0.2, 0.3, 0.4, 0.5, 0.6};
  ASSERT_EQ(ticks.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(ticks[i], want[i], 1e-12);
  EXPECT_EQ(nice_ticks(-3, 7, 2), (std::vector<double>{0, 5}));  // within [lo, hi]
  EXPECT_EQ(tick_label(10000), "10000");
  EXPECT_EQ(tick_label(-0.0), "0");
  EXPECT_EQ(tick_label(0.25), "0.25");
  EXPECT_EQ(tick_label(2.5e-5), "2.5e-05");
  EXPECT_EQ(tick_label(1.0 / 3), "0.3333");
  const Figure f = line_plot({{.name = "dev BLEU", .points = {{1, 10}, {2, 20}, {3, 25}}}},
                             {.title = "curve", .x_label = "step", .y_label = "BLEU"});
  const std::string svg = to_svg(f);
  // the curve, the axes, grid lines at x = 1, 1.5, ..., 3 and y = 10, 15, 20, 25
  EXPECT_EQ(count(svg, "<polyline"), 1 + 1 + 5 + 4);
  EXPECT_NE(svg.find(">dev BLEU</text>"), std::string::npos);
  EXPECT_NE(to_svg(line_plot({}, {})).find(">no data</text>"), std::string::npos);
}

TEST(Plot, TickLabelsClearTheAxisTitle) {
  // a learning rate's ticks ("0.00025") are wider than the default margin left for them: the
  // plot moves right so that none runs into the vertical y-axis title
  for (double scale : {1.0, 1e-4, 1e-7, 1e6}) {
    const Figure f =
        line_plot({{.name = "lr", .points = {{0, 0}, {50, 2.5 * scale}, {100, 3.7 * scale}}}},
                  {.title = "Learning rate", .x_label = "updates", .y_label = "rate"});
    double title_right = -1, ticks_left = 1e9;
    for (const Shape& shape : f.shapes) {
      const auto* t = std::get_if<Text>(&shape);
      if (t == nullptr) continue;
      if (t->vertical) title_right = t->x + t->size / 2;  // the y-axis title, rotated
      if (t->anchor == Anchor::End)
        ticks_left = std::min(ticks_left, t->x - text_width(t->text, t->size));
    }
    ASSERT_GT(title_right, 0) << scale;
    EXPECT_GE(ticks_left, title_right + 4) << scale;
  }
}

TEST(Plot, LegendWrapsIntoRowsThatFitTheFigure) {
  // six long names (an ensemble's members) cannot share the title's row: the legend takes more
  // rows, each entry within the plot's width and clear of the title, and the figure grows
  std::vector<Series> series;
  for (int k = 0; k < 6; ++k)
    series.push_back({.name = "runs/model_" + std::to_string(k) + ": train loss",
                      .points = {{0, k}, {1, k + 1}}});
  const PlotSpec spec{.title = "Loss", .width = 440, .height = 260};
  const Figure f = line_plot(series, spec);
  EXPECT_GT(f.height, spec.height);
  const double title_end = 56 + text_width("Loss", 13);
  std::set<double> rows;
  int names = 0;
  for (const Shape& shape : f.shapes) {
    const auto* t = std::get_if<Text>(&shape);
    if (t == nullptr || t->text.find("train loss") == std::string::npos) continue;
    ++names;
    rows.insert(t->y);
    const double start = t->x - text_width(t->text, t->size);  // right-aligned
    EXPECT_LE(t->x, spec.width - 12 + 1e-9) << t->text;
    EXPECT_GE(start, t->y == 12 ? title_end : 56 - 1e-9) << t->text;
  }
  EXPECT_EQ(names, 6);
  EXPECT_GE(rows.size(), 2u);
  EXPECT_EQ(f.height, spec.height + 14 * static_cast<double>(rows.size() - 1));
  // one short name stays in the title's row, at the original size
  EXPECT_EQ(line_plot({series[0]}, spec).height, spec.height);
  // a long title leaves no room: the one entry goes to the next row, clear of the title
  const PlotSpec long_title{.title = std::string(40, 'T'), .width = 440, .height = 260};
  const Figure g = line_plot({series[0]}, long_title);
  EXPECT_EQ(g.height, long_title.height + 14);
  for (const Shape& shape : g.shapes) {
    const auto* t = std::get_if<Text>(&shape);
    if (t != nullptr && t->text == series[0].name) {
      EXPECT_EQ(t->y, 12 + 14);
    }
  }
}
