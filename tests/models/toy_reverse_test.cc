// End to end: the toy GRU encoder-decoder learns to reverse sequences; a run resumed from a
// checkpoint continues exactly as the uninterrupted run; same seed, same run.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "heed/io/model_dir.h"
#include "heed/train/checkpoint.h"
#include "heed/train/optimizer.h"
#include "heed/train/toy_reverse_demo.h"

namespace heed {
namespace {

TEST(ToyReverse, LearnsToReverseSequences) {
  toy::ReverseDemoOptions o;
  o.task.max_len = 5;
  o.steps = 500;
  o.model.hidden = 64;
  toy::ReverseDemoResult r = toy::run_reverse_demo(o, nullptr);
  EXPECT_GT(r.sequence_accuracy, 0.9) << "final loss " << r.final_loss;
  EXPECT_LT(r.final_loss, 0.2);
}

TEST(ToyReverse, SameSeedSameRun) {
  toy::ReverseDemoOptions o;
  o.steps = 30;
  o.model.hidden = 32;
  auto a = toy::run_reverse_demo(o, nullptr), b = toy::run_reverse_demo(o, nullptr);
  EXPECT_EQ(a.final_loss, b.final_loss);
}

struct TrainingRun {
  ParameterStore params;
  Rng rng{11};
  toy::GruSeq2Seq model{{.vocab = 12, .embed = 8, .hidden = 16}, Scope(params, rng, "toy")};
  Optimizer opt{{}, params};
  // Trains steps [from, to) and returns their losses.
  std::vector<float> train(int64_t from, int64_t to) {
    std::vector<float> losses;
    Graph g;
    for (int64_t step = from; step < to; ++step) {
      toy::Batch b = toy::sample_batch({}, 16, rng);
      Var loss = model.loss(g, b);
      losses.push_back(loss.value().data()[0]);
      g.backward(loss);
      clip_grad_norm(params, 1.0);
      opt.step(1e-2f);
      g.clear();
    }
    return losses;
  }
};

TEST(ToyReverse, ResumeFromCheckpointContinuesExactly) {
  std::string dir =
      (std::filesystem::temp_directory_path() / ("heed_resume_" + std::to_string(::getpid())))
          .string();
  TrainingRun straight;
  std::vector<float> expected = straight.train(0, 20);

  std::vector<float> got;
  {
    TrainingRun first;  // trains 10 steps, checkpoints, and is gone (as if killed)
    got = first.train(0, 10);
    TrainerState st;
    st.step = 10;
    st.rng = first.rng.state();
    save_checkpoint(dir, {{"model", "toy"}}, first.params, first.opt, st);
  }
  TrainingRun resumed;  // fresh weights and RNG, replaced by the checkpoint
  TrainerState st = load_checkpoint(dir, resumed.params, resumed.opt);
  resumed.rng.set_state(st.rng);
  ASSERT_EQ(st.step, 10);
  std::vector<float> rest = resumed.train(st.step, 20);
  got.insert(got.end(), rest.begin(), rest.end());
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "step " << i;
  for (Parameter* p : straight.params.all())
    EXPECT_EQ(std::memcmp(p->value.data(), resumed.params.get(p->name).value.data(),
                          p->value.numel() * 4),
              0)
        << p->name;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace heed
