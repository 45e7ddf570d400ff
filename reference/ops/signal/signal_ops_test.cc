// Tests of the signal family's kernels (DFT and the windows): small cases whose results
// follow from the definitions by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "reference/ops/node_runner.h"
#include "reference/ops/reference_registry.h"
#include "reference/ops/test_builders.h"

namespace parity::ops::signal {
namespace {

using testing_util::Floats;
using testing_util::ExpectNear;

TEST(Registration, TheReferenceRegistryHasTheSignalKernels) {
  for (const char* op : {"DFT", "STFT", "HannWindow"}) {
    EXPECT_TRUE(ReferenceRegistry().Knows("", op)) << op;
  }
}

TEST(Dft, ForwardOnesidedAndInverse) {
  Tensor x = Floats({1, 4, 1}, {1, 0, 0, 0});  // an impulse: flat spectrum
  auto f = NodeRunner("DFT").Opset(20).Input(x).Attr("onesided", int64_t{1}).RunOne();
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  EXPECT_EQ(f->shape(), Shape({1, 3, 2}));
  ExpectNear(f->ToDoubles(), {1, 0, 1, 0, 1, 0});
  Tensor spectrum = Floats({1, 3, 2}, {1, 0, 1, 0, 1, 0});
  auto inv = NodeRunner("DFT").Opset(20).Input(spectrum).Attr("onesided", int64_t{1}).Attr("inverse", int64_t{1}).RunOne();
  ASSERT_TRUE(inv.ok()) << inv.status().ToString();
  EXPECT_EQ(inv->shape(), Shape({1, 4, 1}));
  ExpectNear(inv->ToDoubles(), {1, 0, 0, 0});
  EXPECT_FALSE(NodeRunner("DFT").Opset(17).Input(x).Attr("axis", int64_t{2}).Run().ok());
}

TEST(Windows, PeriodicAndSymmetricHann) {
  Tensor size = Tensor::FromInt64s({}, {4});
  auto periodic = NodeRunner("HannWindow").Opset(17).Input(size).RunOne();
  ASSERT_TRUE(periodic.ok()) << periodic.status().ToString();
  ExpectNear(periodic->ToDoubles(), {0, 0.5, 1, 0.5});
  auto symmetric = NodeRunner("HannWindow").Opset(17).Input(size).Attr("periodic", int64_t{0}).RunOne();
  ASSERT_TRUE(symmetric.ok());
  ExpectNear(symmetric->ToDoubles(), {0, 0.75, 0.75, 0});
}

}  // namespace
}  // namespace parity::ops::signal
