// The convolutional front end of a speech recognizer (equations in the header).
#include "heed/nn/audio_front_end.h"

#include <algorithm>
#include <cmath>

#include "heed/autograd/ops.h"
#include "heed/nn/init.h"
#include "heed/util/error.h"
#include "heed/util/json.h"

namespace heed {

int64_t AudioFrontEndConfig::subsampled(int64_t frames) {
  if (frames < kMinFrames) return 0;
  return ((frames - 3) / 2 + 1 - 3) / 2 + 1;
}

nlohmann::json AudioFrontEndConfig::to_json() const {
  nlohmann::json m = nlohmann::json::array(), s = nlohmann::json::array();
  for (float v : mean) m.push_back(json_number(v));
  for (float v : stddev) s.push_back(json_number(v));
  return {{"kind", "conv2d"},
          {"features", features},
          {"channels", channels},
          {"dim", dim},
          {"mean", m},
          {"stddev", s},
          {"utterance_mean", utterance_mean}};
}

AudioFrontEndConfig AudioFrontEndConfig::from_json(const nlohmann::json& j) {
  AudioFrontEndConfig c;
  try {
    check(j.at("kind").get<std::string>() == "conv2d", "config.json: audio front end kind '",
          j.at("kind").get<std::string>(), "' (known: conv2d)");
    c.features = j.at("features").get<int64_t>();
    c.channels = j.at("channels").get<int64_t>();
    c.dim = j.at("dim").get<int64_t>();
    c.mean = j.at("mean").get<std::vector<float>>();
    c.stddev = j.at("stddev").get<std::vector<float>>();
    c.utterance_mean = j.value("utterance_mean", false);
  } catch (const nlohmann::json::exception& e) {
    fail("config.json: malformed audio front end (", e.what(), ")");
  }
  check(c.features >= 7 && c.channels >= 1 && c.dim >= 1,
        "config.json: audio front end needs features >= 7, channels and dim >= 1");
  check(c.mean.size() == c.stddev.size() &&
            (c.mean.empty() || static_cast<int64_t>(c.mean.size()) == c.features),
        "config.json: audio front end mean and stddev must hold one value per feature (",
        c.features, ")");
  for (float s : c.stddev) check(s > 0 && std::isfinite(s), "config.json: a stddev of ", s);
  return c;
}

std::string AudioFrontEndConfig::describe() const {
  return "conv2d x4 front end (" + std::to_string(channels) + " channels, " +
         std::to_string(features) + " bins -> " + std::to_string(dim) +
         (utterance_mean ? ", utterance means subtracted)" : ")");
}

std::vector<float> bin_means(std::span<const float> frames, int64_t F) {
  check(F > 0 && static_cast<int64_t>(frames.size()) % F == 0, "bin_means: ", frames.size(),
        " values are not frames of ", F, " bins");
  const auto T = static_cast<int64_t>(frames.size()) / F;
  std::vector<double> sum(static_cast<size_t>(F), 0.0);
  for (int64_t t = 0; t < T; ++t)
    for (int64_t f = 0; f < F; ++f)
      sum[static_cast<size_t>(f)] += frames[static_cast<size_t>(t * F + f)];
  std::vector<float> mean(static_cast<size_t>(F), 0.f);
  if (T > 0)
    for (int64_t f = 0; f < F; ++f)
      mean[static_cast<size_t>(f)] =
          static_cast<float>(sum[static_cast<size_t>(f)] / static_cast<double>(T));
  return mean;
}

AudioFrontEnd::AudioFrontEnd(const AudioFrontEndConfig& c, const Scope& scope) : config_(c) {
  const int64_t C = c.channels, F2 = AudioFrontEndConfig::subsampled(c.features);
  check(F2 >= 1, "audio front end: ", c.features, " feature bins are too few (7 at least)");
  // PyTorch's default for convolutions and linear maps: U(+-1/sqrt(fan_in))
  auto fan = [](int64_t n) { return Init::uniform(1.f / std::sqrt(static_cast<float>(n))); };
  w1_ = &scope.param("front/conv1/w", {C, 9}, fan(9));
  b1_ = &scope.param("front/conv1/b", {C}, fan(9));
  w2_ = &scope.param("front/conv2/w", {C, 9 * C}, fan(9 * C));
  b2_ = &scope.param("front/conv2/b", {C}, fan(9 * C));
  W_ = &scope.param("front/out/W", {c.dim, F2 * C}, fan(F2 * C));
  b_ = &scope.param("front/out/b", {c.dim}, fan(F2 * C));
}

Var AudioFrontEnd::forward(Graph& g, std::span<const float> features, int64_t S,
                           std::span<const int32_t> lengths, std::span<int32_t> out_lengths) const {
  return permute(forward_batch_major(g, features, S, lengths, out_lengths), {1, 0, 2});
}

Var AudioFrontEnd::forward_batch_major(Graph& g, std::span<const float> features, int64_t S,
                                       std::span<const int32_t> lengths,
                                       std::span<int32_t> out_lengths) const {
  const auto B = static_cast<int64_t>(lengths.size());
  const int64_t F = config_.features;
  check(static_cast<int64_t>(features.size()) == S * B * F, "audio front end: ", features.size(),
        " feature values for ", S, " frames x ", B, " utterances x ", F, " bins");
  check(S >= AudioFrontEndConfig::kMinFrames, "audio front end: batches of fewer than ",
        AudioFrontEndConfig::kMinFrames, " frames (", S, ") have no output frame");
  // x' [B, S, F, 1]: normalised, batch-major, zero past each length
  Tensor x = g.alloc(Shape{B, S, F, 1});
  const bool norm = !config_.mean.empty();
  std::vector<double> utt(static_cast<size_t>(F));  // [F] mean_t(x) of utterance b, or 0
  for (int64_t b = 0; b < B; ++b) {
    check(lengths[b] >= 1 && lengths[b] <= S, "audio front end: a length of ", lengths[b],
          " in a batch of ", S, " frames");
    std::fill(utt.begin(), utt.end(), 0.0);
    if (config_.utterance_mean) {
      for (int64_t t = 0; t < lengths[b]; ++t)
        for (int64_t f = 0; f < F; ++f)
          utt[static_cast<size_t>(f)] += features[static_cast<size_t>((t * B + b) * F + f)];
      for (double& m : utt) m /= lengths[b];
    }
    for (int64_t t = 0; t < S; ++t) {
      float* dst = x.data() + (b * S + t) * F;
      if (t >= lengths[b]) {
        std::fill_n(dst, F, 0.f);
        continue;
      }
      const float* src = features.data() + (t * B + b) * F;
      for (int64_t f = 0; f < F; ++f) {
        const auto v = static_cast<float>(src[f] - utt[static_cast<size_t>(f)]);
        dst[f] = norm ? (v - config_.mean[f]) / config_.stddev[f] : v;
      }
    }
    out_lengths[b] = static_cast<int32_t>(AudioFrontEndConfig::output_frames(lengths[b]));
  }
  Var h = relu(conv2d(g.constant(x), g.param(*w1_), g.param(*b1_)));  // [B, S1, F1, C]
  h = relu(conv2d(h, g.param(*w2_), g.param(*b2_)));                  // [B, S2, F2, C]
  const int64_t S2 = h.dim(1);
  h = reshape(h, Shape{B, S2, h.dim(2) * h.dim(3)});
  h = linear(h, g.param(*W_), g.param(*b_));  // [B, S2, D]
  for (int64_t b = 0; b < B; ++b) out_lengths[b] = std::min<int32_t>(out_lengths[b], S2);
  return h;
}

}  // namespace heed
