// Figure helpers shared by the layouts and both writers: colour map, text width, placing.
// Leaves out: drawing (svg.cc, png.cc).
#include "heed/viz/figure.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace heed::viz {

Rgb viridis(double v) {
  // nine samples of matplotlib's viridis at 0, 1/8, ..., 1, linearly interpolated
  static constexpr std::array<std::array<double, 3>, 9> kStops = {{{68, 1, 84},
                                                                   {71, 44, 122},
                                                                   {59, 81, 139},
                                                                   {44, 113, 142},
                                                                   {33, 144, 141},
                                                                   {39, 173, 129},
                                                                   {92, 200, 99},
                                                                   {170, 220, 50},
                                                                   {253, 231, 37}}};
  if (!(v >= 0)) v = 0;  // also NaN
  v = std::min(v, 1.0) * 8;
  const auto i = std::min<size_t>(static_cast<size_t>(v), 7);
  const double t = v - static_cast<double>(i);
  auto mix = [&](int c) {
    return static_cast<uint8_t>(std::lround(kStops[i][c] * (1 - t) + kStops[i + 1][c] * t));
  };
  return {mix(0), mix(1), mix(2)};
}

double text_width(const std::string& utf8, double size) {
  double em = 0;
  for (size_t i = 0; i < utf8.size();) {
    const auto c = static_cast<unsigned char>(utf8[i]);
    const size_t n = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    uint32_t cp = n == 1 ? c : c & (0x7F >> n);
    for (size_t k = 1; k < n && i + k < utf8.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(utf8[i + k]) & 0x3F);
    const bool wide = (cp >= 0x1100 && cp <= 0x115F) || (cp >= 0x2E80 && cp <= 0xA4CF) ||
                      (cp >= 0xAC00 && cp <= 0xD7A3) || (cp >= 0xF900 && cp <= 0xFAFF) ||
                      (cp >= 0xFF00 && cp <= 0xFF60) || cp >= 0x1F300;
    em += wide ? 1.0 : (c >= 'A' && c <= 'Z') || c == 'm' || c == 'w' ? 0.72 : 0.6;
    i += n;
  }
  return em * size;
}

void Figure::place(const Figure& other, double dx, double dy) {
  for (Shape s : other.shapes) {
    std::visit(
        [&](auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>, Polyline>) {
            for (auto& [x, y] : v.points) x += dx, y += dy;
          } else {
            v.x += dx;
            v.y += dy;
          }
        },
        s);
    shapes.push_back(std::move(s));
  }
  width = std::max(width, dx + other.width);
  height = std::max(height, dy + other.height);
}

}  // namespace heed::viz
