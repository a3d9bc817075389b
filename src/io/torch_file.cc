// PyTorch's checkpoint files (see the header).
#include "heed/io/torch_file.h"

#include <bit>
#include <cmath>
#include <cstring>

#include "heed/io/zip.h"
#include "heed/util/error.h"

namespace heed {
namespace {

using pickle::Object;
using pickle::Value;

// A Parameter (torch._utils._rebuild_parameter(data, requires_grad, hooks)) is its data.
Value unwrap(Value v) {
  while (v && v->kind == Object::Kind::Call && v->s == "torch._utils._rebuild_parameter" &&
         !v->items.empty())
    v = v->items[0];
  return v;
}

float from_half(uint16_t h) {  // IEEE 754 binary16 -> binary32
  const uint32_t sign = (h & 0x8000u) << 16, exp = (h >> 10) & 0x1f, man = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal
    const float f = std::ldexp(static_cast<float>(man), -24);
    return sign ? -f : f;
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (man << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (man << 13));
}

}  // namespace

bool TorchFile::is_tensor(const Value& v) {
  const Value t = unwrap(v);
  return t && t->kind == Object::Kind::Call && t->s == "torch._utils._rebuild_tensor_v2";
}

Tensor TorchFile::tensor(const Value& v, const std::string& what) const {
  const Value t = unwrap(v);
  check(is_tensor(t), path, ": ", what, " is a ", t ? t->kind_name() : "nothing", ", not a tensor");
  check(t->items.size() >= 4, path, ": ", what, ": a tensor without its size and strides");
  const Value storage = t->items[0], offset = t->items[1], size = t->items[2], stride = t->items[3];
  check(storage->kind == Object::Kind::Call && storage->s == "persid" &&
            storage->items.size() == 1 && storage->items[0]->kind == Object::Kind::Tuple &&
            storage->items[0]->items.size() >= 3,
        path, ": ", what, ": a tensor whose storage is not a persistent id");
  const std::vector<Value>& pid = storage->items[0]->items;  // ('storage', type, key, ...)
  const std::string type = pid[1]->s, key = pid[2]->s;
  auto it = storages.find(key);
  check(it != storages.end(), path, ": ", what, ": storage ", key, " is not in the archive");
  size_t bytes_per = 4;
  if (type == "torch.HalfStorage" || type == "torch.BFloat16Storage")
    bytes_per = 2;
  else if (type == "torch.DoubleStorage")
    bytes_per = 8;
  else
    check(type == "torch.FloatStorage", path, ": ", what, ": a tensor of ", type,
          " (heed reads float32, float16, bfloat16 and float64)");
  std::vector<int64_t> dims, strides;
  for (const Value& d : size->items) dims.push_back(d->i);
  for (const Value& s : stride->items) strides.push_back(s->i);
  check(dims.size() == strides.size(), path, ": ", what, ": size and stride differ in rank");
  Shape shape(dims);
  Tensor out = Tensor::empty(shape);
  const std::string& data = it->second;
  const int64_t n = out.numel();
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t at = offset->i;
    for (size_t d = 0; d < dims.size(); ++d) at += index[d] * strides[d];
    check(at >= 0 && static_cast<size_t>(at + 1) * bytes_per <= data.size(), path, ": ", what,
          ": an element beyond its storage");
    const char* p = data.data() + static_cast<size_t>(at) * bytes_per;
    float x;
    if (bytes_per == 4) {
      std::memcpy(&x, p, 4);
    } else if (bytes_per == 8) {
      double dbl;
      std::memcpy(&dbl, p, 8);
      x = static_cast<float>(dbl);
    } else {
      uint16_t h;
      std::memcpy(&h, p, 2);
      x = type == "torch.HalfStorage" ? from_half(h)
                                      : std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
    }
    out.data()[k] = x;
    for (size_t d = dims.size(); d-- > 0;) {  // the next index, last axis fastest
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

TorchFile read_torch_file(const std::string& path) {
  std::map<std::string, std::string> entries = read_zip(path);
  std::string prefix;
  bool found = false;
  for (const auto& [name, bytes] : entries)
    if (name.size() >= 8 && name.compare(name.size() - 8, 8, "data.pkl") == 0) {
      prefix = name.substr(0, name.size() - 8);
      found = true;
    }
  check(found, path, ": no data.pkl: not a PyTorch checkpoint (torch.save, PyTorch >= 1.6)");
  TorchFile f;
  f.path = path;
  f.root = pickle::load(entries.at(prefix + "data.pkl"), path);
  for (auto& [name, bytes] : entries)
    if (name.compare(0, prefix.size() + 5, prefix + "data/") == 0)
      f.storages.emplace(name.substr(prefix.size() + 5), std::move(bytes));
  return f;
}

}  // namespace heed
