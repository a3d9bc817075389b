// Optimisers (SGD with momentum, Adam, AdamW, Adadelta), exponential smoothing of the weights and
// global gradient-norm clipping.
// Leaves out: learning-rate policy (train/schedule.h) and gradient accumulation across batches.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "heed/autograd/parameter.h"

namespace heed {

struct OptimizerConfig {
  enum class Kind { Sgd, Adam, AdamW, Adadelta };
  Kind kind = Kind::Adam;
  float momentum = 0.f;        // SGD: v = momentum v + g,  p -= lr v
  float beta1 = 0.9f;          // Adam: first-moment decay
  float beta2 = 0.999f;        // Adam: second-moment decay
  float eps = 1e-8f;           // Adam: denominator epsilon
  float weight_decay = 0.f;    // SGD/Adam/Adadelta: L2 added to g;  AdamW: p -= lr wd p (decoupled)
  float rho = 0.95f;           // Adadelta: decay of E[g^2] and E[dx^2] (Zeiler 2012; Kim 2014)
  float adadelta_eps = 1e-6f;  // Adadelta: epsilon inside both square roots
  // > 0: a smoothed copy of the weights follows them, s = (1 - a_t) s + a_t w after update t,
  // a_t = max(smoothing, 1/t): the mean of all iterates until t = 1/smoothing, an exponential
  // moving average after (Polyak & Juditsky 1992; Marian's --exponential-smoothing)
  float smoothing = 0.f;
};

class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, ParameterStore& params);

  // One update of every parameter with learning rate lr on the gradients times grad_scale
  // (clip_scale's factor: clipping without a pass of its own), then clears the gradients.
  void step(float lr, float grad_scale = 1.f);
  int64_t steps() const { return steps_; }
  const OptimizerConfig& config() const { return config_; }

  // With config().smoothing > 0: exchanges the weights and their smoothed copy (call it twice
  // to go back); validation and saved models use the smoothed weights, training the others.
  void swap_smoothed();

  // State for exact resume: the moment tensors (and the smoothed weights) named
  // "<slot>/<parameter>", and the step count.
  std::vector<std::pair<std::string, Tensor>> state() const;
  void load_state(const std::map<std::string, Tensor>& tensors, int64_t steps,
                  const std::string& file);

 private:
  OptimizerConfig config_;
  ParameterStore* params_;
  int64_t steps_ = 0;
  std::vector<Tensor> m_, v_;  // per parameter, in store order ([param shape]); v_ unused by SGD
  std::vector<Tensor> s_;      // per parameter: the smoothed weights ([param shape]); empty: off
  // Adadelta on row-sparse tables: the step each row was last updated at (empty: all current)
  std::vector<std::vector<int64_t>> last_;
  bool lazy(const Parameter& p) const;
  void smooth_weights(size_t k);  // parameter k's smoothed copy follows its update
};

// Gradient clipping (Pascanu et al. 2013): the global L2 norm of all gradients, and the factor
// that brings it down to max_norm (1 when it is at most max_norm, or max_norm <= 0), for
// Optimizer::step's grad_scale.
double grad_norm(ParameterStore& params);  // non-const: walks the store's cached view
float clip_scale(double norm, double max_norm);
// Scales all gradients by clip_scale(grad_norm(params), max_norm); returns the norm before.
double clip_grad_norm(ParameterStore& params, double max_norm);

}  // namespace heed
