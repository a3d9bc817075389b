// The SVG writer: one <rect>, <text> or <polyline> per shape, text kept as text (searchable,
// selectable, and what the tests read back), tooltips as <title>.
// Leaves out: fonts (the viewer's sans-serif), gradients, anything layout.
#include <sstream>

#include "heed/viz/figure.h"

namespace heed::viz {

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string color(Rgb c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

std::string num(double v) {
  std::ostringstream os;
  os.precision(6);
  os << v;
  return os.str();
}

const char* anchor_name(Anchor a) {
  return a == Anchor::Start ? "start" : a == Anchor::Middle ? "middle" : "end";
}

}  // namespace

std::string to_svg(const Figure& f, bool standalone) {
  std::ostringstream os;
  if (standalone) os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(f.width) << "\" height=\""
     << num(f.height) << "\" viewBox=\"0 0 " << num(f.width) << " " << num(f.height)
     << "\" font-family=\"DejaVu Sans, Verdana, sans-serif\">\n"
     << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  for (const Shape& s : f.shapes) {
    if (const auto* r = std::get_if<Rect>(&s)) {
      os << "<rect";
      if (!r->css_class.empty()) os << " class=\"" << xml_escape(r->css_class) << "\"";
      os << " x=\"" << num(r->x) << "\" y=\"" << num(r->y) << "\" width=\"" << num(r->w)
         << "\" height=\"" << num(r->h) << "\" fill=\"" << color(r->fill) << "\"";
      if (r->tooltip.empty())
        os << "/>\n";
      else
        os << "><title>" << xml_escape(r->tooltip) << "</title></rect>\n";
    } else if (const auto* t = std::get_if<Text>(&s)) {
      os << "<text";
      if (!t->css_class.empty()) os << " class=\"" << xml_escape(t->css_class) << "\"";
      os << " x=\"" << num(t->x) << "\" y=\"" << num(t->y) << "\" font-size=\"" << num(t->size)
         << "\" text-anchor=\"" << anchor_name(t->anchor)
         << "\" dominant-baseline=\"central\" fill=\"" << color(t->color) << "\"";
      if (t->bold) os << " font-weight=\"bold\"";
      if (t->vertical) os << " transform=\"rotate(-90 " << num(t->x) << " " << num(t->y) << ")\"";
      os << ">" << xml_escape(t->text) << "</text>\n";
    } else if (const auto* p = std::get_if<Polyline>(&s)) {
      os << "<polyline fill=\"none\" stroke=\"" << color(p->color) << "\" stroke-width=\""
         << num(p->width) << "\" points=\"";
      for (const auto& [x, y] : p->points) os << num(x) << "," << num(y) << " ";
      os << "\"/>\n";
      if (p->markers)
        for (const auto& [x, y] : p->points)
          os << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"" << num(p->radius())
             << "\" fill=\"" << color(p->color) << "\"/>\n";
    }
  }
  os << "</svg>\n";
  return os.str();
}

}  // namespace heed::viz
