// Test support: readable names for heed enums in GoogleTest messages, and the list of every
// attention mechanism for parameterised tests.
#pragma once

#include <ostream>
#include <string>

#include "heed/nn/attention/attention.h"

namespace heed {

inline void PrintTo(AttentionKind k, std::ostream* os) {
  *os << attention_name(k);
}

inline constexpr AttentionKind kAllAttentionKinds[] = {
    AttentionKind::None,         AttentionKind::Bahdanau,    AttentionKind::LuongDot,
    AttentionKind::LuongGeneral, AttentionKind::LuongConcat, AttentionKind::LocalM,
    AttentionKind::LocalP,       AttentionKind::Monotonic,   AttentionKind::Mocha,
    AttentionKind::Sigmoid,      AttentionKind::Structured};

// A GoogleTest-safe test name: "luong-dot" -> "luong_dot".
template <class Info>
std::string attention_test_name(const Info& info) {
  std::string n = attention_name(info.param);
  for (char& c : n)
    if (c == '-') c = '_';
  return n;
}

}  // namespace heed
