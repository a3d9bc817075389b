// A stream of one utterance as the server's page sees it: pushed in pieces, each push and the
// stream's end with a view (decode/recognizer_stream.h), the views gathered into one.
#pragma once

#include <algorithm>
#include <span>
#include <vector>

#include "heed/decode/recognizer_stream.h"

namespace heed::testing {

struct ViewedStream {
  std::vector<StreamResult> results;
  StreamView view;          // every push's and the end's, in order
  int64_t positions = 0;    // the stream's positions() at its end
  std::vector<int64_t> by;  // per token of view.tokens: the positions computed by its push
};

// `audio` (16 kHz) in pieces of `piece` samples.
inline ViewedStream stream_viewed(const Recognizer& rec, std::span<const float> audio,
                                  size_t piece) {
  RecognizerStream s(rec, {}, [] { return 0.0; });
  ViewedStream v;
  auto gather = [&](const StreamView& one, std::vector<StreamResult> results) {
    v.view.frames.insert(v.view.frames.end(), one.frames.begin(), one.frames.end());
    v.view.scores.insert(v.view.scores.end(), one.scores.begin(), one.scores.end());
    v.view.tokens.insert(v.view.tokens.end(), one.tokens.begin(), one.tokens.end());
    v.view.positions += one.positions;
    v.by.resize(v.view.tokens.size(), v.view.positions);
    v.results.insert(v.results.end(), results.begin(), results.end());
  };
  for (size_t i = 0; i < audio.size(); i += piece) {
    StreamView one;
    auto results = s.push(audio.subspan(i, std::min(piece, audio.size() - i)), &one);
    gather(one, std::move(results));
  }
  StreamView one;
  auto results = s.finish(&one);
  gather(one, std::move(results));
  v.positions = s.positions();
  return v;
}

}  // namespace heed::testing
