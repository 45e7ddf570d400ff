// Tests of the placement's FLOPs: matching the report's nodes to the graph
// by position or by name, the sums per device, and what stays unknown.
#include "harness/run/placement_flops.h"

#include <gtest/gtest.h>

#include "reference/model/text_syntax.h"

namespace parity {
namespace {

using Placement = std::vector<std::pair<std::string, std::string>>;

// MatMul [N, 4] x [4, 3] (unnamed), then a named Relu and an unnamed Sigmoid.
onnx::GraphProto Chain() {
  StatusOr<onnx::GraphProto> g = ParseGraphText(R"(g (float[N, 4] a, float[4, 3] b) => (y) {
      t = MatMul (a, b)
      r = Relu (t)
      y = Sigmoid (r) })");
  EXPECT_TRUE(g.ok()) << g.status().ToString();
  onnx::GraphProto graph = g.ok() ? *g : onnx::GraphProto();
  if (graph.node_size() == 3) graph.mutable_node(1)->set_name("relu");
  return graph;
}

TEST(PlacementFlops, GraphOrderReportIsMatchedByPositionAtTheInputsDims) {
  const Placement placement = {{"MatMul#0", "cpu"}, {"relu", "cpu"}, {"Sigmoid#2", "reference"}};
  const PlacementFlops f = CountPlacementFlops(Chain(), placement, {{"a", {5, 4}}});
  EXPECT_EQ(f.unknown, 0);
  ASSERT_EQ(f.by_device.size(), 2u);
  // MatMul 2 x 5·3 x 4, Relu 5·3; Sigmoid 5·3 on the reference.
  EXPECT_EQ(f.by_device.at("cpu"), 2.0 * 5 * 3 * 4 + 5 * 3);
  EXPECT_EQ(f.by_device.at("reference"), 5.0 * 3);
}

TEST(PlacementFlops, WithoutTheInputsDimsEveryNodeIsUnknown) {
  const Placement placement = {{"MatMul#0", "cpu"}, {"relu", "cpu"}, {"Sigmoid#2", "reference"}};
  const PlacementFlops f = CountPlacementFlops(Chain(), placement, {});
  EXPECT_EQ(f.unknown, 3);
  EXPECT_TRUE(f.by_device.empty());
}

TEST(PlacementFlops, AnotherGraphsReportIsMatchedByUniqueNamesOnly) {
  // An adapter that fused or renamed nodes: "relu" is the model's, the rest
  // are not; "MatMul#0" is not trusted out of a graph-order report.
  const Placement placement = {{"fused_matmul_relu", "cpu"}, {"relu", "cpu"}, {"MatMul#0", "cpu"}};
  const PlacementFlops f = CountPlacementFlops(Chain(), placement, {{"a", {5, 4}}});
  EXPECT_EQ(f.unknown, 2);
  EXPECT_EQ(f.by_device.at("cpu"), 5.0 * 3);
  // A name that two nodes share matches neither.
  onnx::GraphProto twice = Chain();
  twice.mutable_node(2)->set_name("relu");
  const PlacementFlops g = CountPlacementFlops(twice, {{"relu", "cpu"}}, {{"a", {5, 4}}});
  EXPECT_EQ(g.unknown, 1);
  EXPECT_TRUE(g.by_device.empty());
}

}  // namespace
}  // namespace parity
