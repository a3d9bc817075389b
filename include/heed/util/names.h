// The names of an enum's values, one table per enum: parsing (with an error that lists the
// choices), printing (config.json, logs), and the "a | b | c" of --help all read the same table,
// and the command line turns a flag's string into the enum with it at parse time (cli/).
// Leaves out: the tables themselves (each beside its enum).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "heed/util/error.h"

namespace heed {

template <class E>
struct Named {
  E value;
  const char* name;
};

// The table of E: each enum with names declares `std::span<const Named<E>> names(E)` beside
// it (found by argument-dependent lookup; the argument only selects the overload).
template <class E>
std::span<const Named<E>> name_table() {
  return names(E{});
}

// "a | b | c"
template <class E>
std::string choices() {
  std::string s;
  for (const auto& n : name_table<E>()) s += (s.empty() ? "" : " | ") + std::string(n.name);
  return s;
}

template <class E>
const char* name_of(E value) {
  for (const auto& n : name_table<E>())
    if (n.value == value) return n.name;
  return "?";
}

// `what` names the option or key in the error: "unknown attention 'x' (expected none | ...)".
template <class E>
E parse_name(std::string_view name, std::string_view what) {
  for (const auto& n : name_table<E>())
    if (name == n.name) return n.value;
  fail("unknown ", what, " '", name, "' (expected ", choices<E>(), ")");
}

}  // namespace heed
