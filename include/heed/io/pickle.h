// Python's pickle format (protocols 2 to 4, as torch.save writes it), read into a tree of
// values: what a PyTorch checkpoint holds besides its tensors' bytes (state dicts, option
// namespaces, vocabularies). Nothing is executed: a global is kept as its name, a call
// (REDUCE, NEWOBJ) as an object naming its class with its arguments and later state (BUILD),
// except collections.OrderedDict(), which is a dict. A persistent id (torch's storages) is an
// object of class "persid" whose args are the id.
// Leaves out: protocols 0 and 1 (text opcodes), protocol 5's out-of-band buffers, extensions.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace heed::pickle {

struct Object;
using Value = std::shared_ptr<Object>;  // shared: the memo refers to the same object

struct Object {
  enum class Kind { None, Bool, Int, Float, Str, Bytes, List, Tuple, Dict, Global, Call };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double f = 0;
  std::string s;                              // Str, Bytes; Global and Call: "module.name"
  std::vector<Value> items;                   // List, Tuple; Call: its arguments
  std::vector<std::pair<Value, Value>> dict;  // Dict, in insertion order
  Value state;                                // Call: what BUILD set (an object's __dict__)

  // A Dict's value under a string key (nullptr when absent or not a Dict).
  Value get(const std::string& key) const;
  std::string kind_name() const;
};

// The value a pickle's bytes describe; an Error names `what` (the file) and the byte offset of
// a malformed or unsupported opcode.
Value load(const std::string& bytes, const std::string& what);

}  // namespace heed::pickle
