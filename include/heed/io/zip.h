// ZIP archives as PyTorch's torch.save and NumPy's savez write them: the central directory read
// from the end of the file, each entry's bytes found through its local header. Entries must be
// stored (method 0), as both write them.
// Leaves out: compression (numpy.savez_compressed: an Error saying so), ZIP64 (archives over
// 4 GB), encryption, writing.
#pragma once

#include <map>
#include <string>

namespace heed {

// name -> bytes of every entry; an Error names `path` and what is wrong (not a ZIP archive, a
// compressed or truncated entry).
std::map<std::string, std::string> read_zip(const std::string& path);
// The same for an archive's bytes (`what` names it in errors).
std::map<std::string, std::string> decode_zip(const std::string& bytes, const std::string& what);

}  // namespace heed
