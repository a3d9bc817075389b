// The memory a model may claim: sizes read from files and configs are checked against it before
// anything is allocated, so that an enormous dimension is an error naming its field instead of
// std::bad_alloc (or the kernel's OOM killer).
// Leaves out: tracking what is allocated; the budget bounds single requests, not the sum.
#pragma once

#include <unistd.h>

#include <atomic>
#include <string>

#include "heed/util/error.h"

namespace heed {

namespace detail {
inline std::atomic<double>& memory_budget_override() {
  static std::atomic<double> bytes{0};
  return bytes;
}
}  // namespace detail

// Bytes: the machine's physical memory unless set_memory_budget() chose less (the fuzzers do,
// to stay within their RSS limit); 0 when neither is known.
inline double memory_budget() {
  if (const double b = detail::memory_budget_override().load(); b > 0) return b;
  static const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                                 static_cast<double>(::sysconf(_SC_PAGE_SIZE));
  return physical > 0 ? physical : 0;
}

// bytes <= 0 restores the default.
inline void set_memory_budget(double bytes) {
  detail::memory_budget_override().store(bytes);
}

// An Error "WHAT would take X GiB, more than the Y GiB of memory heed may use here" when `bytes`
// exceed the budget.
inline void check_memory(double bytes, const std::string& what) {
  const double budget = memory_budget();
  check(budget <= 0 || bytes <= budget, what, " would take ", bytes / (1 << 30),
        " GiB, more than the ", budget / (1 << 30), " GiB of memory heed may use here");
}

}  // namespace heed
