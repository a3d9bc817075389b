// The pickle reader on what Python's pickle module wrote (fuzz/corpus/pickle/: protocol 2 and 4)
// and torch.save's data.pkl, and the ZIP reader on torch.save's archive; malformed bytes are
// Errors naming the file and the byte.
#include <gtest/gtest.h>

#include <filesystem>

#include "heed/io/files.h"
#include "heed/io/pickle.h"
#include "heed/io/torch_file.h"
#include "heed/io/zip.h"
#include "heed/util/error.h"

namespace fs = std::filesystem;

namespace heed::pickle {
namespace {

fs::path corpus(const char* name) {
  return fs::path(HEED_SOURCE_DIR) / "fuzz" / "corpus" / name;
}

TEST(Pickle, ValuesPythonWrote) {
  // pickle.dumps({'a': [1, 2.5, 'x', b'y', -300, 2**40], 'b': (True, None, False),
  //               'c': OrderedDict(k=1)}, protocol=2)
  const Value v = load(read_file((corpus("pickle") / "plain-protocol2").string()), "p");
  ASSERT_EQ(v->kind, Object::Kind::Dict);
  const Value a = v->get("a");
  ASSERT_EQ(a->kind, Object::Kind::List);
  ASSERT_EQ(a->items.size(), 6u);
  EXPECT_EQ(a->items[0]->i, 1);
  EXPECT_EQ(a->items[1]->f, 2.5);
  EXPECT_EQ(a->items[2]->s, "x");
  EXPECT_EQ(a->items[3]->kind, Object::Kind::Bytes);
  EXPECT_EQ(a->items[4]->i, -300);
  EXPECT_EQ(a->items[5]->i, int64_t{1} << 40);
  const Value b = v->get("b");
  ASSERT_EQ(b->kind, Object::Kind::Tuple);
  EXPECT_TRUE(b->items[0]->b);
  EXPECT_EQ(b->items[1]->kind, Object::Kind::None);
  EXPECT_FALSE(b->items[2]->b);
  EXPECT_EQ(v->get("c")->get("k")->i, 1);  // an OrderedDict is a dict
  // pickle.dumps(argparse.Namespace(heads=8, name='x', eps=1e-6), protocol=4): a call with state
  const Value ns = load(read_file((corpus("pickle") / "protocol4-namespace").string()), "p");
  ASSERT_EQ(ns->kind, Object::Kind::Call);
  EXPECT_EQ(ns->s, "argparse.Namespace");
  EXPECT_EQ(ns->state->get("heads")->i, 8);
  EXPECT_EQ(ns->state->get("eps")->f, 1e-6);
}

TEST(Pickle, TorchSaveArchive) {
  // torch.save({'model': OrderedDict(a=arange(6).reshape(2, 3).t(), b=tensor([1.5], float16)),
  //             'opt': Namespace(enc_layers=2, heads=4, name='x'), 'vocab': {...}})
  const TorchFile f = read_torch_file((corpus("zip") / "torch-save").string());
  const Value model = f.root->get("model");
  const Tensor a = f.tensor(model->get("a"), "a");  // a transposed view: strides (1, 3)
  EXPECT_EQ(a.shape(), Shape({3, 2}));
  EXPECT_EQ(std::vector<float>(a.data(), a.data() + 6), (std::vector<float>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(f.tensor(model->get("b"), "b").data()[0], 1.5f);  // float16
  EXPECT_EQ(f.root->get("opt")->state->get("heads")->i, 4);
  EXPECT_THROW(f.tensor(f.root->get("opt"), "opt"), Error);
}

TEST(Pickle, MalformedBytesAreErrors) {
  EXPECT_THROW(load("", "p"), Error);
  EXPECT_THROW(load("\x80\x02}q", "p"), Error);      // ends inside BINPUT
  EXPECT_THROW(load("\x80\x02h\x05.", "p"), Error);  // BINGET of nothing
  EXPECT_THROW(load("\x80\x02\xff", "p"), Error);    // an unknown opcode
  try {
    load("\x80\x02}s.", "bad.pkl");  // SETITEM without key and value
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad.pkl: pickle byte 3"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decode_zip("PK\x03\x04 not a zip", "z"), Error);
  const std::string good = read_file((corpus("zip") / "torch-save").string());
  EXPECT_THROW(decode_zip(good.substr(0, good.size() - 30), "z"), Error);
}

}  // namespace
}  // namespace heed::pickle
