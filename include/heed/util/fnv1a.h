// The 64-bit FNV-1a hash (Fowler, Noll and Vo), fed in pieces: h = (h xor byte) * prime over every
// byte. Equal bytes give equal hashes, and different bytes, with all but certainty, different
// ones: the fingerprint of a file's contents (io/files.h) and of a decoding's outputs
// (bench/decode_bench.h).
// Leaves out: any resistance to a chosen collision (not a cryptographic hash).
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace heed {

class Fnv1a {
 public:
  void add(std::string_view bytes) {
    for (const char c : bytes) value_ = (value_ ^ static_cast<unsigned char>(c)) * kPrime;
  }
  uint64_t value() const { return value_; }
  // 16 lower-case hexadecimal digits
  std::string hex() const {
    char s[17];
    std::snprintf(s, sizeof s, "%016llx", static_cast<unsigned long long>(value_));
    return s;
  }

 private:
  static constexpr uint64_t kPrime = 0x100000001b3ULL;
  uint64_t value_ = 0xcbf29ce484222325ULL;  // the offset basis
};

}  // namespace heed
