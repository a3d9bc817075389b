// The alignment over the spectrogram (see the header).
#include "heed/viz/speech_alignment.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "heed/util/error.h"

namespace heed::viz {
namespace {

constexpr int64_t kSubsampling = 4;  // filterbank frames (10 ms) per model frame (40 ms)
constexpr int64_t kMaxRows = 40;     // spectrogram rows drawn

// Column labels: the time every second (25 model frames), blank elsewhere.
std::vector<std::string> time_labels(int64_t frames) {
  std::vector<std::string> cols(static_cast<size_t>(frames));
  const double seconds = Recognizer::kFrameSeconds;
  const int64_t per_second = std::lround(1.0 / seconds);
  for (int64_t c = 0; c < frames; c += per_second)
    cols[static_cast<size_t>(c)] = std::to_string(c / per_second) + " s";
  return cols;
}

}  // namespace

Figure speech_alignment_figure(const Transcript& t, std::span<const float> features, int64_t bins,
                               bool ctc, const HeatmapStyle& style, const std::string& title) {
  check(bins >= 1 && !features.empty() && static_cast<int64_t>(features.size()) % bins == 0,
        "alignment figure: ", features.size(), " feature values are not frames of ", bins, " bins");
  check(!t.alignment.empty() && t.alignment.size() == t.units.size() + 1,
        "alignment figure: the transcript was decoded without its alignment (", t.alignment.size(),
        " rows for ", t.units.size(), " units)");
  const auto S = static_cast<int64_t>(t.alignment.front().size());  // model frames
  const int64_t T = static_cast<int64_t>(features.size()) / bins;   // filterbank frames
  // the alignment: rows units then </s> (CTC's path: the blank)
  Heatmap align;
  align.title = ctc ? "CTC's most probable alignment (output units × model frames of 40 ms)"
                    : "attention (output units × model frames of 40 ms)";
  align.rows = t.units;
  align.rows.push_back(ctc ? "<blank>" : "</s>");
  align.cols = time_labels(S);
  align.weights = t.alignment;
  for (auto& row : align.weights) row.resize(static_cast<size_t>(S), 0.f);
  // the spectrogram [rows, S]: bins pooled by `pool`, frames by 4, scaled to [0, 1]
  const int64_t pool = (bins + kMaxRows - 1) / kMaxRows, rows = (bins + pool - 1) / pool;
  Heatmap spec;
  spec.title = "log-mel filterbanks (" + std::to_string(bins) + " bins, high at the top)";
  spec.cols = align.cols;
  spec.weights.assign(static_cast<size_t>(rows), std::vector<float>(static_cast<size_t>(S), 0.f));
  float lo = features[0], hi = features[0];
  for (float v : features) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t b0 = (rows - 1 - r) * pool, b1 = std::min(bins, b0 + pool);  // high at the top
    spec.rows.push_back(r % 5 == 0 ? std::to_string(b1) : "");
    for (int64_t c = 0; c < S; ++c) {
      double sum = 0;
      int64_t n = 0;
      for (int64_t f = c * kSubsampling; f < std::min(T, (c + 1) * kSubsampling); ++f)
        for (int64_t b = b0; b < b1; ++b, ++n) sum += features[static_cast<size_t>(f * bins + b)];
      const double mean = n > 0 ? sum / static_cast<double>(n) : lo;
      spec.weights[static_cast<size_t>(r)][static_cast<size_t>(c)] =
          hi > lo ? static_cast<float>((mean - lo) / (hi - lo)) : 0.f;
    }
  }
  // one row-label column for both, so that their frames line up
  HeatmapStyle st = style;
  for (const auto* h : {&align, &spec})
    for (const std::string& r : h->rows)
      st.label_width = std::max(st.label_width, text_width(r, st.font));
  return titled(grid({heatmap_figure(align, st), heatmap_figure(spec, st)}, 1, 12), title,
                st.font + 2);
}

}  // namespace heed::viz
