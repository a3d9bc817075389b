// The PNG writer: the figure drawn with cairo on an RGB image (DejaVu Sans through
// fontconfig, so UTF-8 tokens render), then written atomically.
// Leaves out: vector output through cairo (svg.cc keeps text as text), HiDPI beyond `scale`.
#include <cairo.h>

#include <cmath>
#include <memory>
#include <numbers>

#include "heed/io/files.h"
#include "heed/util/error.h"
#include "heed/viz/figure.h"

namespace heed::viz {
namespace {

void set_color(cairo_t* cr, Rgb c) {
  cairo_set_source_rgb(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0);
}

void draw_text(cairo_t* cr, const Text& t) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         t.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, t.size);
  cairo_text_extents_t te;
  cairo_text_extents(cr, t.text.c_str(), &te);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  const double shift = t.anchor == Anchor::Start    ? 0
                       : t.anchor == Anchor::Middle ? te.x_advance / 2
                                                    : te.x_advance;
  cairo_save(cr);
  cairo_translate(cr, t.x, t.y);
  if (t.vertical) cairo_rotate(cr, -std::numbers::pi / 2);
  cairo_move_to(cr, -shift, (fe.ascent - fe.descent) / 2);  // y is the text's middle
  set_color(cr, t.color);
  cairo_show_text(cr, t.text.c_str());
  cairo_restore(cr);
}

cairo_status_t append(void* closure, const unsigned char* data, unsigned int length) {
  static_cast<std::string*>(closure)->append(reinterpret_cast<const char*>(data), length);
  return CAIRO_STATUS_SUCCESS;
}

}  // namespace

void write_png(const Figure& f, const std::string& path, double scale) {
  const int w = static_cast<int>(std::ceil(f.width * scale));
  const int h = static_cast<int>(std::ceil(f.height * scale));
  check(w > 0 && h > 0 && w <= 32767 && h <= 32767, path, ": cannot draw a ", w, "x", h,
        " pixel image (cairo's limit is 32767 a side)");
  std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h), &cairo_surface_destroy);
  std::unique_ptr<cairo_t, decltype(&cairo_destroy)> ctx(cairo_create(surface.get()),
                                                         &cairo_destroy);
  cairo_t* cr = ctx.get();
  cairo_scale(cr, scale, scale);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  for (const Shape& s : f.shapes) {
    if (const auto* r = std::get_if<Rect>(&s)) {
      set_color(cr, r->fill);
      cairo_rectangle(cr, r->x, r->y, r->w, r->h);
      cairo_fill(cr);
    } else if (const auto* t = std::get_if<Text>(&s)) {
      draw_text(cr, *t);
    } else if (const auto* p = std::get_if<Polyline>(&s)) {
      if (p->points.empty()) continue;
      set_color(cr, p->color);
      if (p->width > 0) {
        cairo_set_line_width(cr, p->width);
        cairo_move_to(cr, p->points[0].first, p->points[0].second);
        for (const auto& [x, y] : p->points) cairo_line_to(cr, x, y);
        cairo_stroke(cr);
      }
      if (p->markers)
        for (const auto& [x, y] : p->points) {
          cairo_arc(cr, x, y, p->radius(), 0, 2 * std::numbers::pi);
          cairo_fill(cr);
        }
    }
  }
  check(cairo_status(cr) == CAIRO_STATUS_SUCCESS, path,
        ": drawing failed: ", cairo_status_to_string(cairo_status(cr)));
  std::string bytes;
  const cairo_status_t st = cairo_surface_write_to_png_stream(surface.get(), append, &bytes);
  check(st == CAIRO_STATUS_SUCCESS, path, ": PNG encoding failed: ", cairo_status_to_string(st));
  write_file_atomic(path, bytes);
}

void write_figure(const Figure& f, const std::string& path) {
  auto ends_with = [&](const std::string& ext) {
    if (path.size() < ext.size()) return false;
    std::string tail = path.substr(path.size() - ext.size());
    for (char& c : tail) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return tail == ext;
  };
  if (ends_with(".svg"))
    write_file_atomic(path, to_svg(f));
  else if (ends_with(".png"))
    write_png(f, path);
  else
    fail(path, ": unknown image format (expected a .svg or .png file name)");
}

}  // namespace heed::viz
