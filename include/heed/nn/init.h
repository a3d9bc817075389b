// Parameter initialisers and Scope, which names parameters by their place in the layer tree.
// Leaves out: layers themselves (one file per layer under nn/).
#pragma once

#include <map>
#include <string>
#include <string_view>

#include "heed/autograd/parameter.h"
#include "heed/kernels/random.h"

namespace heed {

struct Init {
  enum class Kind { Zeros, Constant, Uniform, Normal, GlorotUniform, GlorotNormal, Orthogonal };
  Kind kind = Kind::Zeros;
  float value = 0.f;  // Constant: the value; Uniform: the bound a of U(-a, a); Normal: the stddev
  int blocks = 1;     // Orthogonal: split dim 0 into this many square-ish blocks (one per gate)

  static Init zeros() { return {Kind::Zeros}; }
  static Init ones() { return {Kind::Constant, 1.f}; }
  static Init constant(float v) { return {Kind::Constant, v}; }
  static Init uniform(float bound) { return {Kind::Uniform, bound}; }
  static Init normal(float stddev) { return {Kind::Normal, stddev}; }
  // Glorot & Bengio 2010: U(-a, a), a = sqrt(6 / (fan_in + fan_out)); N(0, 2 / (fan_in + fan_out))
  static Init glorot_uniform() { return {Kind::GlorotUniform}; }
  static Init glorot_normal() { return {Kind::GlorotNormal}; }
  // Saxe et al. 2014: each of `blocks` row blocks (e.g. the 3 gates of U [3H, H]) orthogonal.
  static Init orthogonal(int blocks = 1) { return {Kind::Orthogonal, 0.f, blocks}; }
};

// Fills t; fan_out = dim 0, fan_in = the product of the other dims (W is [out, in]).
void initialize(Tensor& t, const Init& init, Rng& rng);

// What a model file holds, name -> shape: a loading Scope checks each parameter against it as it
// is created, before allocating it, so that a config.json that disagrees with its weights (a
// hostile "enc_layers": 100000) fails at its first extra or misshapen tensor, naming `file`.
struct ExpectedShapes {
  std::map<std::string, Shape> shapes;
  std::string file;
};

// A node of the parameter tree: Scope("encoder") / "layer_0" / "gru" names "encoder/layer_0/gru/U".
class Scope {
 public:
  Scope(ParameterStore& store, Rng& rng, std::string prefix = "")
      : store_(&store), rng_(&rng), prefix_(std::move(prefix)) {}
  // A scope whose parameters are created zero and not initialised: their values are about to be
  // read from a model file, every one (load_weights refuses a file that lacks one). Random
  // initialisation took most of the time of loading a model for decoding.
  // With `expected`, every parameter must be one the file holds, of the same shape.
  static Scope for_loading(ParameterStore& store, const ExpectedShapes* expected = nullptr) {
    return {&store, nullptr, "", expected};
  }
  Scope operator/(std::string_view child) const { return {store_, rng_, path(child), expected_}; }
  std::string path(std::string_view name) const;
  // Creates and initialises (unless for_loading) a parameter named path(name).
  Parameter& param(std::string_view name, const Shape& shape, const Init& init,
                   bool row_sparse = false) const;

 private:
  Scope(ParameterStore* store, Rng* rng, std::string prefix,
        const ExpectedShapes* expected = nullptr)
      : store_(store), rng_(rng), prefix_(std::move(prefix)), expected_(expected) {}
  ParameterStore* store_;
  Rng* rng_;  // nullptr: for_loading
  std::string prefix_;
  const ExpectedShapes* expected_ = nullptr;  // loading: what the weights file holds
};

}  // namespace heed
