// The pieces every oneDNN lowering shares, in process: numpy.matmul's shape
// rule and the memory objects Wrap lends inside a WrapScope.
#include "adapters/onednn/onednn_context.h"

#include <gtest/gtest.h>

#include <vector>

namespace parity::adapters::onednn {
namespace {

using Dims = std::vector<int64_t>;

TEST(NumpyMatMulShapes, OneDimensionalOperandsGainAndLoseTheirDims) {
  StatusOr<MatMulShapes> s = NumpyMatMulShapes({3}, {2, 3, 4});
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_EQ(s->a, (Dims{1, 1, 3}));
  EXPECT_EQ(s->b, (Dims{2, 3, 4}));
  EXPECT_EQ(s->c, (Dims{2, 1, 4}));
  EXPECT_EQ(s->out, (Dims{2, 4}));
  s = NumpyMatMulShapes({5, 3}, {3});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->c, (Dims{5, 1}));
  EXPECT_EQ(s->out, (Dims{5}));
  s = NumpyMatMulShapes({3}, {3});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->out, Dims{});
}

TEST(NumpyMatMulShapes, BatchDimsBroadcastAndAZeroWins) {
  StatusOr<MatMulShapes> s = NumpyMatMulShapes({4, 1, 2, 3}, {5, 3, 6});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->b, (Dims{1, 5, 3, 6}));
  EXPECT_EQ(s->c, (Dims{4, 5, 2, 6}));
  s = NumpyMatMulShapes({0, 2, 3}, {1, 3, 6});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->c, (Dims{0, 2, 6}));
  s = NumpyMatMulShapes({1, 2, 3}, {0, 3, 6});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->c, (Dims{0, 2, 6}));
}

TEST(NumpyMatMulShapes, ShapesThatDoNotMultiplyAreErrorsNamingWhy) {
  StatusOr<MatMulShapes> s = NumpyMatMulShapes({2, 3}, {4, 5});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("inner dims differ"), std::string::npos) << s.status().message();
  s = NumpyMatMulShapes({2, 2, 3}, {3, 3, 5});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("batch dims do not broadcast"), std::string::npos);
  s = NumpyMatMulShapes({}, {3, 5});
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("scalar"), std::string::npos);
}

Tensor Filled(float value) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kFloat, {2, 3});
  EXPECT_TRUE(t.ok());
  for (int64_t i = 0; i < t->size(); ++i) t->mutable_data<float>()[i] = value;
  return std::move(t).value();
}

TEST(WrapScope, TwoWrapsInOneScopeAreTwoObjectsOverTheirOwnBuffers) {
  const Tensor x = Filled(1), y = Filled(2);
  const dnnl::memory::desc desc = PlainDesc({2, 3}, dnnl_dt::f32);
  WrapScope scope;
  const dnnl::memory a = Wrap(x, desc), b = Wrap(y, desc), c = Wrap(x, desc);
  EXPECT_NE(a.get(), b.get());
  EXPECT_NE(a.get(), c.get());
  EXPECT_EQ(a.get_data_handle(), x.raw_bytes());
  EXPECT_EQ(b.get_data_handle(), y.raw_bytes());
  EXPECT_EQ(c.get_data_handle(), x.raw_bytes());
}

TEST(WrapScope, TheNextScopeReusesTheObjectsRepointed) {
  const Tensor x = Filled(1), y = Filled(2);
  const dnnl::memory::desc desc = PlainDesc({2, 3}, dnnl_dt::f32);
  dnnl_memory_t first = nullptr;
  {
    WrapScope scope;
    first = Wrap(x, desc).get();
  }
  WrapScope scope;
  const dnnl::memory again = Wrap(y, desc);
  EXPECT_EQ(again.get(), first);
  EXPECT_EQ(again.get_data_handle(), y.raw_bytes());
  // Another descriptor is another object.
  EXPECT_NE(Wrap(y, PlainDesc({3, 2}, dnnl_dt::f32)).get(), first);
}

TEST(WrapScope, OutsideAScopeEveryWrapIsANewObjectTheCallerKeeps) {
  const Tensor x = Filled(1), y = Filled(2);
  const dnnl::memory::desc desc = PlainDesc({2, 3}, dnnl_dt::f32);
  const dnnl::memory kept = Wrap(x, desc);
  {
    WrapScope scope;
    EXPECT_NE(Wrap(y, desc).get(), kept.get());
  }
  const dnnl::memory other = Wrap(y, desc);
  EXPECT_NE(other.get(), kept.get());
  EXPECT_EQ(kept.get_data_handle(), x.raw_bytes());  // never re-pointed
}

}  // namespace
}  // namespace parity::adapters::onednn
