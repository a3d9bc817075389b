// The server's streaming recognition: a session per client stream, each a RecognizerStream
// (decode/recognizer_stream.h) fed the chunks its client posts as the audio comes — the HTTP
// shape of a WebSocket stream (cpp-httplib 0.11 has no WebSocket, and a browser cannot stream a
// request body over HTTP/1.1):
//   POST /stream?model=NAME&sample_rate=R&encoding=f32|s16&beam=K&endpoint_ms=E&view=1
//        [the first chunk]  -> {"session", "units", "blank", "bins", "alignment", "results",
//        "audio", ...}
//   POST /stream/ID [?end=1]  the next chunk -> {"results": [...], "audio": s, ...}; end=1: the
//        stream's last, the session closed after its finals
//   DELETE /stream/ID         closed, no answer owed
// A chunk is mono samples at R Hz (any number: the rate converted to 16 kHz as they come,
// io/resampler.h), little-endian float32 at full scale 1 (f32: a Web Audio buffer's bytes) or
// 16-bit PCM (s16). "results" are transcribe --online's JSON lines (partials and finals,
// to_json(StreamResult)), their times on the session's clock (seconds since it opened). With
// view=1 an answer also has what the chunk computed, for the page to draw: "frames" (log-mel, in
// tenths), "positions" (how many 40 ms model positions they made) and, as "alignment" says, a
// CTC model's "probs" (each new position's unit probabilities, in 255ths) or an attention
// model's "stops" ([unit, position] for each unit written: where its attention stopped).
// A session idle for longer than the limit is closed (its next chunk: 404); more sessions than
// the limit open at once: 503. Errors are HttpErrors naming the parameter or the session.
// Leaves out: routing (server.cc), the search (decode/).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

#include "heed/decode/recognizer.h"
#include "heed/serve/request.h"

namespace heed::serve {

struct StreamLimits {
  int max_sessions = 16;                  // open at once (--max-streams)
  std::chrono::milliseconds idle{30000};  // a session with no chunk this long is closed
  int max_beam = 16;
  std::chrono::milliseconds wait{60000};  // a chunk waiting for its session's last one: 504
};

// What opening a session asks for (the query of POST /stream).
struct StreamRequest {
  int sample_rate = 16000;
  bool s16 = false;  // 16-bit PCM (else float32)
  int beam = 1;
  double endpoint_seconds = 0;
  bool view = false;
};
// The query's fields checked (an HttpError 400 naming the first that is wrong).
StreamRequest stream_request(const Query& query, const StreamLimits& limits);

class StreamSessions {
 public:
  explicit StreamSessions(StreamLimits limits);
  ~StreamSessions();
  StreamSessions(const StreamSessions&) = delete;
  StreamSessions& operator=(const StreamSessions&) = delete;

  // A new session over the recognizer (an HttpError 400 when it cannot stream, 503 when the
  // sessions are at the limit), given `first` (a chunk, possibly empty): its answer with
  // "session" (the id), the model's "units", "blank" and "bins".
  nlohmann::json open(const Recognizer& recognizer, const StreamRequest& request,
                      const std::string& first);
  // The session's next chunk; `end`: its last (the session is closed after it). 404 for an id
  // that is not open.
  nlohmann::json push(const std::string& id, const std::string& chunk, bool end);
  // Closes the session (false: none open with that id).
  bool close(const std::string& id);
  int64_t open_sessions() const;

 private:
  struct Session;
  std::shared_ptr<Session> find(const std::string& id);
  void expire();  // closes the idle sessions (the lock held)
  StreamLimits limits_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Session>> sessions_;
};

}  // namespace heed::serve
