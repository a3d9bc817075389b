// The latent tree syntactic attention induces over a sentence (nn/syntactic_attention.h), drawn
// as dependency arcs over its tokens: a ROOT node first, then the tokens left to right; above
// them an arc from each token's parent to it for every parent of probability >= 0.1, its
// darkness and width the probability, the most probable parent's arc drawn last with an
// arrowhead on the token. Under each token, the probability of its most probable parent.
// Leaves out: trees from parsers (the SST trees' own structure), non-projective drawings.
#pragma once

#include <string>
#include <vector>

#include "heed/viz/figure.h"
#include "heed/viz/heatmap.h"

namespace heed::viz {

// tokens: n units; tree [n + 1][n]: p(parent(m) = h) at [h][m - 1], h = 0 the root (what
// TranslationResult::tree and Prediction::tree hold). Throws heed::Error on other shapes.
Figure dependency_tree_figure(const std::vector<std::string>& tokens,
                              const std::vector<std::vector<float>>& tree,
                              const HeatmapStyle& style = {});

// The most probable parent of each token (0: the root), from a tree as above.
std::vector<int> most_probable_parents(const std::vector<std::vector<float>>& tree);

}  // namespace heed::viz
