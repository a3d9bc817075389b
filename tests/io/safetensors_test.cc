// Model files: bit-exact save/load, the safetensors layout read by an independent (Python)
// reader, clear errors for truncated, corrupt and mismatched files, checkpoint averaging.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "heed/io/files.h"
#include "heed/io/model_dir.h"
#include "heed/io/safetensors.h"
#include "heed/nn/init.h"
#include "heed/util/error.h"
#include "support/errors.h"
#include "support/temp_dir.h"

namespace fs = std::filesystem;

namespace heed {
namespace {

// A toy model's parameters under `root`.
void build(const Scope& root, int64_t rows = 3) {
  root.param("encoder/embed", {rows, 4}, Init::normal(1.f), true);
  root.param("encoder/gru/U", {6, 2}, Init::orthogonal(3));
  root.param("out/b", {5}, Init::uniform(0.1f));
  root.param("scale", {}, Init::constant(2.f));
}
void build(ParameterStore& s, Rng& rng, int64_t rows = 3) {
  build(Scope(s, rng, "model"), rows);
}

using testing::error_of;
using testing::TempDir;

// A model about to be loaded: the same parameters by name and shape, created zero, untouched by
// the initialisers, and after loading bit for bit the saved ones.
TEST(ModelFiles, ScopeForLoadingCreatesWithoutInitialising) {
  TempDir dir;
  Rng rng(1);
  ParameterStore saved, loading;
  build(saved, rng);
  build(Scope::for_loading(loading) / "model");
  ASSERT_EQ(loading.size(), saved.size());
  for (const Parameter* p : loading.all()) {
    EXPECT_EQ(p->value.shape(), saved.get(p->name).value.shape()) << p->name;
    for (float x : p->value.span()) EXPECT_EQ(x, 0.f) << p->name;
  }
  save_model(dir.str(), {{"model", "toy"}}, saved);
  load_weights(dir / "model.safetensors", loading);
  for (const Parameter* p : loading.all())
    EXPECT_EQ(std::memcmp(p->value.data(), saved.get(p->name).value.data(), p->value.numel() * 4),
              0)
        << p->name;
}

TEST(ModelFiles, SaveLoadIsBitExact) {
  TempDir dir;
  Rng rng(1);
  ParameterStore a, b;
  build(a, rng);
  // Values that a lossy writer would change: -0, a denormal, the largest float, NaN.
  float* p = a.get("model/out/b").value.data();
  p[0] = -0.f;
  p[1] = std::numeric_limits<float>::denorm_min();
  p[2] = std::numeric_limits<float>::max();
  p[3] = std::numeric_limits<float>::quiet_NaN();
  save_model(dir.str(), {{"model", "toy"}, {"hidden", 2}}, a);
  const Safetensors file = read_safetensors(dir / "model.safetensors");  // every bit kept
  for (const Parameter* x : a.all()) {
    const Tensor& y = file.tensors.at(x->name);
    ASSERT_EQ(x->value.shape(), y.shape());
    EXPECT_EQ(std::memcmp(x->value.data(), y.data(), x->value.numel() * 4), 0) << x->name;
  }
  EXPECT_EQ(read_config(dir.str())["hidden"], 2);
  // a model's weights must be finite: loading refuses the NaN, naming file, tensor and entry
  build(b, rng);
  const std::string err = error_of([&] { load_weights(dir / "model.safetensors", b); });
  EXPECT_NE(err.find("model.safetensors: tensor 'model/out/b' holds nan (entry 3)"),
            std::string::npos)
      << err;
  p[3] = -std::numeric_limits<float>::min();  // the rest loads bit for bit
  save_model(dir.str(), {{"model", "toy"}, {"hidden", 2}}, a);
  load_weights(dir / "model.safetensors", b);
  for (const Parameter* x : a.all()) {
    const Parameter& y = b.get(x->name);
    EXPECT_EQ(std::memcmp(x->value.data(), y.value.data(), x->value.numel() * 4), 0) << x->name;
  }
}

TEST(ModelFiles, IndependentReaderSeesTheSameTensors) {
  if (std::system("python3 -c 'import json, struct' 2>/dev/null") != 0)
    GTEST_SKIP() << "no python3";
  TempDir dir;
  Tensor t = Tensor::from({2, 3}, std::vector<float>{1.5f, -2, 3, 0.25f, 5, -6});
  write_safetensors(dir / "x.safetensors",
                    {{"w", t}, {"b", Tensor::from({1}, std::vector<float>{7})}});
  // A reader written from the published format, not from heed's code.
  std::ofstream(dir / "read.py") << R"(import json, struct, sys
data = open(sys.argv[1], 'rb').read()
n = struct.unpack('<Q', data[:8])[0]
h = json.loads(data[8:8 + n])
body = data[8 + n:]
w = h['w']; b, e = w['data_offsets']
vals = struct.unpack('<%df' % ((e - b) // 4), body[b:e])
assert w['dtype'] == 'F32' and w['shape'] == [2, 3], w
assert list(vals) == [1.5, -2, 3, 0.25, 5, -6], vals
assert h['b']['shape'] == [1]
assert (8 + n) % 8 == 0
print('ok')
)";
  std::string cmd = "python3 " + (dir / "read.py") + " " + (dir / "x.safetensors");
  EXPECT_EQ(std::system(cmd.c_str()), 0);
}

TEST(ModelFiles, TruncatedFileNamesFileAndProblem) {
  TempDir dir;
  Rng rng(2);
  ParameterStore a;
  build(a, rng);
  save_model(dir.str(), {}, a);
  std::string path = dir / "model.safetensors";
  std::string full = read_file(path);
  for (size_t keep : {size_t{4}, size_t{20}, full.size() - 1, full.size() - 30}) {
    write_file_atomic(path, std::string_view(full).substr(0, keep));
    ParameterStore b;
    build(b, rng);
    std::string m = error_of([&] { load_weights(path, b); });
    EXPECT_NE(m.find(path), std::string::npos) << m;
    EXPECT_NE(m.find("truncated"), std::string::npos) << "kept " << keep << ": " << m;
  }
}

TEST(ModelFiles, WrongShapeNamesTensorAndBothShapes) {
  TempDir dir;
  Rng rng(3);
  ParameterStore a, b;
  build(a, rng, 3);
  build(b, rng, 5);  // a different vocabulary size
  save_model(dir.str(), {}, a);
  std::string m = error_of([&] { load_weights(dir / "model.safetensors", b); });
  EXPECT_NE(m.find("model/encoder/embed"), std::string::npos) << m;
  EXPECT_NE(m.find("[3, 4]"), std::string::npos) << m;
  EXPECT_NE(m.find("[5, 4]"), std::string::npos) << m;
}

// --init-encoder's load: the parameters under the prefixes take the file's values, bit for bit;
// the others keep theirs; a tensor under the prefixes that differs in shape, is missing from the
// file, or is not a parameter is an Error naming it, and then nothing has changed.
TEST(ModelFiles, LoadingUnderPrefixesTakesThoseAndLeavesTheRest) {
  TempDir dir;
  Rng rng(5);
  ParameterStore a, b;
  build(a, rng);
  build(b, rng);
  save_model(dir.str(), {}, a);
  const std::string path = dir / "model.safetensors";
  auto value = [](ParameterStore& s, const std::string& name) {
    for (Parameter* p : s.all())
      if (p->name == name)
        return std::vector<float>(p->value.span().begin(), p->value.span().end());
    ADD_FAILURE() << name;
    return std::vector<float>{};
  };
  const std::vector<float> own_out = value(b, "model/out/b");
  constexpr std::string_view kEncoder[] = {"model/encoder/"};
  EXPECT_EQ(load_weights_under(path, b, kEncoder), 2);
  EXPECT_EQ(value(b, "model/encoder/embed"), value(a, "model/encoder/embed"));
  EXPECT_EQ(value(b, "model/encoder/gru/U"), value(a, "model/encoder/gru/U"));
  EXPECT_EQ(value(b, "model/out/b"), own_out);
  EXPECT_NE(value(b, "model/out/b"), value(a, "model/out/b"));
  // an encoder of another shape: named, and nothing loaded
  ParameterStore wide;
  build(wide, rng, 5);
  const std::vector<float> before = value(wide, "model/encoder/gru/U");
  const std::string m = error_of([&] { load_weights_under(path, wide, kEncoder); });
  EXPECT_NE(m.find("model/encoder/embed"), std::string::npos) << m;
  EXPECT_EQ(value(wide, "model/encoder/gru/U"), before);
  // the file's encoder has a tensor this one lacks
  ParameterStore fewer;
  Scope(fewer, rng, "model").param("encoder/embed", {3, 4}, Init::normal(1.f), true);
  EXPECT_NE(error_of([&] {
              load_weights_under(path, fewer, kEncoder);
            }).find("unexpected tensor 'model/encoder/gru/U'"),
            std::string::npos);
  // this encoder has one the file lacks
  Scope(b, rng, "model").param("encoder/extra", {2}, Init::zeros());
  EXPECT_NE(error_of([&] {
              load_weights_under(path, b, kEncoder);
            }).find("missing tensor 'model/encoder/extra'"),
            std::string::npos);
}

TEST(ModelFiles, MissingExtraCorruptAndForeignDtype) {
  TempDir dir;
  Rng rng(4);
  ParameterStore a;
  build(a, rng);
  std::string path = dir / "w.safetensors";
  write_safetensors(path, {{"model/scale", Tensor::zeros({})}});
  EXPECT_NE(error_of([&] { load_weights(path, a); }).find("missing tensor"), std::string::npos);
  NamedTensors all;
  for (Parameter* p : a.all()) all.emplace_back(p->name, p->value);
  all.emplace_back("stray", Tensor::zeros({1}));
  write_safetensors(path, all);
  EXPECT_NE(error_of([&] { load_weights(path, a); }).find("unexpected tensor 'stray'"),
            std::string::npos);
  auto with_header = [&](const std::string& json, size_t data_bytes) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
    write_file_atomic(path, s + json + std::string(data_bytes, '\0'));
  };
  with_header("{\"w\": {\"dtype\": \"F32\", \"shape\": [2]", 8);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("not valid JSON"), std::string::npos);
  with_header(R"({"w": {"dtype": "F16", "shape": [2], "data_offsets": [0, 4]}})", 4);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("dtype F16"), std::string::npos);
  with_header(R"({"w": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("expected 12"), std::string::npos);
  // a shape whose size overflows 64 bits (2^62 x 4 x 4 = 2^66 = 0 mod 2^64) is refused before
  // it is multiplied out, not read as a tensor of 0 bytes
  with_header(R"({"w": {"dtype": "F32", "shape": [4611686018427387904, 4, 4], )"
              R"("data_offsets": [0, 0]}})",
              0);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("more than 2^60 elements"),
            std::string::npos);
  // floats where integers belong are refused before nlohmann-json casts them (undefined)
  with_header(R"({"w": {"dtype": "F32", "shape": [1e30], "data_offsets": [0, 4]}})", 4);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("\"shape\" is 1e+30"),
            std::string::npos);
  with_header(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [-0.5, 4]}})", 4);
  EXPECT_NE(error_of([&] { read_safetensors(path); }).find("not integers"), std::string::npos);
  EXPECT_NE(error_of([&] { read_safetensors(dir / "nope.safetensors"); }).find("cannot open"),
            std::string::npos);
}

// The byte ranges of a header must tile the data section: two tensors on one range (aliases),
// overlapping ranges, a hole, bytes after the last tensor and a key given twice (JSON would keep
// the last silently) are refused, each naming the file and the tensor; the tiling is accepted.
TEST(ModelFiles, MalformedRangesAndDuplicateKeysAreRefused) {
  TempDir dir;
  const std::string path = dir / "w.safetensors";
  auto read_with = [&](const std::string& json, size_t data_bytes) {
    std::string s(8, '\0');
    for (int i = 0; i < 8; ++i) s[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
    write_file_atomic(path, s + json + std::string(data_bytes, '\0'));
    return error_of([&] { read_safetensors(path); });
  };
  const std::string a = R"("a": {"dtype": "F32", "shape": [2], "data_offsets": )";
  const std::string b = R"("b": {"dtype": "F32", "shape": [2], "data_offsets": )";
  EXPECT_EQ(read_with("{" + a + "[0, 8]}, " + b + "[8, 16]}}", 16), "");
  EXPECT_EQ(read_with("{" + b + "[0, 8]}, " + a + "[8, 16]}}", 16), "");  // any order of names
  std::string e = read_with("{" + a + "[0, 8]}, " + b + "[0, 8]}}", 16);
  EXPECT_NE(e.find(path), std::string::npos) << e;
  EXPECT_NE(e.find("tensor 'b' (bytes 0..8) overlaps"), std::string::npos) << e;
  e = read_with("{" + a + "[0, 8]}, " + b + "[4, 12]}}", 12);
  EXPECT_NE(e.find("tensor 'b' (bytes 4..12) overlaps the tensor before it, which ends at byte 8"),
            std::string::npos)
      << e;
  e = read_with("{" + a + "[0, 8]}, " + b + "[12, 20]}}", 20);
  EXPECT_NE(e.find("a hole in the data section before tensor 'b'"), std::string::npos) << e;
  e = read_with("{" + a + "[0, 8]}}", 12);
  EXPECT_NE(e.find("4 bytes after the last tensor's data belong to no tensor"), std::string::npos)
      << e;
  e = read_with("{" + a + "[0, 8]}, " + a + "[8, 16]}}", 16);
  EXPECT_NE(e.find("names 'a' twice"), std::string::npos) << e;
}

// Checkpoint averaging: every weight of the result is the mean of the snapshots'; snapshots that
// disagree in a tensor's shape are refused with the file and the tensor named.
TEST(Checkpoint, AveragingTakesTheMeanAndRefusesMismatches) {
  TempDir dir;
  Rng rng(4);
  std::vector<ParameterStore> runs(3);
  for (auto& s : runs) build(s, rng);  // three different random draws
  std::vector<std::string> paths;
  for (size_t i = 0; i < runs.size(); ++i) {
    paths.push_back(dir / ("epoch_" + std::to_string(i) + ".safetensors"));
    save_weights(paths.back(), runs[i]);
  }
  average_weights(paths, dir / "avg.safetensors");
  ParameterStore avg;
  build(avg, rng);
  load_weights(dir / "avg.safetensors", avg);
  for (const Parameter* p : avg.all())
    for (int64_t i = 0; i < p->value.numel(); ++i) {
      double mean = 0;
      for (auto& s : runs) mean += s.get(p->name).value.data()[i];
      EXPECT_NEAR(p->value.data()[i], mean / 3, 1e-6) << p->name << " " << i;
    }
  ParameterStore wider;
  build(wider, rng, /*rows=*/4);
  save_weights(dir / "wider.safetensors", wider);
  std::string err = error_of([&] {
    average_weights({paths[0], dir / "wider.safetensors"}, dir / "x.safetensors");
  });
  EXPECT_NE(err.find("tensor 'model/encoder/embed' is [4, 4] in " + dir / "wider.safetensors"),
            std::string::npos)
      << err;
}

}  // namespace
}  // namespace heed
