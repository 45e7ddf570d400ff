// Tests of the device partition: which nodes a lowering claims, what the
// report says of the others, regions folded into one node, and that the
// evaluator runs the lowered kernels where it says and the reference's
// elsewhere, with the same results.
#include "adapters/device/partition.h"

#include <gtest/gtest.h>

#include "reference/eval/evaluator.h"
#include "reference/model/text_syntax.h"
#include "reference/ops/reference_registry.h"

namespace parity::adapters {
namespace {

constexpr const char* kModel = R"(
  <ir_version: 10, opset_import: ["" : 21]>
  g (float[2] x, float[2] y) => (float[2] z) {
    s = Add (x, y)
    r = Relu (s)
    z = Mul (r, y)
  })";

LoadedModel Parse(const char* text) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  return LoadedModel{std::make_shared<onnx::ModelProto>(*proto), "test model", ""};
}

// Runs a node by the reference's own kernel, and counts the runs: a
// lowering whose results are the reference's, so a test sees only where
// things ran.
class CountingNode : public LoweredNode {
 public:
  explicit CountingNode(int* runs) : runs_(runs) {}
  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    ++*runs_;
    const Kernel* kernel = ReferenceRegistry().Find("", ctx.node().op_type(), ctx.opset());
    return (*kernel)(ctx);
  }

 private:
  int* runs_;
};

Tensor Floats(std::vector<double> values) {
  const int64_t n = static_cast<int64_t>(values.size());
  return *Tensor::FromDoubles(DataType::kFloat, {n}, values);
}

std::vector<double> RunPartitioned(const Partition& partition, std::vector<Tensor> inputs) {
  EvalOptions options;
  options.node_kernels = &partition.kernels;
  StatusOr<std::unique_ptr<Evaluator>> evaluator = Evaluator::Create(partition.model, WithReferenceKernels(options));
  EXPECT_TRUE(evaluator.ok()) << evaluator.status().ToString();
  std::vector<Value> values;
  for (Tensor& t : inputs) values.push_back(Value::FromTensor(std::move(t)));
  StatusOr<std::vector<Value>> out = (*evaluator)->Run(values);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  std::vector<double> result;
  for (int64_t i = 0; i < (*out)[0].tensor().size(); ++i) result.push_back((*out)[0].tensor().GetDouble(i));
  return result;
}

TEST(PartitionTest, PlacesClaimedNodesOnTheDeviceAndTheRestOnTheReferenceWithTheirReasons) {
  int runs = 0;
  Lowering lowering;
  lowering.Add("Add", [&](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    EXPECT_EQ(view.input_type(0), DataType::kFloat);  // static facts reach the lowering
    EXPECT_NE(view.input_dims(0), nullptr);
    return std::unique_ptr<LoweredNode>(new CountingNode(&runs));
  });
  lowering.Add("Relu", [](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
    return NotLowered("no Relu today");
  });
  const LoadedModel model = Parse(kModel);
  StatusOr<Partition> partition = PartitionModel(model, lowering, "npu");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  ASSERT_EQ(partition->nodes.size(), 3u);
  EXPECT_EQ(partition->nodes[0].device, "npu");
  EXPECT_EQ(partition->nodes[0].reason, "");
  EXPECT_EQ(partition->nodes[1].device, kFallbackDevice);
  EXPECT_EQ(partition->nodes[1].reason, "no Relu today");
  EXPECT_EQ(partition->nodes[2].device, kFallbackDevice);
  EXPECT_EQ(partition->nodes[2].reason, "no lowering for Mul");
  EXPECT_EQ(partition->nodes[0].name, "Add#0");
  EXPECT_EQ(partition->lowered_count(), 1u);
  EXPECT_EQ(partition->fallback_count(), 2u);
  EXPECT_EQ(partition->model.proto, model.proto);  // no region: the model itself runs
  EXPECT_NE(partition->FallbackList().find("Relu#1 (no Relu today)"), std::string::npos);

  EXPECT_EQ(RunPartitioned(*partition, {Floats({1, -5}), Floats({2, 3})}), (std::vector<double>{6, 0}));
  EXPECT_EQ(runs, 1);
}

TEST(PartitionTest, FoldsARegionIntoOneNodeThatRunsInPlaceOfItsMembers) {
  int runs = 0;
  Lowering lowering;
  // Add followed by its sole reader Relu, as one region computing r.
  lowering.AddRegion("Add", [&](const RegionView& view) -> StatusOr<std::optional<RegionClaim>> {
    const int relu = view.sole_consumer(view.anchor());
    if (relu < 0 || view.node(relu).op_type() != "Relu") return std::optional<RegionClaim>();
    class AddRelu : public LoweredNode {
     public:
      explicit AddRelu(int* runs) : runs_(runs) {}
      StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
        ++*runs_;
        EXPECT_EQ(ctx.node().domain(), kRegionDomain);
        const Tensor& a = ctx.tensor(0);
        const Tensor& b = ctx.tensor(1);
        std::vector<double> out;
        for (int64_t i = 0; i < a.size(); ++i) out.push_back(std::max(0.0, a.GetDouble(i) + b.GetDouble(i)));
        return std::vector<Value>{Value::FromTensor(Floats(out))};
      }

     private:
      int* runs_;
    };
    RegionClaim claim;
    claim.nodes = {view.anchor(), relu};
    claim.inputs = {"x", "y"};
    claim.outputs = {"r"};
    claim.runner = std::make_unique<AddRelu>(&runs);
    return std::optional<RegionClaim>(std::move(claim));
  });
  const LoadedModel model = Parse(kModel);
  StatusOr<Partition> partition = PartitionModel(model, lowering, "cpu");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  // The report keeps the model's own three nodes; the run model has two.
  EXPECT_EQ(partition->nodes[0].device, "cpu");
  EXPECT_EQ(partition->nodes[1].device, "cpu");
  EXPECT_EQ(partition->nodes[2].device, kFallbackDevice);
  EXPECT_EQ(partition->model.proto->graph().node_size(), 2);
  EXPECT_EQ(model.proto->graph().node_size(), 3);  // the model given is untouched
  // One kernel for the region's two nodes; only Mul falls back.
  EXPECT_EQ(partition->lowered_count(), 1u);
  EXPECT_EQ(partition->fallback_count(), 1u);
  EXPECT_EQ(RunPartitioned(*partition, {Floats({1, -5}), Floats({2, 3})}), (std::vector<double>{6, 0}));
  EXPECT_EQ(runs, 1);
}

TEST(PartitionTest, RefusesARegionThatHidesAValueReadOutsideIt) {
  // s is read by Relu and by Mul: a region of Add and Relu that returns only r hides s.
  const LoadedModel model = Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x, float[2] y) => (float[2] z) {
      s = Add (x, y)
      r = Relu (s)
      z = Mul (r, s)
    })");
  Lowering lowering;
  lowering.AddRegion("Add", [](const RegionView& view) -> StatusOr<std::optional<RegionClaim>> {
    EXPECT_EQ(view.sole_consumer(view.anchor()), -1);  // two readers
    RegionClaim claim;
    claim.nodes = {0, 1};
    claim.inputs = {"x", "y"};
    claim.outputs = {"r"};
    return std::optional<RegionClaim>(std::move(claim));
  });
  StatusOr<Partition> partition = PartitionModel(model, lowering, "cpu");
  ASSERT_FALSE(partition.ok());
  EXPECT_NE(partition.status().message().find("hides 's'"), std::string::npos) << partition.status().ToString();
}

TEST(PartitionTest, ALoweringErrorOtherThanNotLoweredFailsThePartitionNamingTheNode) {
  Lowering lowering;
  lowering.Add("Relu", [](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
    return InvalidArgument("the device is on fire");
  });
  StatusOr<Partition> partition = PartitionModel(Parse(kModel), lowering, "cpu");
  ASSERT_FALSE(partition.ok());
  EXPECT_NE(partition.status().message().find("the device is on fire"), std::string::npos);
  EXPECT_NE(partition.status().message().find("Relu"), std::string::npos);
}

TEST(PartitionTest, NodesOfModelLocalFunctionsAndOfUnimportedDomainsFallBack) {
  const LoadedModel model = Parse(R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[2] x) => (float[2] z) {
      z = local.Double (x)
    }
    <domain: "local", opset_import: ["" : 21]>
    Double (a) => (b) {
      b = Add (a, a)
    })");
  Lowering lowering;
  lowering.Add("local", "Double", [](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
    ADD_FAILURE() << "a model-local function must not be offered to the lowering";
    return NotLowered("-");
  });
  StatusOr<Partition> partition = PartitionModel(model, lowering, "cpu");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EXPECT_EQ(partition->nodes[0].device, kFallbackDevice);
  EXPECT_EQ(partition->nodes[0].reason, "a model-local function");
}

}  // namespace
}  // namespace parity::adapters

namespace parity::adapters {
namespace {

TEST(PartitionTest, ARegionMayTakeNodesRefusedBeforeItsAnchorAndTheyLeaveTheFallbackList) {
  // n0 (Neg) comes before the anchor (Relu) and is refused on its own; the
  // region of Relu takes it back, as a QDQ region takes its DequantizeLinear.
  const LoadedModel model = Parse(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] z) {
      n = Neg (x)
      r = Relu (n)
      z = Abs (r)
    })");
  Lowering lowering;
  lowering.Add("Neg", [](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
    return NotLowered("no Neg alone");
  });
  int runs = 0;
  lowering.AddRegion("Relu", [&](const RegionView& view) -> StatusOr<std::optional<RegionClaim>> {
    const int neg = view.producer("n");
    EXPECT_EQ(neg, 0);
    RegionClaim claim;
    claim.nodes = {view.anchor(), neg, neg};  // named twice: one member
    claim.inputs = {"x"};
    claim.outputs = {"r"};
    claim.runner = std::make_unique<CountingNode>(&runs);
    return std::optional<RegionClaim>(std::move(claim));
  });
  StatusOr<Partition> partition = PartitionModel(model, lowering, "cpu");
  ASSERT_TRUE(partition.ok()) << partition.status().ToString();
  EXPECT_EQ(partition->nodes[0].device, "cpu");
  EXPECT_EQ(partition->nodes[0].reason, "");
  EXPECT_EQ(partition->nodes[1].device, "cpu");
  EXPECT_EQ(partition->nodes[2].device, kFallbackDevice);
  EXPECT_EQ(partition->fallback_count(), 1u);
  EXPECT_EQ(partition->FallbackList(), "Abs#2 (no lowering for Abs)");
  EXPECT_EQ(partition->model.proto->graph().node_size(), 2);
}

}  // namespace
}  // namespace parity::adapters
