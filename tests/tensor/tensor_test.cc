// Shapes, broadcasting rules, views and the arena.
#include <gtest/gtest.h>

#include <cstdint>

#include "heed/tensor/arena.h"
#include "heed/tensor/tensor.h"
#include "heed/util/error.h"

namespace heed {
namespace {

TEST(Shape, BasicsAndAxisViews) {
  Shape s{2, 3, 4};
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s.rows(), 6);
  EXPECT_EQ(s.dim(-1), 4);
  EXPECT_EQ(s.outer(1), 2);
  EXPECT_EQ(s.inner(1), 4);
  EXPECT_EQ(s.without(1), (Shape{2, 4}));
  EXPECT_EQ(s.padded(4), (Shape{1, 2, 3, 4}));
  EXPECT_EQ(s.str(), "[2, 3, 4]");
  EXPECT_EQ(Shape{}.numel(), 1);
  EXPECT_THROW(s.dim(3), Error);
  EXPECT_THROW((Shape{1, 2, 3, 4, 5}), Error);
}

TEST(Shape, Broadcasting) {
  EXPECT_EQ(broadcast_shapes({2, 1, 4}, {3, 1}, "t"), (Shape{2, 3, 4}));
  EXPECT_EQ(broadcast_shapes({}, {5}, "t"), (Shape{5}));
  EXPECT_THROW(broadcast_shapes({2, 3}, {4, 3}, "t"), Error);
}

TEST(Tensor, ViewsShareStorage) {
  Tensor t = Tensor::zeros({4, 3});
  Tensor r = t.rows(1, 2);
  r.fill(5.f);
  EXPECT_EQ(t.data()[3], 5.f);
  EXPECT_EQ(t.data()[2], 0.f);
  EXPECT_EQ(t.data()[9], 0.f);
  Tensor v = t.reshape({2, 6});
  EXPECT_EQ(v.data(), t.data());
  EXPECT_EQ(t[2].shape(), (Shape{3}));
  EXPECT_THROW(t.reshape({5}), Error);
  EXPECT_THROW(t.rows(3, 2), Error);
  Tensor c = t.clone();
  c.fill(1.f);
  EXPECT_EQ(t.data()[0], 0.f);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(Tensor::empty({3}).data()) % 64, 0u);
}

// Storage of 4 MiB and more is mapped on 2 MiB boundaries (so that it can sit in 2 MiB pages),
// zeros() of it reads zero, and copies and views keep it alive; smaller storage stays on the heap.
TEST(Tensor, LargeStorageStartsOnAHugePageBoundary) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  for (int rep = 0; rep < 3; ++rep) {             // mapped and unmapped again, each time zero
    Tensor z = Tensor::zeros(Shape{1024, 1025});  // 4.0 MiB + 4 KiB
    EXPECT_EQ(reinterpret_cast<uintptr_t>(z.data()) % kHugePage, 0u);
    for (int64_t i = 0; i < z.numel(); i += 997) ASSERT_EQ(z.data()[i], 0.f) << i;
    EXPECT_EQ(z.data()[z.numel() - 1], 0.f);
    z.fill(3.f);                   // every byte of the mapping it claims is writable
    Tensor row = z.rows(1023, 1);  // a view outlives the tensor it came from
    z = Tensor();
    EXPECT_EQ(row.data()[1024], 3.f);
  }
  Tensor e = Tensor::empty(Shape{1 << 20});  // exactly 4 MiB
  EXPECT_EQ(reinterpret_cast<uintptr_t>(e.data()) % kHugePage, 0u);
  Tensor small = Tensor::zeros(Shape{1000});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(small.data()) % 64, 0u);
  EXPECT_EQ(small.data()[999], 0.f);
}

TEST(Arena, AlignsGrowsAndKeepsItsMemory) {
  Arena a(1024);
  for (int i = 0; i < 10; ++i) {
    Tensor t = a.tensor({100 + i});
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.data()) % Arena::kAlign, 0u);
  }
  void* big = a.allocate(1 << 20);
  EXPECT_GT(a.chunk_count(), 1u);
  const size_t cap = a.capacity(), chunks = a.chunk_count();
  a.reset();  // every chunk kept
  EXPECT_EQ(a.capacity(), cap);
  for (int i = 0; i < 10; ++i) a.tensor({100 + i});
  EXPECT_EQ(a.allocate(1 << 20), big);  // the same step again: the same memory, no growth
  a.reset();
  EXPECT_EQ(a.capacity(), cap);
  EXPECT_EQ(a.chunk_count(), chunks);
  EXPECT_EQ(a.bytes_in_use(), 0u);
  Tensor z = a.zeros({16});
  for (float v : z.span()) EXPECT_EQ(v, 0.f);
}

}  // namespace
}  // namespace heed
