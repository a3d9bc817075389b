// Test support: readable names for heed enums in GoogleTest messages.
#pragma once

#include <ostream>

#include "heed/nn/attention/attention.h"

namespace heed {

inline void PrintTo(AttentionKind k, std::ostream* os) { *os << attention_name(k); }

}  // namespace heed
