// Syntactic attention's tree as arcs over the sentence (see the header).
#include "heed/viz/dependency_tree.h"

#include <algorithm>
#include <cmath>

#include "heed/util/error.h"

namespace heed::viz {
namespace {

// white blended toward ink by p in [0, 1]
Rgb ink(double p) {
  const Rgb dark{33, 49, 140};
  auto mix = [&](uint8_t c) {
    return static_cast<uint8_t>(std::lround(255 - (255 - c) * std::clamp(p, 0.0, 1.0)));
  };
  return {mix(dark.r), mix(dark.g), mix(dark.b)};
}

}  // namespace

std::vector<int> most_probable_parents(const std::vector<std::vector<float>>& tree) {
  check(!tree.empty(), "a dependency tree needs its root row");
  const size_t n = tree.size() - 1;
  std::vector<int> parent(n, 0);
  for (size_t m = 0; m < n; ++m) {
    float best = -1.f;
    for (size_t h = 0; h <= n; ++h) {
      check(tree[h].size() == n, "a dependency tree over ", n, " tokens has rows of ", n,
            " parent probabilities; row ", h, " has ", tree[h].size());
      if (tree[h][m] > best) {
        best = tree[h][m];
        parent[m] = static_cast<int>(h);
      }
    }
  }
  return parent;
}

Figure dependency_tree_figure(const std::vector<std::string>& tokens,
                              const std::vector<std::vector<float>>& tree,
                              const HeatmapStyle& style) {
  const size_t n = tokens.size();
  check(tree.size() == n + 1, "a dependency tree over ", n, " tokens has ", n + 1,
        " rows (the root and each token), got ", tree.size());
  const std::vector<int> parent = most_probable_parents(tree);
  const double font = style.font, gap = font;
  // node centres: ROOT, then each token, as wide as its label
  std::vector<std::string> labels = {"ROOT"};
  for (const std::string& t : tokens)
    labels.push_back(t.size() > style.max_label_chars ? t.substr(0, style.max_label_chars) + "…"
                                                      : t);
  std::vector<double> x;
  double cursor = gap;
  for (const std::string& l : labels) {
    const double w = std::max(text_width(l, font), 2 * font);
    x.push_back(cursor + w / 2);
    cursor += w + gap;
  }
  // arcs rise with their span k: k * rise for short ones, then as its square root (a sentence's
  // arc to its last word stays a low dome)
  const double rise = 0.9 * font, top = 8;
  auto height = [&](double k) { return rise * std::min(k, 3 + 2 * std::sqrt(k)); };
  double tallest = height(1);
  for (size_t m = 0; m < n; ++m)
    for (size_t h = 0; h <= n; ++h)
      if (tree[h][m] >= 0.1f)
        tallest = std::max(tallest, height(std::abs(static_cast<double>(h) - (m + 1.0))));
  const double base = top + tallest + font;  // arcs' feet
  Figure f;
  f.width = cursor;
  f.height = base + 3 * font + 8;
  auto arc = [&](size_t h, size_t node, double p, bool arrow) {
    const double x0 = x[h], x1 = x[node];
    const double rise_px = height(std::abs(static_cast<double>(node) - static_cast<double>(h)));
    Polyline line;
    constexpr int kSteps = 24;
    for (int i = 0; i <= kSteps; ++i) {  // half an ellipse from the parent to the token
      const double a = M_PI * i / kSteps;
      line.points.emplace_back(x0 + (x1 - x0) * (1 - std::cos(a)) / 2,
                               base - 4 - rise_px * std::sin(a));
    }
    line.color = ink(0.15 + 0.85 * p);
    line.width = 0.5 + 2.5 * p;
    f.shapes.emplace_back(std::move(line));
    if (!arrow) return;
    const double dir = x1 > x0 ? -1 : 1, tip = base - 4;
    f.shapes.emplace_back(
        Polyline{.points = {{x1 + dir * 4, tip - 6}, {x1, tip}, {x1 - dir * 1, tip - 7}},
                 .color = ink(0.15 + 0.85 * p),
                 .width = 0.5 + 2.5 * p});
  };
  for (size_t m = 0; m < n; ++m)  // the other parents first, faint
    for (size_t h = 0; h <= n; ++h)
      if (static_cast<int>(h) != parent[m] && tree[h][m] >= 0.1f) arc(h, m + 1, tree[h][m], false);
  for (size_t m = 0; m < n; ++m)
    arc(static_cast<size_t>(parent[m]), m + 1, tree[static_cast<size_t>(parent[m])][m], true);
  for (size_t i = 0; i < labels.size(); ++i) {
    f.shapes.emplace_back(Text{.x = x[i],
                               .y = base + font / 2 + 2,
                               .text = labels[i],
                               .size = font,
                               .anchor = Anchor::Middle,
                               .bold = i == 0,
                               .color = {},
                               .css_class = i == 0 ? "root" : "src"});
    if (i == 0) continue;
    char p[16];
    std::snprintf(p, sizeof p, "%.2f", tree[static_cast<size_t>(parent[i - 1])][i - 1]);
    f.shapes.emplace_back(Text{.x = x[i],
                               .y = base + 2 * font,
                               .text = p,
                               .size = font * 0.75,
                               .anchor = Anchor::Middle,
                               .color = {110, 110, 110},
                               .css_class = "p"});
  }
  return f;
}

}  // namespace heed::viz
