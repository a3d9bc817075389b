// Random numbers: Rng (xoshiro256**, a small state that checkpoints save and restore exactly)
// and a counter-based hash for dropout masks, reproducible whatever the thread count.
// Leaves out: distributions beyond uniform and normal.
#pragma once

#include <array>
#include <cstdint>

namespace heed {

// SplitMix64 finaliser (Steele et al. 2014): a bijective hash of 64 bits.
inline uint64_t mix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}
// MurmurHash3's 32-bit finaliser (Appleby 2011): a bijective mix of 32 bits. Only 32-bit
// multiplies, which the compiler vectorises (16 lanes per AVX-512 instruction).
inline uint32_t mix32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x85EBCA6Bu;
  x ^= x >> 13;
  x *= 0xC2B2AE35u;
  return x ^ (x >> 16);
}
// 24 uniform bits from (stream, index): element i of a dropout mask, whatever the thread count.
inline uint32_t hash_bits24(uint64_t stream, uint32_t i) {
  return mix32(static_cast<uint32_t>(stream) ^ mix32(i + static_cast<uint32_t>(stream >> 32))) >> 8;
}

class Rng {
 public:
  using State = std::array<uint64_t, 4>;
  explicit Rng(uint64_t seed = 1) { reseed(seed); }
  void reseed(uint64_t seed) {
    for (auto& s : state_) s = seed = mix64(seed);
  }
  uint64_t next() {  // xoshiro256** (Blackman & Vigna 2018)
    uint64_t result = rotl(state_[1] * 5, 7) * 9, t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }
  float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
  float uniform(float lo, float hi) { return lo + (hi - lo) * uniform(); }
  int64_t below(int64_t n) { return static_cast<int64_t>(next() % static_cast<uint64_t>(n)); }
  float normal();  // Box-Muller
  const State& state() const { return state_; }
  void set_state(const State& s) { state_ = s; }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  State state_{};
};

}  // namespace heed
