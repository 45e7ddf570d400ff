// Tests of Scan-8 and Scan-9+.
#include <gtest/gtest.h>

#include "reference/ops/node_runner.h"
#include "reference/ops/controlflow/test_support.h"

namespace parity::ops::controlflow {
namespace {

using testing::Doubles;
using testing::Floats;
using testing::Int64Tensor;
using testing::MakeGraph;
using testing::TestRegistry;

// body(sum, x) -> (sum + x, sum + x): a running sum over the scan axis.
onnx::GraphProto RunningSum(Shape element_shape) {
  return MakeGraph({{"sum"}, {"x"}}, {{"sum_out"}, {"scan_out", DataType::kFloat, element_shape, true}},
                   {{"Add", {"sum", "x"}, {"sum_out"}}, {"Identity", {"sum_out"}, {"scan_out"}}});
}

TEST(Scan, RunsTheBodyOverAxisZero) {
  auto out = NodeRunner("Scan")
                 .Opset(11)
                 .Registry(&TestRegistry())
                 .Input(Floats({2}, {0, 0}))
                 .Input(Floats({3, 2}, {1, 2, 3, 4, 5, 6}))
                 .Outputs(2)
                 .Attr("num_scan_inputs", int64_t{1})
                 .Attr("body", RunningSum({2}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({9, 12}));
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({3, 2}));
  EXPECT_EQ(Doubles((*out)[1]), std::vector<double>({1, 2, 4, 6, 9, 12}));
}

TEST(Scan, HonoursInputAxesAndDirectionsAndOutputAxesAndDirections) {
  // Scan along axis 1 of a [2, 3] input, read backwards; stack outputs along
  // axis 1, written in reverse order.
  auto out = NodeRunner("Scan")
                 .Opset(16)
                 .Registry(&TestRegistry())
                 .Input(Floats({2}, {0, 0}))
                 .Input(Floats({2, 3}, {1, 2, 3, 10, 20, 30}))
                 .Outputs(2)
                 .Attr("num_scan_inputs", int64_t{1})
                 .Attr("scan_input_axes", std::vector<int64_t>{-1})
                 .Attr("scan_input_directions", std::vector<int64_t>{1})
                 .Attr("scan_output_axes", std::vector<int64_t>{1})
                 .Attr("scan_output_directions", std::vector<int64_t>{1})
                 .Attr("body", RunningSum({2}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({6, 60}));
  // Iteration sums: (3,30), (5,50), (6,60); reversed: (6,60), (5,50), (3,30) stacked on axis 1.
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({2, 3}));
  EXPECT_EQ(Doubles((*out)[1]), std::vector<double>({6, 5, 3, 60, 50, 30}));
}

TEST(Scan, RejectsScanInputsOfDifferentLengths) {
  onnx::GraphProto body = MakeGraph({{"sum"}, {"x"}, {"y"}}, {{"sum_out"}}, {{"Add", {"sum", "x"}, {"sum_out"}}});
  auto out = NodeRunner("Scan")
                 .Opset(11)
                 .Registry(&TestRegistry())
                 .Input(Floats({}, {0}))
                 .Input(Floats({3}, {1, 2, 3}))
                 .Input(Floats({2}, {1, 2}))
                 .Attr("num_scan_inputs", int64_t{2})
                 .Attr("body", body)
                 .Run();
  EXPECT_FALSE(out.ok());
}

TEST(Scan8, RunsEachBatchForItsSequenceLengthAndPadsWithZeros) {
  auto out = NodeRunner("Scan")
                 .Opset(8)
                 .Registry(&TestRegistry())
                 .Input(Int64Tensor({2}, {3, 1}))
                 .Input(Floats({2, 1}, {0, 100}))
                 .Input(Floats({2, 3, 1}, {1, 2, 3, 4, 5, 6}))
                 .Outputs(2)
                 .Attr("num_scan_inputs", int64_t{1})
                 .Attr("body", RunningSum({1}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[0]), std::vector<double>({6, 104}));
  EXPECT_EQ((*out)[1].tensor().shape(), Shape({2, 3, 1}));
  EXPECT_EQ(Doubles((*out)[1]), std::vector<double>({1, 3, 6, 104, 0, 0}));
}

TEST(Scan8, ReadsReversedInputsFromTheEndOfEachSequence) {
  auto out = NodeRunner("Scan")
                 .Opset(8)
                 .Registry(&TestRegistry())
                 .Input(Int64Tensor({1}, {2}))
                 .Input(Floats({1}, {0}))
                 .Input(Floats({1, 3}, {1, 2, 3}))
                 .Outputs(2)
                 .Attr("num_scan_inputs", int64_t{1})
                 .Attr("directions", std::vector<int64_t>{1})
                 .Attr("body", RunningSum({}))
                 .Run();
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(Doubles((*out)[1]), std::vector<double>({2, 3, 0}));
}

}  // namespace
}  // namespace parity::ops::controlflow
