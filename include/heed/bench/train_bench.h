// `heed train --bench` (`heed bench train` is the same command): any recipe trained on its real
// data for a budget (--max-minutes or --max-steps), no validation and nothing kept, then one
// JSON line of how fast the steps ran — target tokens/s, updates/s, the process's peak
// memory, the products' FLOPs per target token and per second, and that rate as a fraction
// of the GEMM rate this CPU reached in the same process (model FLOPs utilisation, against the
// bf16 rate when the products are bf16) — with the machine's fields (machine.h).
// Leaves out: the training itself (train/loop.h runs it; LoopResult counts the steps).
#pragma once

#include <nlohmann/json.hpp>

#include "heed/autograd/graph.h"
#include "heed/bench/machine.h"
#include "heed/train/loop.h"

namespace heed::bench {

// The line's fields for a run's result `r`.
nlohmann::json training_speed(const LoopResult& r, Precision precision, const MachineInfo& machine);

}  // namespace heed::bench
