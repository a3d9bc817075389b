// PyTorch's checkpoint files (torch.save since PyTorch 1.6: a ZIP archive of data.pkl, the
// pickled objects, and data/<key>, each storage's bytes), read without PyTorch: the pickle as a
// value tree (io/pickle.h) and each tensor it names as float32.
// Leaves out: the legacy (pre-1.6, not ZIP) format, sparse and quantised tensors, dtypes other
// than float32, float16, bfloat16 and float64.
#pragma once

#include <map>
#include <string>

#include "heed/io/pickle.h"
#include "heed/tensor/tensor.h"

namespace heed {

struct TorchFile {
  std::string path;
  pickle::Value root;                           // what torch.save was given
  std::map<std::string, std::string> storages;  // key -> bytes

  // Whether `v` is a tensor (torch._utils._rebuild_tensor_v2, or a Parameter around one).
  static bool is_tensor(const pickle::Value& v);
  // Its values as float32 in C order; an Error naming `what` for anything else.
  Tensor tensor(const pickle::Value& v, const std::string& what) const;
};

TorchFile read_torch_file(const std::string& path);

}  // namespace heed
