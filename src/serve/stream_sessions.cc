// The server's streaming recognition sessions (see the header).
#include "heed/serve/stream_sessions.h"

#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "heed/decode/recognizer_stream.h"
#include "heed/io/resampler.h"
#include "heed/serve/request.h"

namespace heed::serve {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct StreamSessions::Session {
  std::timed_mutex mu;  // one chunk at a time
  Clock::time_point opened = Clock::now(), last = Clock::now();
  StreamRequest request;
  std::unique_ptr<StreamResampler> resample;  // to 16 kHz
  std::unique_ptr<RecognizerStream> stream;
  std::atomic<bool> closed{false};
};

namespace {

// The chunk's bytes as samples at full scale 1, or a 400 naming what is wrong.
std::vector<float> samples_of(const std::string& bytes, bool s16) {
  const size_t width = s16 ? 2 : 4;
  if (bytes.size() % width != 0)
    throw HttpError{400, "a chunk of " + std::to_string(bytes.size()) + " bytes is not whole " +
                             (s16 ? "16-bit" : "float32") + " samples"};
  std::vector<float> x(bytes.size() / width);
  for (size_t i = 0; i < x.size(); ++i) {
    const char* p = bytes.data() + i * width;
    if (s16) {
      const auto v = static_cast<int16_t>(static_cast<uint16_t>(
          static_cast<unsigned char>(p[0]) | (static_cast<unsigned char>(p[1]) << 8)));
      x[i] = static_cast<float>(v) / 32768.f;
    } else {
      std::memcpy(&x[i], p, 4);
      if (!std::isfinite(x[i]))
        throw HttpError{400, "sample " + std::to_string(i) + " of the chunk is not a number"};
    }
  }
  return x;
}

std::string new_id() {
  std::random_device rd;
  std::string id;
  for (int i = 0; i < 4; ++i) {
    char hex[9];
    std::snprintf(hex, sizeof hex, "%08x", rd());
    id += hex;
  }
  return id;
}

}  // namespace

StreamRequest stream_request(const Query& q, const StreamLimits& limits) {
  check_keys(query_object(q), {"model", "sample_rate", "encoding", "beam", "endpoint_ms", "view"},
             "query parameter");
  StreamRequest r;
  r.sample_rate = query_int(q, "sample_rate", 16000, 1000, 768000);
  r.beam = query_int(q, "beam", 1, 1, limits.max_beam);
  r.endpoint_seconds = query_int(q, "endpoint_ms", 0, 0, 60000) / 1000.0;
  if (const auto it = q.find("encoding"); it != q.end()) {
    if (it->second != "f32" && it->second != "s16")
      throw HttpError{
          400, "encoding must be f32 (float32) or s16 (16-bit PCM), got '" + it->second + "'"};
    r.s16 = it->second == "s16";
  }
  if (const auto it = q.find("view"); it != q.end())
    r.view = it->second == "1" || it->second == "true";
  return r;
}

StreamSessions::StreamSessions(StreamLimits limits) : limits_(limits) {}
StreamSessions::~StreamSessions() = default;

int64_t StreamSessions::open_sessions() const {
  std::lock_guard lock(mu_);
  return static_cast<int64_t>(sessions_.size());
}

void StreamSessions::expire() {
  const Clock::time_point now = Clock::now();
  for (auto it = sessions_.begin(); it != sessions_.end();) {
    Session& s = *it->second;
    std::unique_lock busy(s.mu, std::try_to_lock);  // one answering a chunk is not idle
    if (busy.owns_lock() && now - s.last > limits_.idle) {
      s.closed = true;
      it = sessions_.erase(it);
    } else {
      ++it;
    }
  }
}

json StreamSessions::open(const Recognizer& recognizer, const StreamRequest& request,
                          const std::string& first) {
  auto s = std::make_shared<Session>();
  s->request = request;
  s->resample =
      std::make_unique<StreamResampler>(request.sample_rate, Recognizer::kSampleRate, "the stream");
  const Clock::time_point opened = s->opened;
  try {
    s->stream = std::make_unique<RecognizerStream>(
        recognizer,
        StreamOptions{.beam = request.beam, .endpoint_seconds = request.endpoint_seconds},
        [opened] { return std::chrono::duration<double>(Clock::now() - opened).count(); });
  } catch (const Error& e) {
    throw HttpError{400, e.what()};
  }
  std::string id;
  {
    std::lock_guard lock(mu_);
    expire();
    if (static_cast<int64_t>(sessions_.size()) >= limits_.max_sessions)
      throw HttpError{503, std::to_string(limits_.max_sessions) +
                               " streams are open, the limit (--max-streams); retry later"};
    do id = new_id();
    while (sessions_.count(id) > 0);
    sessions_[id] = s;
  }
  json answer;
  try {
    answer = push(id, first, false);
  } catch (...) {  // a first chunk refused: no session left behind
    close(id);
    throw;
  }
  const ModelFiles& m = recognizer.files();
  json units = json::array();
  for (int64_t u = 0; u < m.tgt_vocab.size(); ++u)
    units.push_back(m.tgt_vocab.token(static_cast<int32_t>(u)));
  answer["session"] = id;
  answer["units"] = std::move(units);
  answer["blank"] = s->stream->blank();
  // what the page draws under the spectrogram: CTC's probabilities, or the attention's stops
  answer["alignment"] = s->stream->blank() >= 0 ? "ctc" : "attention";
  answer["bins"] = s->stream->bins();
  return answer;
}

std::shared_ptr<StreamSessions::Session> StreamSessions::find(const std::string& id) {
  std::lock_guard lock(mu_);
  expire();
  const auto it = sessions_.find(id);
  if (it == sessions_.end())
    throw HttpError{404, "no open stream '" + id + "' (it ended, or was idle longer than " +
                             std::to_string(limits_.idle.count()) + " ms)"};
  return it->second;
}

json StreamSessions::push(const std::string& id, const std::string& chunk, bool end) {
  const std::shared_ptr<Session> s = find(id);
  std::unique_lock lock(s->mu, std::defer_lock);
  if (!lock.try_lock_for(limits_.wait))
    throw HttpError{504, "stream '" + id + "': its last chunk is still being decoded"};
  if (s->closed) throw HttpError{404, "no open stream '" + id + "' (it ended)"};
  s->last = Clock::now();
  const std::vector<float> x = s->resample->push(samples_of(chunk, s->request.s16), end);
  StreamView view;
  StreamView* const shown = s->request.view ? &view : nullptr;  // what the page draws
  std::vector<StreamResult> out = s->stream->push(x, shown);
  if (end) {
    std::vector<StreamResult> last = s->stream->finish(shown);
    out.insert(out.end(), last.begin(), last.end());
    s->closed = true;
    std::lock_guard map_lock(mu_);
    sessions_.erase(id);
  }
  json results = json::array();
  for (const StreamResult& r : out) results.push_back(to_json(r));
  json answer = {{"results", std::move(results)}, {"audio", s->stream->audio_seconds()}};
  if (end) answer["closed"] = true;
  if (s->request.view) {
    // tenths of a log-mel energy, 255ths of a probability: what a page draws, in few bytes
    const auto bins = static_cast<size_t>(s->stream->bins());
    json frames = json::array();
    for (size_t i = 0; i + bins <= view.frames.size(); i += bins) {
      std::vector<int> f(bins);
      for (size_t b = 0; b < bins; ++b)
        f[b] = static_cast<int>(std::lround(10 * view.frames[i + b]));
      frames.push_back(std::move(f));
    }
    const auto V = static_cast<size_t>(s->stream->units());
    json probs = json::array();
    for (size_t i = 0; i + V <= view.scores.size(); i += V) {
      std::vector<int> p(V);
      for (size_t u = 0; u < V; ++u)
        p[u] = static_cast<int>(std::lround(255 * std::exp(view.scores[i + u])));
      probs.push_back(std::move(p));
    }
    // an attention recognizer's units as [unit, stop]: where its attention stopped
    json stops = json::array();
    for (const AttentionStream::Token& t : view.tokens) stops.push_back({t.id, t.stop});
    answer["frames"] = std::move(frames);
    answer["positions"] = view.positions;
    answer["probs"] = std::move(probs);
    answer["stops"] = std::move(stops);
  }
  return answer;
}

bool StreamSessions::close(const std::string& id) {
  std::lock_guard lock(mu_);
  const auto it = sessions_.find(id);
  if (it == sessions_.end()) return false;
  it->second->closed = true;  // a chunk being answered finishes; the next one is 404
  sessions_.erase(it);
  return true;
}

}  // namespace heed::serve
