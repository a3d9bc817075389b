// The HTTP server over the inference API (routes and status codes in the header).
// Leaves out: the page's markup (page.cc) and batching (batcher.cc).
#include "heed/serve/server.h"

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string_view>
#include <utility>

#include "heed/decode/classifier.h"
#include "heed/decode/recognizer.h"
#include "heed/io/audio.h"
#include "heed/io/model_dir.h"
#include "heed/models/registry.h"
#include "heed/serve/access_log.h"
#include "heed/serve/connection_guard.h"
#include "heed/serve/request.h"
#include "heed/serve/stream_sessions.h"
#include "heed/util/error.h"
#include "heed/viz/alignment.h"
#include "heed/viz/figure.h"

namespace heed::serve {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct Model {
  std::string name, family;
  std::unique_ptr<Translator> translator;  // encoder-decoders
  std::unique_ptr<Batcher> batcher;
  std::unique_ptr<Classifier> classifier;    // classifiers
  std::unique_ptr<Recognizer> recognizer;    // speech recognizers (POST /transcribe)
  std::timed_mutex classify_mu;              // one classification (transcription) at a time
  std::atomic<int64_t> classify_waiting{0};  // sentences of the requests waiting for it
  int layers = 0, heads = 0;                 // a Transformer's decoder (0: no layer/head choice)
  int first_layer = 0;                       // the lowest decoder layer with cross-attention
};

// (invalid UTF-8 a client sent, echoed in a message, is written as U+FFFD, not a throw)
void reply(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(body.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
}

// The bytes of the request body read so far on this connection's thread (a route reads its
// body through a ContentReader, which leaves Request::body empty): the access log's bytes_in.
thread_local int64_t body_bytes_read = 0;

// The few routes with their own series in /metrics; anything else is "other".
std::string route_name(const std::string& path) {
  for (const char* r : {"/translate", "/translator/translate", "/classify", "/transcribe",
                        "/health", "/models", "/metrics", "/"})
    if (path == r) return r;
  if (path == "/stream" || path.starts_with("/stream/")) return "/stream";  // a session's chunks
  return "other";
}

}  // namespace

struct Server::Impl {
  ServeOptions o;
  Metrics metrics;
  std::unique_ptr<AccessLog> access_log;  // --access-log: one JSON line per answer
  std::vector<std::unique_ptr<Model>> models;
  httplib::Server http;
  std::shared_ptr<ConnectionGuard> guard;   // its connections' threads, cap and deadlines
  std::unique_ptr<StreamSessions> streams;  // POST /stream: recognition as the audio comes

  enum class Kind { EncoderDecoder, Classifier, Recognizer };
  static Kind kind_of(const Model& m) {
    return m.classifier ? Kind::Classifier : m.recognizer ? Kind::Recognizer : Kind::EncoderDecoder;
  }
  static const char* kind_name(Kind k) {
    return k == Kind::Classifier   ? "classifier"
           : k == Kind::Recognizer ? "recognizer"
                                   : "encoder-decoder";
  }
  Model& model_named(const json& j, bool classifier) {
    return model_named(j, classifier ? Kind::Classifier : Kind::EncoderDecoder);
  }
  Model& model_named(const json& j, Kind kind) {
    std::vector<Model*> of_kind;
    for (auto& m : models)
      if (kind_of(*m) == kind) of_kind.push_back(m.get());
    const auto it = j.find("model");
    if (it == j.end() || it->is_null()) {
      if (of_kind.size() == 1) return *of_kind.front();
      std::string names;
      for (Model* m : of_kind) names += (names.empty() ? "" : ", ") + m->name;
      throw HttpError{400, "\"model\" is required: one of " + (names.empty() ? "(none)" : names)};
    }
    if (!it->is_string()) throw HttpError{400, "\"model\" must be a string"};
    const std::string name = it->get<std::string>();
    for (Model* m : of_kind)
      if (m->name == name) return *m;
    throw HttpError{404, std::string("no ") + kind_name(kind) + " named '" + name + "'"};
  }

  RequestLimits limits() const {
    return {.max_sentences = o.max_sentences,
            .max_sentence_bytes = o.max_sentence_bytes,
            .max_beam = o.max_beam};
  }
  std::vector<std::string> sentences(const json& j) const { return request_sentences(j, limits()); }

  std::vector<TranslationResult> translate(Model& m, std::vector<std::string> src,
                                           const TranslationOptions& opts) {
    std::optional<Batcher::Ticket> t = m.batcher->submit(std::move(src), opts);
    if (!t) throw HttpError{503, "the queue is full; retry later"};
    if (t->results.wait_for(std::chrono::milliseconds(o.timeout_ms)) != std::future_status::ready) {
      m.batcher->cancel(t->id);  // out of the queue, or its batch stopped: the decoder freed
      throw HttpError{504, "not translated within " + std::to_string(o.timeout_ms) + " ms"};
    }
    return t->results.get();  // a library Error: 400 (handle())
  }

  // The search options of a request (attention is the caller's to set).
  TranslationOptions translation_options(const json& j, const Model& m) const {
    return request_options(j, limits(),
                           {.name = m.name,
                            .family = m.family,
                            .layers = m.layers,
                            .heads = m.heads,
                            .first_layer = m.first_layer});
  }

  void post_translate(const std::string& body, httplib::Response& res) {
    const json j = object_body(body);
    check_keys(j, {"src", "model", "beam", "n_best", "length_penalty", "layer", "head", "attention",
                   "svg"});
    Model& m = model_named(j, false);
    const bool attention = flag_field(j, "attention");
    const bool svg = flag_field(j, "svg");
    TranslationOptions t = translation_options(j, m);
    t.return_attention = attention || svg;
    const std::vector<TranslationResult> results = translate(m, sentences(j), t);
    json out = json::array();
    for (const TranslationResult& r : results) {
      const TranslationHypothesis& best = r.hypotheses.front();
      json one = {{"text", best.text},
                  {"tokens", best.tokens},
                  {"score", best.score},
                  {"log_prob", best.log_prob},
                  {"source", r.source}};
      if (attention) one["attention"] = best.attention;
      if (svg)
        one["svg"] = viz::to_svg(
            viz::heatmap_figure(viz::hypothesis_heatmap(*m.translator, r, best)), false);
      if (t.num_hypotheses > 1) {
        json n_best = json::array();
        for (const TranslationHypothesis& h : r.hypotheses)
          n_best.push_back({{"text", h.text},
                            {"tokens", h.tokens},
                            {"score", h.score},
                            {"log_prob", h.log_prob}});
        one["n_best"] = std::move(n_best);
      }
      out.push_back(std::move(one));
    }
    reply(res, 200, {{"translations", std::move(out)}});
  }

  // OpenNMT-py's REST route: [{"src": "...", "id": MODEL}, ...] -> [[{"src", "tgt", "n_best",
  // "pred_score"}, ...]] (one inner list per n-best rank; here one)
  void post_onmt(const std::string& body, httplib::Response& res) {
    const json sel = onmt_request(json_body(body));
    const json& src = sel["src"];
    Model& m = model_named(sel, false);
    const std::vector<TranslationResult> results =
        translate(m, sentences(sel), translation_options(json::object(), m));
    json out = json::array();
    for (size_t i = 0; i < results.size(); ++i) {
      const TranslationHypothesis& best = results[i].hypotheses.front();
      out.push_back(
          {{"src", src[i]}, {"tgt", best.text}, {"n_best", 1}, {"pred_score", best.score}});
    }
    reply(res, 200, json::array({std::move(out)}));
  }

  void post_classify(const std::string& body, httplib::Response& res) {
    const json j = object_body(body);
    check_keys(j, {"src", "model", "attention", "svg"});
    Model& m = model_named(j, true);
    const bool attention = flag_field(j, "attention");
    const bool svg = flag_field(j, "svg");
    const std::vector<std::string> src = sentences(j);
    std::vector<Prediction> preds;
    {
      // the same bounds as /translate: sentences waiting at most --max-queue (503), a request
      // not started within --timeout-ms answered 504
      const auto n = static_cast<int64_t>(src.size());
      if (m.classify_waiting.fetch_add(n) + n > o.batching.max_queue) {
        m.classify_waiting.fetch_sub(n);
        throw HttpError{503, "the queue is full; retry later"};
      }
      std::unique_lock lock(m.classify_mu, std::defer_lock);
      const bool got = lock.try_lock_for(std::chrono::milliseconds(o.timeout_ms));
      m.classify_waiting.fetch_sub(n);
      if (!got)
        throw HttpError{504, "not classified within " + std::to_string(o.timeout_ms) + " ms"};
      preds = m.classifier->classify(src, {.attention = attention || svg, .name = "src"});
    }
    json out = json::array();
    for (const Prediction& p : preds) {
      json one = {{"label", p.label}, {"probs", p.probs}, {"tokens", p.tokens}};
      if (attention) one["attention"] = p.attention;
      if (svg && !p.attention.empty())
        one["svg"] = viz::to_svg(viz::heatmap_figure(viz::classifier_heatmap(
                                     p, std::to_string(p.label), m.classifier->config())),
                                 false);
      out.push_back(std::move(one));
    }
    reply(res, 200, {{"predictions", std::move(out)}});
  }

  // POST /transcribe: the audio as the body (any format libsndfile reads), or the first file of
  // a multipart/form-data body; model, beam, n_best and timestamps in the query string.
  void post_transcribe(const httplib::Request& req, const std::string& body,
                       httplib::Response& res) {
    const json q = query_object(req.params);
    check_keys(q, {"model", "beam", "n_best", "timestamps"}, "query parameter");
    Model& m = model_named(q, Kind::Recognizer);
    RecognizeOptions opts{.beam = query_int(req.params, "beam", 1, 1, o.max_beam),
                          .n_best = query_int(req.params, "n_best", 1, 1, o.max_beam)};
    if (opts.n_best > opts.beam) throw HttpError{400, "n_best must be at most beam"};
    const std::string ts = req.has_param("timestamps") ? req.get_param_value("timestamps") : "";
    opts.timestamps = ts == "1" || ts == "true";
    if (body.empty()) throw HttpError{400, "no audio in the request's body"};
    const Audio a = read_audio_bytes(body, "the request's audio");
    std::vector<std::vector<Transcript>> out;
    {
      std::unique_lock lock(m.classify_mu, std::defer_lock);
      if (!lock.try_lock_for(std::chrono::milliseconds(o.timeout_ms)))
        throw HttpError{504, "not transcribed within " + std::to_string(o.timeout_ms) + " ms"};
      out = m.recognizer->transcribe({std::span<const float>(a.samples)}, opts);
    }
    json answer = to_json(out.at(0), opts.timestamps);
    answer["seconds"] = a.seconds();
    reply(res, 200, answer);
  }

  // POST /stream?model=NAME&sample_rate=R&encoding=f32|s16&beam=K&endpoint_ms=E&view=1: a
  // streaming session opened, given the body as its first chunk (stream_sessions.h)
  void post_stream_open(const httplib::Request& req, const std::string& body,
                        httplib::Response& res) {
    const StreamRequest r = stream_request(req.params, stream_limits());
    json q = json::object();
    if (req.has_param("model")) q["model"] = req.get_param_value("model");
    Model& m = model_named(q, Kind::Recognizer);
    reply(res, 200, streams->open(*m.recognizer, r, body));
  }

  // POST /stream/ID[?end=1]: the session's next chunk (end=1: its last)
  void post_stream_chunk(const httplib::Request& req, const std::string& body,
                         httplib::Response& res) {
    check_keys(query_object(req.params), {"end"}, "query parameter");
    const std::string end = req.has_param("end") ? req.get_param_value("end") : "";
    reply(res, 200, streams->push(req.matches[1], body, end == "1" || end == "true"));
  }

  StreamLimits stream_limits() const {
    return {.max_sessions = o.max_streams,
            .idle = std::chrono::milliseconds(o.stream_idle_ms),
            .max_beam = o.max_beam,
            .wait = std::chrono::milliseconds(o.timeout_ms)};
  }

  // handle() for a route that also reads the request (its query and headers)
  template <class F>
  httplib::Server::HandlerWithContentReader handle_request(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res,
                     const httplib::ContentReader& read) {
      try {
        std::string body = req.is_multipart_form_data() ? bounded_first_file(res, read)
                                                        : bounded_body(req, res, read);
        ConnectionGuard::body_read();
        (this->*f)(req, body, res);
      } catch (const HttpError& e) {
        if (e.status == 503) res.set_header("Retry-After", "1");
        reply(res, e.status, {{"error", e.what()}});
      } catch (const Error& e) {
        reply(res, 400, {{"error", e.what()}});
      } catch (const std::exception& e) {
        reply(res, 500, {{"error", e.what()}});
      }
    };
  }

  json model_list() const {
    json out = json::array();
    for (const auto& m : models)
      out.push_back({{"name", m->name},
                     {"kind", kind_name(kind_of(*m))},
                     {"family", m->family},
                     {"layers", m->layers},
                     {"first_layer", m->first_layer},
                     {"heads", m->heads}});
    return out;
  }

  // The request's body, read in pieces and refused with 413 once it passes --max-body, whatever
  // its framing: cpp-httplib 0.11 bounds only a body with a Content-Length and read a chunked one
  // whole (400 MB for a 1 MB limit). The connection is closed after a refusal.
  std::string bounded_body(const httplib::Request& req, httplib::Response& res,
                           const httplib::ContentReader& read) const {
    const std::string too_large = "the body is larger than the limit of " +
                                  std::to_string(o.max_body_bytes) + " bytes (--max-body)";
    const std::string length = req.get_header_value("Content-Length");
    if (!length.empty() && std::strtoull(length.c_str(), nullptr, 10) > o.max_body_bytes) {
      res.set_header("Connection", "close");
      throw HttpError{413, too_large};
    }
    std::string body;
    bool over = false;
    const bool whole = read([&](const char* data, size_t n) {
      body_bytes_read += static_cast<int64_t>(n);
      over = body.size() + n > o.max_body_bytes;
      if (!over) body.append(data, n);
      return !over;
    });
    if (over || !whole) res.set_header("Connection", "close");
    if (over) throw HttpError{413, too_large};
    if (!whole) throw HttpError{400, "the body could not be read whole"};
    return body;
  }

  // The first file of a multipart/form-data body (RFC 7578), under the same bound as a body.
  std::string bounded_first_file(httplib::Response& res, const httplib::ContentReader& read) const {
    std::string file;
    int part = 0;
    bool over = false;
    const bool whole = read(
        [&](const httplib::MultipartFormData&) {
          ++part;
          return true;
        },
        [&](const char* data, size_t n) {
          body_bytes_read += static_cast<int64_t>(n);
          if (part != 1) return true;
          over = file.size() + n > o.max_body_bytes;
          if (!over) file.append(data, n);
          return !over;
        });
    if (over || !whole) res.set_header("Connection", "close");
    if (over)
      throw HttpError{413, "the file is larger than the limit of " +
                               std::to_string(o.max_body_bytes) + " bytes (--max-body)"};
    if (!whole) throw HttpError{400, "the multipart body could not be read whole"};
    return file;
  }

  // A route's handler with the errors turned into JSON answers; it gets the bounded body.
  template <class F>
  httplib::Server::HandlerWithContentReader handle(F f) {
    return [this, f](const httplib::Request& req, httplib::Response& res,
                     const httplib::ContentReader& read) {
      try {
        std::string body = bounded_body(req, res, read);
        ConnectionGuard::body_read();  // decoding has its own timeout
        (this->*f)(body, res);
      } catch (const HttpError& e) {
        if (e.status == 503) res.set_header("Retry-After", "1");
        reply(res, e.status, {{"error", e.what()}});
      } catch (const Error& e) {  // what the library refused: the request's doing
        reply(res, 400, {{"error", e.what()}});
      } catch (const std::exception& e) {
        reply(res, 500, {{"error", e.what()}});
      }
    };
  }
};

Server::Server(ServeOptions options) : impl_(std::make_unique<Impl>()) {
  Impl& s = *impl_;
  s.o = std::move(options);
  check(!s.o.models.empty(), "serve: no model given (--model NAME=DIR)");
  if (!s.o.access_log.empty()) s.access_log = std::make_unique<AccessLog>(s.o.access_log);
  s.streams = std::make_unique<StreamSessions>(s.stream_limits());
  for (const ServedModel& sm : s.o.models) {
    check(!sm.name.empty(), "serve: a model without a name (--model NAME=DIR)");
    for (const auto& other : s.models)
      check(other->name != sm.name, "serve: two models named '", sm.name, "'");
    auto m = std::make_unique<Model>();
    m->name = sm.name;
    const json config = read_config(sm.dir);
    const ModelFamily& family = config_family(config, sm.dir);
    m->family = std::string(family.name);
    if (family.role == ModelRole::Classifier) {
      m->classifier = std::make_unique<Classifier>(sm.dir);
    } else if (config.value("src_units", std::string()) == "audio") {
      m->recognizer =
          std::make_unique<Recognizer>(sm.dir, s.o.recognizers, s.o.translator.compute_type);
    } else {
      m->translator =
          std::make_unique<Translator>(std::vector<std::string>{sm.dir}, s.o.translator);
      const auto heads = m->translator->model().decoder_heads();
      m->layers = heads.layers;
      m->heads = heads.heads;
      m->first_layer = heads.first;
      m->batcher = std::make_unique<Batcher>(*m->translator, s.o.batching, s.metrics);
    }
    s.models.push_back(std::move(m));
  }
  httplib::Server& http = s.http;
  s.guard = std::make_shared<ConnectionGuard>(
      ConnectionLimits{.threads = static_cast<size_t>(std::max(1, s.o.http_threads)),
                       .max_open = static_cast<size_t>(std::max(1, s.o.max_connections)),
                       .header = std::chrono::milliseconds(s.o.header_timeout_ms),
                       .body = std::chrono::milliseconds(s.o.timeout_ms)});
  http.new_task_queue = [&s] { return s.guard->queue(); };
  http.set_payload_max_length(s.o.max_body_bytes);
  http.set_keep_alive_timeout(2);
  // a client keeps its connection for 1,000 requests (nginx's default), not cpp-httplib's 5:
  // reconnecting every fifth request costs a TCP handshake and a thread hand-over each time
  http.set_keep_alive_max_count(1000);
  // answers go out at once: with Nagle's algorithm a response written in two pieces waits for
  // the client's delayed ACK (~40 ms on Linux) before its second piece
  http.set_tcp_nodelay(true);
  // the latency of each answer, from routing to the log line (every answer, 404 and 413 too)
  static thread_local std::optional<Clock::time_point> started;
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    ConnectionGuard::headers_received();  // the body has its own deadline
    started = Clock::now();
    body_bytes_read = 0;
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_logger([&s](const httplib::Request& req, const httplib::Response& res) {
    const double seconds =
        started ? std::chrono::duration<double>(Clock::now() - *started).count() : -1.0;
    started.reset();
    s.metrics.request(route_name(req.path), res.status, seconds);
    if (s.access_log) {
      const size_t q = req.target.find('?');
      s.access_log->write(
          {.remote = req.remote_addr,
           .method = req.method,
           .path = req.path,
           .query = q == std::string::npos ? "" : req.target.substr(q + 1),
           .user_agent = req.get_header_value("User-Agent"),
           .remote_port = req.remote_port,
           .status = res.status,
           .bytes_in = std::max(static_cast<int64_t>(req.body.size()), body_bytes_read),
           .bytes_out = static_cast<int64_t>(res.body.size()),
           .latency_ms = seconds < 0 ? -1.0 : 1000 * seconds});
    }
    ConnectionGuard::answer_sent();  // the next request's headers have their own deadline
  });
  http.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;  // a route's own JSON error
    const std::string message = res.status == 413   ? "the body is larger than the limit"
                                : res.status == 404 ? "no route " + req.method + " " + req.path
                                                    : "HTTP " + std::to_string(res.status);
    res.set_content(json{{"error", message}}.dump(), "application/json");
  });
  http.Post("/translate", s.handle(&Impl::post_translate));
  http.Post("/translator/translate", s.handle(&Impl::post_onmt));
  http.Post("/classify", s.handle(&Impl::post_classify));
  http.Post("/transcribe", s.handle_request(&Impl::post_transcribe));
  http.Post("/stream", s.handle_request(&Impl::post_stream_open));
  http.Post(R"(/stream/([0-9a-f]+))", s.handle_request(&Impl::post_stream_chunk));
  http.Delete(R"(/stream/([0-9a-f]+))", [&s](const httplib::Request& req, httplib::Response& res) {
    if (s.streams->close(req.matches[1]))
      reply(res, 200, {{"closed", true}});
    else
      reply(res, 404, {{"error", "no open stream '" + std::string(req.matches[1]) + "'"}});
  });
  http.Get("/health", [&s](const httplib::Request&, httplib::Response& res) {
    json names = json::array();
    for (const auto& m : s.models) names.push_back(m->name);
    reply(res, 200, {{"status", "ok"}, {"models", names}});
  });
  http.Get("/models", [&s](const httplib::Request&, httplib::Response& res) {
    reply(res, 200, s.model_list());
  });
  http.Get("/metrics", [&s](const httplib::Request&, httplib::Response& res) {
    res.set_content(s.metrics.text(), "text/plain; version=0.0.4");
  });
  http.Get("/", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(page_html(), "text/html; charset=utf-8");
  });
  // a route asked with the wrong method: 405 and the method it takes (HTTP's Allow), not 404
  auto wrong_method = [](const char* allow) {
    return [allow](const httplib::Request& req, httplib::Response& res) {
      res.set_header("Allow", allow);
      reply(res, 405, {{"error", req.method + " " + req.path + ": this route takes " + allow}});
    };
  };
  for (const char* route :
       {"/translate", "/translator/translate", "/classify", "/transcribe", "/stream"}) {
    http.Get(route, wrong_method("POST"));
    http.Put(route, wrong_method("POST"));
    http.Delete(route, wrong_method("POST"));
    http.Patch(route, wrong_method("POST"));
  }
  for (const char* route : {"/health", "/models", "/metrics", "/"}) {
    http.Post(route, wrong_method("GET"));
    http.Put(route, wrong_method("GET"));
    http.Delete(route, wrong_method("GET"));
    http.Patch(route, wrong_method("GET"));
  }
}

Server::~Server() = default;

void Server::run(const std::function<void(int port)>& on_listening) {
  Impl& s = *impl_;
  int port = s.o.port;
  if (port == 0) {
    port = s.http.bind_to_any_port(s.o.host);
    check(port > 0, "serve: cannot listen on ", s.o.host, " (any port)");
  } else {
    check(s.http.bind_to_port(s.o.host, port), "serve: cannot listen on ", s.o.host, ":", port,
          " (in use, or not an address of this machine)");
  }
  s.guard->listen_on(port);  // its backlog widened, its connections guarded
  if (on_listening) on_listening(port);
  s.http.listen_after_bind();  // returns after stop(), the requests in flight answered
  for (auto& m : s.models)
    if (m->batcher) m->batcher->stop();
}

void Server::stop() {
  impl_->guard->shutdown_waiting();  // idle and slow connections: their threads end now
  impl_->http.stop();
}

}  // namespace heed::serve
