// The weights decoding runs on, as CTranslate2's compute_type: float32, or int8 (every weight
// matrix quantised per row at load time, products by oneDNN's s8s8s32 GEMM: faster, scores
// differ slightly). The Translator and the Recognizer both take it; ParameterStore's
// prepare_for_inference makes the copies.
// Leaves out: the quantisation itself (kernels/quantize.h).
#pragma once

#include <span>

#include "heed/util/names.h"

namespace heed {

enum class ComputeType { Float32, Int8 };

inline std::span<const Named<ComputeType>> names(ComputeType) {
  static constexpr Named<ComputeType> kNames[] = {{ComputeType::Float32, "float32"},
                                                  {ComputeType::Int8, "int8"}};
  return kNames;
}

}  // namespace heed
