// The server's batcher (serve/batcher.h) when clients stop waiting: a search whose stop flag is
// set ends at its next step (greedy and beam); a cancelled request leaves the queue at once; a
// running batch whose requests are all cancelled frees the worker within a second, and the next
// request is served. The model is a golden one that never ends a sentence (EOS's output bias
// -1e4), so that its searches run to their length limit and can be stopped half-way.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <future>
#include <string>
#include <vector>

#include "heed/data/vocab.h"
#include "heed/decode/greedy.h"
#include "heed/decode/translator.h"
#include "heed/io/safetensors.h"
#include "heed/serve/batcher.h"
#include "heed/serve/metrics.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace heed::serve {
namespace {

std::string endless_model(const testing::TempDir& dir) {
  const fs::path from = fs::path(HEED_SOURCE_DIR) / "tests/golden/models/rnn-bahdanau";
  const fs::path to = dir / "endless";
  fs::create_directories(to);
  for (const auto& e : fs::directory_iterator(from))
    fs::copy_file(e.path(), to / e.path().filename());
  Safetensors st = read_safetensors((to / "model.safetensors").string());
  st.tensors.at("decoder/out/b").data()[Vocab::kEos] = -1e4F;
  write_safetensors((to / "model.safetensors").string(),
                    NamedTensors(st.tensors.begin(), st.tensors.end()));
  return to.string();
}

std::vector<std::string> words(size_t n) {
  return std::vector<std::string>(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZABCDEFGHIJKLMNOPQRSTUVWXYZ");
}

TEST(Batcher, ASetStopFlagEndsTheSearchAtItsNextStep) {
  testing::TempDir dir;
  const Translator t({endless_model(dir)}, {.threads = 1});
  std::atomic<bool> stop{true};
  for (int beam : {1, 3}) {
    SCOPED_TRACE(beam);
    EXPECT_THROW(t.translate(words(2), {.beam_size = beam, .stop = &stop}), DecodingStopped);
    // unset, the same call decodes to the limit: 52 source units x 2 + 10
    const std::atomic<bool> go{false};
    const auto r = t.translate(words(1), {.beam_size = beam, .stop = &go});
    EXPECT_EQ(r.at(0).hypotheses.at(0).tokens.size(), 114U);
  }
}

TEST(Batcher, CancelledRequestsLeaveTheQueueAndFreeTheWorker) {
  testing::TempDir dir;
  const Translator t({endless_model(dir)}, {.threads = 1});
  Metrics metrics;
  Batcher b(t, {.max_batch = 64, .max_wait = std::chrono::milliseconds(0), .max_queue = 4096},
            metrics);
  // a long request (64 sentences x beam 8 to 52 x 40 + 10 units each), then a queued one
  const TranslationOptions heavy{.beam_size = 8, .max_len_ratio = 40, .max_batch_size = 64};
  auto running = b.submit(words(64), heavy);
  ASSERT_TRUE(running);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the worker has taken it
  auto queued = b.submit(words(1), {});
  ASSERT_TRUE(queued);
  b.cancel(queued->id);
  ASSERT_EQ(queued->results.wait_for(std::chrono::seconds(0)), std::future_status::ready)
      << "a cancelled request stayed in the queue";
  EXPECT_THROW(queued->results.get(), std::future_error);  // never answered
  EXPECT_EQ(running->results.wait_for(std::chrono::milliseconds(0)), std::future_status::timeout)
      << "the long request was not long";
  const auto cancelled = Clock::now();
  b.cancel(running->id);
  ASSERT_EQ(running->results.wait_for(std::chrono::seconds(1)), std::future_status::ready)
      << "the cancelled batch still held the worker after 1 s";
  EXPECT_THROW(running->results.get(), DecodingStopped);
  // the worker serves the next request at once
  auto next = b.submit({"ABC"}, {.max_len_ratio = 1});
  ASSERT_TRUE(next);
  ASSERT_EQ(next->results.wait_for(std::chrono::seconds(1)), std::future_status::ready);
  EXPECT_EQ(next->results.get().at(0).hypotheses.at(0).tokens.size(), 13U);  // 3 x 1 + 10
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - cancelled).count(), 1.0);
}

}  // namespace
}  // namespace heed::serve
