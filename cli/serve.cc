// `heed serve`: models behind HTTP (serve/server.h has the routes), until SIGTERM or SIGINT,
// which stop accepting, answer the requests in flight and exit 0.
// Leaves out: the server itself (libheed's serve/).
#include <pthread.h>

#include <csignal>
#include <filesystem>
#include <iostream>
#include <thread>

#include "commands.h"
#include "heed/util/error.h"

namespace heed::cli {

void ServeCommand::add(CLI::App& parent, int& threads) {
  app = parent.add_subcommand(
      "serve",
      "Serve models over HTTP: POST /translate, /translator/translate (OpenNMT-py's), /classify, "
      "/transcribe, /stream (recognition as the audio comes); GET /health, /models, /metrics "
      "(Prometheus), and / (a page that shows the attention, and listens to the microphone)");
  app->add_option("--model", models,
                  "NAME=DIR: a model directory served under NAME (an encoder-decoder, a "
                  "classifier or a recognizer; a bare DIR is named by its last component); "
                  "repeat for more")
      ->required();
  app->add_option("--host", options.host, "Address to listen on")->capture_default_str();
  app->add_option("--port", options.port, "Port (0: any free port, printed)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  app->add_option("--max-batch", options.batching.max_batch,
                  "Sentences decoded together, across requests (1: one request at a time)")
      ->check(CLI::Range(int64_t{1}, int64_t{4096}))
      ->capture_default_str();
  app->add_option("--max-wait-ms", max_wait_ms,
                  "How long a request may wait for others to share its batch (0: a batch "
                  "starts as soon as the model is free, with the requests waiting by then)")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  app->add_option("--max-queue", options.batching.max_queue,
                  "Sentences waiting per model; beyond it requests get 503 with Retry-After")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 24))
      ->capture_default_str();
  app->add_option("--max-body", options.max_body_bytes, "Largest request body, bytes (413 beyond)")
      ->check(CLI::Range(size_t{64}, size_t{1} << 30))
      ->capture_default_str();
  app->add_option("--max-sentences", options.max_sentences, "Sentences per request (400 beyond)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20))
      ->capture_default_str();
  app->add_option("--max-sentence-bytes", options.max_sentence_bytes,
                  "Bytes per sentence (400 beyond)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 24))
      ->capture_default_str();
  app->add_option("--max-beam", options.max_beam, "Largest beam and n-best a request may ask")
      ->check(CLI::Range(1, 256))
      ->capture_default_str();
  app->add_option("--timeout-ms", options.timeout_ms, "A request not answered by then gets 504")
      ->check(CLI::Range(1, 3600 * 1000))
      ->capture_default_str();
  app->add_option("--http-threads", options.http_threads,
                  "Connections served at once (each waits for its batch in one)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app->add_option("--max-connections", options.max_connections,
                  "Connections open at once, waiting ones included; one more is answered 503 "
                  "and closed")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  app->add_option("--header-timeout-ms", options.header_timeout_ms,
                  "A connection must send its request line and headers within this, from its "
                  "connection or its last answer (keep-alive's wait included), or it is closed: "
                  "slow clients cannot hold the HTTP threads. The body must follow within "
                  "--timeout-ms")
      ->check(CLI::Range(100, 3600 * 1000))
      ->capture_default_str();
  app->add_option("--max-streams", options.max_streams,
                  "Streaming recognition sessions (POST /stream) open at once; one more is 503")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app->add_option("--stream-idle-ms", options.stream_idle_ms,
                  "A streaming session sent no chunk for this long is closed (its next: 404)")
      ->check(CLI::Range(100, 3600 * 1000))
      ->capture_default_str();
  app->add_option("--ctc-lookahead", options.recognizers.ctc_lookahead,
                  "Joint CTC-MoChA, as transcribe's: every recognizer served (each trained with "
                  "--ctc-weight and --attention monotonic or mocha) scores its outputs by "
                  "attention and CTC, CTC reading this many 40 ms positions past each stop, on "
                  "/transcribe and /stream alike; unset: attention alone on /stream")
      ->check(CLI::Range(0, 1000));
  add_enum_option(*app, "--compute-type", options.translator.compute_type,
                  "Weights of the encoder-decoders and recognizers: float32 or int8");
  app->add_option("--access-log", options.access_log,
                  "Append one JSON line per answered request to this file (\"-\": stdout): "
                  "time, remote address, method, path, query, status, bytes in and out, latency "
                  "in ms, user agent; never truncated, so logrotate's copytruncate works");
  app->add_option("--threads", threads, "Threads of the kernels (0 = all cores)");
}

int ServeCommand::run() {
  serve::ServeOptions o = options;
  o.batching.max_wait = std::chrono::milliseconds(max_wait_ms);
  for (const std::string& m : models) {
    const size_t eq = m.find('=');
    serve::ServedModel sm;
    if (eq == std::string::npos) {
      sm.dir = m;
      sm.name = std::filesystem::path(m).lexically_normal().filename().string();
      if (sm.name.empty()) sm.name = std::filesystem::path(m).parent_path().filename().string();
    } else {
      sm.name = m.substr(0, eq);
      sm.dir = m.substr(eq + 1);
    }
    check(!sm.name.empty() && !sm.dir.empty(), "--model ", m, ": expected NAME=DIR");
    o.models.push_back(sm);
  }
  // SIGTERM and SIGINT go to one thread (every thread made from here on inherits the mask),
  // which stops the server: run() then returns once the requests in flight are answered.
  // SIGUSR1 is the thread's own wake-up when run() ends otherwise.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGTERM, SIGINT, SIGUSR1}) sigaddset(&signals, sig);
  check(pthread_sigmask(SIG_BLOCK, &signals, nullptr) == 0, "serve: cannot mask signals");
  serve::Server server(o);
  std::thread waiter([&] {
    int sig = 0;
    if (sigwait(&signals, &sig) != 0 || sig == SIGUSR1) return;
    std::cerr << "heed serve: " << (sig == SIGTERM ? "SIGTERM" : "SIGINT")
              << ": answering the requests in flight, then exiting" << std::endl;
    server.stop();
  });
  const auto wake_and_join = [&] {
    pthread_kill(waiter.native_handle(), SIGUSR1);  // nothing to do once it has returned
    waiter.join();
  };
  try {
    server.run([&](int port) {
      std::cerr << "heed serve: listening on http://" << o.host << ":" << port << " (";
      for (size_t i = 0; i < o.models.size(); ++i) std::cerr << (i ? ", " : "") << o.models[i].name;
      std::cerr << ")" << std::endl;
    });
  } catch (...) {
    wake_and_join();
    throw;
  }
  wake_and_join();
  std::cerr << "heed serve: stopped" << std::endl;
  return 0;
}

}  // namespace heed::cli
