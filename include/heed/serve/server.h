// `heed serve`: models behind HTTP (cpp-httplib), as OpenNMT-py's and Marian's servers, and a
// page that shows what they attend to.
//   POST /translate            {"src": [...], "model": NAME, "beam": K, "n_best": N,
//                               "attention": bool, "svg": bool, "layer": l, "head": h}
//                              -> {"translations": [{"text", "tokens", "score", "log_prob",
//                                  "source", "attention", "svg", "n_best": [...]}, ...]}
//   POST /translator/translate OpenNMT-py's route: [{"src": "...", "id": NAME}, ...]
//                              -> [[{"src", "tgt", "n_best", "pred_score"}, ...]]
//   POST /classify             {"src": [...], "model": NAME, "attention": bool, "svg": bool}
//   POST /transcribe?model=NAME&beam=K&n_best=N&timestamps=1   the audio as the body (WAV,
//                              FLAC, OGG...) or a multipart/form-data file -> {"text",
//                              "log_prob", "seconds", "words": [{"word", "start", "end"}],
//                              "n_best": [...]}, what heed transcribe writes
//   POST /stream?model=NAME&sample_rate=R&...   a streaming recognition session, then
//   POST /stream/ID[?end=1], DELETE /stream/ID   its chunks as the audio comes, partial and final
//                              results in each answer (stream_sessions.h)
//   GET  /health, /models (names, kinds, a Transformer's layers and heads), /metrics
//   (Prometheus), / (the page)
// Translation requests are batched across clients (batcher.h); a full queue is 503 with
// Retry-After, a bad request 400 (413 for a body over the limit, 404 for an unknown model),
// a request that waits longer than its timeout 504, each with {"error": "..."}.
// Leaves out: TLS and authentication (serve on loopback, or behind a proxy that has them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "heed/decode/translator.h"
#include "heed/models/model_files.h"
#include "heed/serve/batcher.h"

namespace heed::serve {

struct ServedModel {
  std::string name;  // how requests name it ("model", OpenNMT-py's "id")
  std::string dir;   // a model directory (an encoder-decoder, a classifier or a recognizer)
};

struct ServeOptions {
  std::vector<ServedModel> models;
  std::string host = "127.0.0.1";
  int port = 8080;                   // 0: any free port (on_listening says which)
  BatchLimits batching;              // --max-batch, --max-wait-ms, --max-queue
  size_t max_body_bytes = 1 << 20;   // larger request bodies: 413
  int64_t max_sentences = 256;       // per request: more is 400
  size_t max_sentence_bytes = 4096;  // per sentence: longer is 400
  int max_beam = 16;                 // beam and n_best at most this: more is 400
  int timeout_ms = 60000;            // a request not answered by then: 504
  int http_threads = 128;            // connections served at once
  int max_connections = 1024;        // open at once (more: 503 and closed)
  int header_timeout_ms = 10000;     // a connection's request headers, from connect or answer
  int max_streams = 16;              // streaming sessions open at once (more: 503)
  int stream_idle_ms = 30000;        // a session with no chunk for this long is closed
  TranslatorOptions translator;      // compute type, kernel threads
  DecodeOverrides recognizers;       // every recognizer's (--ctc-lookahead)
  std::string access_log;            // a JSON line per answer appended here ("-": stdout)
};

class Server {
 public:
  // Loads every model (an Error names the one that fails).
  explicit Server(ServeOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;
  // Serves until stop(); `on_listening(port)` once the socket is bound. Requests in flight
  // when stop() is called are answered before run() returns. An Error when the address
  // cannot be bound.
  void run(const std::function<void(int port)>& on_listening = {});
  // Stops accepting (from any thread; a signal's thread, say).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The page served at / (self-contained: no network access).
const std::string& page_html();

}  // namespace heed::serve
