// A figure as a flat list of drawing primitives (rectangles, text, polylines) in pixel
// coordinates, with two writers: SVG text (no dependency; the tokens stay searchable text)
// and PNG (rendered with cairo). Layouts (heatmap.h, plot.h) build figures; writers only draw.
// Leaves out: any layout logic, fonts beyond one sans-serif family, colour management.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace heed::viz {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// Viridis (van der Walt & Smith 2015): dark blue-violet at 0, yellow at 1, brightness rising
// with the value, readable in grey and by most colour-blind readers. v is clamped to [0, 1].
Rgb viridis(double v);

enum class Anchor { Start, Middle, End };  // where the text's x is: its start, middle or end

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  Rgb fill;
  std::string css_class;  // SVG class ("cell" for heatmap cells); ignored by PNG
  std::string tooltip;    // SVG <title>; ignored by PNG
};

struct Text {
  double x = 0, y = 0;  // the anchor point; y is the vertical middle of the text
  std::string text;     // UTF-8
  double size = 12;     // font size, px
  Anchor anchor = Anchor::Start;
  bool vertical = false;  // rotated -90 degrees (reads bottom to top), for column labels
  bool bold = false;
  Rgb color;
  std::string css_class;  // SVG class ("src", "out", ...); ignored by PNG
};

struct Polyline {
  std::vector<std::pair<double, double>> points;  // (x, y) px
  Rgb color;
  double width = 1.5;
  bool markers = false;  // a small dot on every point
  double marker = 0;     // its radius, px (0: 1.5 x width)
  double radius() const { return marker > 0 ? marker : 1.5 * width; }
};

using Shape = std::variant<Rect, Text, Polyline>;

struct Figure {
  double width = 0, height = 0;  // px
  std::vector<Shape> shapes;     // drawn in order, on a white background

  // Places another figure's shapes at (dx, dy) and grows this one to hold them.
  void place(const Figure& other, double dx, double dy);
};

// Width estimate of UTF-8 text at a font size, px: layouts use it for both writers, so an
// SVG viewed with another font still fits (wide East Asian characters count double).
double text_width(const std::string& utf8, double size);

// Text with &, <, >, " escaped for XML and HTML.
std::string xml_escape(const std::string& s);

// SVG 1.1 document (standalone) or a bare <svg> element to inline into HTML.
std::string to_svg(const Figure& f, bool standalone = true);

// Renders f at scale (1 = one pixel per unit) and writes a PNG file atomically.
void write_png(const Figure& f, const std::string& path, double scale = 1.0);

// Writes f to path as SVG or PNG by the extension (.svg / .png; anything else is an error).
void write_figure(const Figure& f, const std::string& path);

}  // namespace heed::viz
