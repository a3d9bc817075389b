// Batching across concurrent requests (see the header).
// Leaves out: splitting a request larger than max_batch (it is decoded alone, in the
// translator's own batches).
#include "heed/serve/batcher.h"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <utility>

#include "heed/decode/limits.h"
#include "heed/util/error.h"

namespace heed::serve {
namespace {
std::string options_key(const TranslationOptions& o) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "%d/%d/%.17g/%.17g/%lld/%lld/%d/%d/%d/%d/%d", o.beam_size,
                o.num_hypotheses, o.length_penalty, o.max_len_ratio,
                static_cast<long long>(o.max_decoding_length),
                static_cast<long long>(o.max_input_length), o.return_attention, o.attention_layer,
                o.attention_head, o.attention_distribution, o.replace_unknowns);
  return buf;
}
}  // namespace

Batcher::Batcher(const Translator& translator, BatchLimits limits, Metrics& metrics)
    : translator_(translator), limits_(limits), metrics_(metrics) {
  check(limits_.max_batch >= 1 && limits_.max_queue >= 1 && limits_.max_wait.count() >= 0,
        "batcher: max_batch and max_queue must be >= 1, max_wait >= 0");
  worker_ = std::thread([this] { run(); });
}

Batcher::~Batcher() {
  stop();
}

std::optional<Batcher::Ticket> Batcher::submit(std::vector<std::string> sentences,
                                               const TranslationOptions& options) {
  const auto n = static_cast<int64_t>(sentences.size());
  Request r{
      std::move(sentences), options, options_key(options), {}, std::chrono::steady_clock::now()};
  Ticket ticket{r.done.get_future()};
  {
    const std::lock_guard lock(mu_);
    if (stopping_ || queued_ + n > limits_.max_queue) return std::nullopt;
    queued_ += n;
    r.id = ticket.id = next_id_++;
    queue_.push_back(std::move(r));
  }
  metrics_.queue_depth(n);
  cv_.notify_all();
  return ticket;
}

void Batcher::cancel(uint64_t id) {
  int64_t left = 0;  // sentences taken out of the queue
  {
    const std::lock_guard lock(mu_);
    const auto queued =
        std::find_if(queue_.begin(), queue_.end(), [&](const Request& r) { return r.id == id; });
    if (queued != queue_.end()) {
      left = static_cast<int64_t>(queued->sentences.size());
      queued_ -= left;
      queue_.erase(queued);
    } else if (std::find(running_.begin(), running_.end(), id) != running_.end() &&
               ++running_cancelled_ == running_.size()) {
      stop_running_.store(true, std::memory_order_relaxed);
    }
  }
  if (left > 0) metrics_.queue_depth(-left);
  cv_.notify_all();
}

void Batcher::stop() {
  {
    const std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (worker_.joinable()) worker_.join();
}

int64_t Batcher::waiting_like(const std::string& key) const {
  int64_t n = 0;
  for (const Request& r : queue_)
    if (r.key == key) n += static_cast<int64_t>(r.sentences.size());
  return n;
}

void Batcher::run() {
  for (;;) {
    std::vector<Request> batch;
    int64_t total = 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and every request answered
      // the oldest request opens the batch and waits for company until full or its time is up
      const std::string key = queue_.front().key;
      const auto deadline = queue_.front().arrived + limits_.max_wait;
      cv_.wait_until(lock, deadline,
                     [&] { return stopping_ || waiting_like(key) >= limits_.max_batch; });
      // then every request with its options, in arrival order, while the batch has room (a
      // request larger than the batch goes alone)
      for (auto it = queue_.begin(); it != queue_.end();) {
        const auto n = static_cast<int64_t>(it->sentences.size());
        if (it->key == key && (batch.empty() || total + n <= limits_.max_batch)) {
          total += n;
          batch.push_back(std::move(*it));
          it = queue_.erase(it);
        } else {
          ++it;
        }
      }
      queued_ -= total;
      running_.clear();
      for (const Request& r : batch) running_.push_back(r.id);
      running_cancelled_ = 0;
      stop_running_.store(false, std::memory_order_relaxed);
    }
    metrics_.queue_depth(-total);
    metrics_.batch(total);
    std::vector<std::string> sentences;
    sentences.reserve(static_cast<size_t>(total));
    for (const Request& r : batch)
      sentences.insert(sentences.end(), r.sentences.begin(), r.sentences.end());
    TranslationOptions o = batch.front().options;
    // decoded in the translator's batches of at most kMaxRows hypotheses (decode/limits.h)
    o.max_batch_size = std::min<int64_t>(std::max<int64_t>(limits_.max_batch, o.max_batch_size),
                                         limits::kMaxRows / std::max(1, o.beam_size));
    o.stop = &stop_running_;
    try {
      Results all = translator_.translate(sentences, o);
      size_t next = 0;
      for (Request& r : batch) {
        Results mine(std::make_move_iterator(all.begin() + static_cast<std::ptrdiff_t>(next)),
                     std::make_move_iterator(
                         all.begin() + static_cast<std::ptrdiff_t>(next + r.sentences.size())));
        next += r.sentences.size();
        r.done.set_value(std::move(mine));
      }
    } catch (...) {  // (DecodingStopped too: nobody waits for those futures)
      for (Request& r : batch) r.done.set_exception(std::current_exception());
    }
    const std::lock_guard lock(mu_);
    running_.clear();
  }
}

}  // namespace heed::serve
