// Batching across concurrent requests, as CTranslate2's and Marian's servers do: requests (each
// a list of sentences with its options) wait in a bounded queue of one model; one worker takes
// the oldest, adds the later ones with the same options until max_batch sentences are together
// or max_wait has passed since the oldest arrived, decodes them as one batch and hands each
// request its own results. A full queue refuses a request at once (the server's 503). A request
// whose client stopped waiting (the server's 504) is cancelled: taken out of the queue, or, once
// every request of the running batch is cancelled, the batch's search stops at its next step.
// Leaves out: HTTP (server.h) and priorities (first come, first served).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "heed/decode/translator.h"
#include "heed/serve/metrics.h"

namespace heed::serve {

struct BatchLimits {
  int64_t max_batch = 32;                 // sentences decoded together (1: one at a time)
  std::chrono::milliseconds max_wait{0};  // how long the oldest request may wait for company
                                          // (0: none; under load requests queue while the
                                          // batch before them decodes, and go together)
  int64_t max_queue = 1024;               // sentences waiting, at most
};

class Batcher {
 public:
  using Results = std::vector<TranslationResult>;
  // The translator stays the caller's and must outlive the batcher.
  Batcher(const Translator& translator, BatchLimits limits, Metrics& metrics);
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  struct Ticket {
    std::future<Results> results;  // the request's results, in its order
    uint64_t id = 0;               // what cancel() takes
  };
  // The request's ticket, or nullopt when the queue cannot take its sentences.
  std::optional<Ticket> submit(std::vector<std::string> sentences,
                               const TranslationOptions& options);
  // Nobody waits for request `id` any more: it leaves the queue, or, when it is in the running
  // batch and the batch's other requests are cancelled too, the batch stops decoding. Its future
  // is then never satisfied with results. A finished or unknown id: nothing happens.
  void cancel(uint64_t id);
  // Answers every queued request, then ends the worker; submit() refuses from then on.
  void stop();

 private:
  struct Request {
    std::vector<std::string> sentences;
    TranslationOptions options;
    std::string key;  // the options that must agree for requests to share a batch
    std::promise<Results> done;
    std::chrono::steady_clock::time_point arrived;
    uint64_t id = 0;
  };
  void run();
  int64_t waiting_like(const std::string& key) const;  // queued sentences with this key

  const Translator& translator_;
  BatchLimits limits_;
  Metrics& metrics_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Request> queue_;
  int64_t queued_ = 0;  // sentences in queue_
  bool stopping_ = false;
  uint64_t next_id_ = 1;
  std::vector<uint64_t> running_;          // the ids of the batch being decoded
  size_t running_cancelled_ = 0;           // how many of them were cancelled
  std::atomic<bool> stop_running_{false};  // all of them: its search stops (TranslationOptions)
  std::thread worker_;
};

}  // namespace heed::serve
