// Tests of the harness's variant checks: target precedence, the expected
// selection (pinned in case.json or resolved by the reference), and the
// comparison with what an adapter reports.
#include "harness/run/variant_check.h"

#include <gtest/gtest.h>

#include "reference/variants/variants.h"

namespace parity {
namespace {

using nlohmann::json;

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, std::vector<std::string> in, std::string out) {
  onnx::NodeProto* n = g->add_node();
  n->set_op_type(op);
  for (const auto& i : in) n->add_input(i);
  n->add_output(out);
  n->set_name(op + "_" + out);
  return n;
}

void AddFloatInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
  onnx::ValueInfoProto* v = list->Add();
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
}

onnx::EquivalentSubgraphProto* AddEntry(onnx::GraphProto* g, const std::string& domain, const std::string& op,
                                        std::vector<std::string> in, std::vector<std::string> out,
                                        const std::string& target) {
  onnx::EquivalentSubgraphProto* e = g->add_equivalent_subgraph();
  e->set_domain(domain);
  e->set_op_type(op);
  for (const auto& i : in) e->add_input(i);
  for (const auto& o : out) e->add_output(o);
  if (!target.empty()) {
    onnx::StringStringEntryProto* m = e->add_metadata_props();
    m->set_key(kTargetKey);
    m->set_value(target);
  }
  return e;
}

// y = Relu(x + b), with three entries: e0 the whole cut for the reference,
// e1 the whole cut for "com.example.npu", e2 the Add alone with no target.
LoadedModel VariantModel() {
  auto model = std::make_shared<onnx::ModelProto>();
  model->set_ir_version(10);
  auto* opset = model->add_opset_import();
  opset->set_version(21);
  auto* test_opset = model->add_opset_import();
  test_opset->set_domain("org.onnxparity.test");
  test_opset->set_version(1);
  for (const char* name : {"FusedAddRelu", "FusedAddReluNpu"}) {
    onnx::FunctionProto* f = model->add_functions();
    f->set_name(name);
    f->set_domain("org.onnxparity.test");
    f->add_input("a");
    f->add_input("b");
    f->add_output("y");
    auto* fo = f->add_opset_import();
    fo->set_version(21);
    onnx::GraphProto body;
    AddNode(&body, "Add", {"a", "b"}, "s");
    AddNode(&body, "Relu", {"s"}, "y");
    *f->mutable_node() = body.node();
  }
  onnx::GraphProto* g = model->mutable_graph();
  g->set_name("main");
  AddFloatInfo(g->mutable_input(), "x");
  AddFloatInfo(g->mutable_input(), "b");
  AddFloatInfo(g->mutable_output(), "y");
  AddNode(g, "Add", {"x", "b"}, "s");
  AddNode(g, "Relu", {"s"}, "y");
  AddEntry(g, "org.onnxparity.test", "FusedAddRelu", {"x", "b"}, {"y"}, kReferenceTarget);
  AddEntry(g, "org.onnxparity.test", "FusedAddReluNpu", {"x", "b"}, {"y"}, "com.example.npu");
  AddEntry(g, "", "Add", {"x", "b"}, {"s"}, "");
  return LoadedModel{model, "variant_model", ""};
}

// A case whose case.json holds `meta`, parsed as ReadCaseMeta would.
CaseInfo Case(const json& meta = json::object()) {
  CaseInfo info;
  info.name = "test_variant";
  info.suite = "variants";
  info.dir = "cases/variants/test_variant";
  StatusOr<CaseFile> file = ParseCaseFile(meta, info.dir + "/case.json");
  EXPECT_TRUE(file.ok()) << file.status().ToString();
  if (file.ok()) info.case_file = std::move(file).value();
  return info;
}

TEST(VariantCheckTest, SplitAndJoinTargets) {
  EXPECT_EQ(SplitTargets(""), std::vector<std::string>{});
  EXPECT_EQ(SplitTargets("a, b ,,c"), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(JoinTargets({"org.onnxparity.reference", "portable"}), "org.onnxparity.reference,portable");
  EXPECT_EQ(JoinTargets({}), "");
}

TEST(VariantCheckTest, TargetsComeFromCommandLineThenCaseThenCapabilities) {
  const std::vector<std::string> declared = {"portable"};
  const CaseInfo with_case = Case({{"variant_targets", {"com.example.gpu"}}});
  EXPECT_EQ(*VariantTargetsFor(with_case, std::vector<std::string>{"com.example.npu"}, declared),
            std::vector<std::string>{"com.example.npu"});
  EXPECT_EQ(*VariantTargetsFor(with_case, std::vector<std::string>{}, declared), std::vector<std::string>{});
  EXPECT_EQ(*VariantTargetsFor(with_case, std::nullopt, declared), std::vector<std::string>{"com.example.gpu"});
  EXPECT_EQ(*VariantTargetsFor(Case(), std::nullopt, declared), declared);
  // An empty list in case.json is a list all the same: the adapter's own choice.
  EXPECT_EQ(*VariantTargetsFor(Case({{"variant_targets", json::array()}}), std::nullopt, declared),
            std::vector<std::string>{});
}

json Choice(const std::string& entry, const std::string& chosen) { return {{"entry", entry}, {"chosen", chosen}}; }

// The FAIL message of a malformed report; empty when the report is well formed.
std::string ReportProblem(const json& report) {
  const LoadedModel model = VariantModel();
  StatusOr<std::vector<std::string>> selected = ReportedSelection(report, CollectEntries(*model.proto));
  return selected.ok() ? "" : selected.status().message();
}

TEST(VariantCheckTest, ReportedSelectionTakesCallsAndIgnoresMainAndEmptyReports) {
  const LoadedModel model = VariantModel();
  const std::vector<VariantEntry> entries = CollectEntries(*model.proto);
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(*ReportedSelection(json::array(), entries), std::vector<std::string>{});  // the main graph ran
  const json report = json::array({Choice("e0", "org.onnxparity.test:FusedAddRelu"), Choice("e1", "main"),
                                   Choice("e2", "ai.onnx:Add")});
  EXPECT_EQ(*ReportedSelection(report, entries), (std::vector<std::string>{"e0", "e2"}));
  const json none = json::array({Choice("e2", "main"), Choice("e0", "main"), Choice("e1", "main")});
  EXPECT_EQ(*ReportedSelection(none, entries), std::vector<std::string>{});
}

TEST(VariantCheckTest, AMalformedReportIsAFailNamingTheEntry) {
  const json e1 = Choice("e1", "main"), e2 = Choice("e2", "main");
  EXPECT_EQ(ReportProblem(json::array({Choice("e0", "main"), e1, e2, Choice("e7", "main")})),
            "variant report: reports entry 'e7', which the model does not have (its entries: e0, e1, e2)");
  EXPECT_EQ(ReportProblem(json::array({Choice("e0", "ai.onnx:Gemm"), e1, e2})),
            "variant report: entry e0 chosen 'ai.onnx:Gemm' but its call is 'org.onnxparity.test:FusedAddRelu' "
            "(a choice is the call or \"main\")");
  // An empty choice is not "main": it is no call of the entry.
  EXPECT_EQ(ReportProblem(json::array({Choice("e0", ""), e1, e2})),
            "variant report: entry e0 chosen '' but its call is 'org.onnxparity.test:FusedAddRelu' "
            "(a choice is the call or \"main\")");
  EXPECT_EQ(ReportProblem(json::array({Choice("e0", "main"), e1, Choice("e1", "org.onnxparity.test:FusedAddReluNpu"),
                                       e2})),
            "variant report: entry e1 reported twice");
  EXPECT_EQ(ReportProblem(json::array({Choice("e0", "org.onnxparity.test:FusedAddRelu"), e2})),
            "variant report: reports 2 of 3 entries (missing [e1]); a backend reports one choice per entry, or none");
  EXPECT_EQ(ReportProblem(json::array({Choice("", "main"), e1, e2})),
            "variant report: reports entry '', which the model does not have (its entries: e0, e1, e2)");
  EXPECT_EQ(ReportProblem(json::array({json{{"entry", "e0"}}, e1, e2})),
            "variant report: a choice is not {\"entry\", \"chosen\"} strings: {\"entry\":\"e0\"}");
}

TEST(VariantCheckTest, MismatchMessageNamesTargetsSelectedAndExpected) {
  EXPECT_EQ(SelectionMismatch({"portable"}, {"e2", "e0"}, {"e0", "e2"}), "");
  EXPECT_EQ(SelectionMismatch({"org.onnxparity.reference", "portable"}, {}, {"e0"}),
            "variant selection: targets [org.onnxparity.reference, portable] selected [], expected [e0]");
}

TEST(VariantCheckTest, ExpectedSelectionIsTheReferencesResolution) {
  const LoadedModel model = VariantModel();
  ASSERT_TRUE(HasVariants(*model.proto));
  const std::vector<std::string> declared = {kReferenceTarget, kPortableTarget};
  EXPECT_EQ(*ExpectedSelection(Case(), model, declared, declared), std::vector<std::string>{"e0"});
  EXPECT_EQ(*ExpectedSelection(Case(), model, {"com.example.npu"}, declared), std::vector<std::string>{"e1"});
  EXPECT_EQ(*ExpectedSelection(Case(), model, {kPortableTarget}, declared), std::vector<std::string>{"e2"});
  EXPECT_EQ(*ExpectedSelection(Case(), model, {"com.example.none"}, declared), std::vector<std::string>{});
  // An empty list is the adapter's own choice: its declared targets.
  EXPECT_EQ(*ExpectedSelection(Case(), model, {}, declared), std::vector<std::string>{"e0"});
  EXPECT_EQ(*ExpectedSelection(Case(), model, {}, {}), std::vector<std::string>{});
}

TEST(VariantCheckTest, CaseJsonPinsTheSelectionPerTargetList) {
  const LoadedModel model = VariantModel();
  const CaseInfo pinned = Case({{"variants", {{"select", {{"org.onnxparity.reference,portable", {"e2"}}}}}}});
  EXPECT_EQ(*ExpectedSelection(pinned, model, {kReferenceTarget, kPortableTarget}, {}),
            std::vector<std::string>{"e2"});
  // Another target list is not pinned: the resolution decides.
  EXPECT_EQ(*ExpectedSelection(pinned, model, {"com.example.npu"}, {}), std::vector<std::string>{"e1"});
  // An empty list sent is checked as the declared targets, key and all; the
  // key "" is for an adapter that declares none.
  const CaseInfo none = Case({{"variants", {{"select", {{"", json::array()}, {"portable", {"e2"}}}}}}});
  EXPECT_EQ(*ExpectedSelection(none, model, {}, {kPortableTarget}), std::vector<std::string>{"e2"});
  EXPECT_EQ(*ExpectedSelection(none, model, {}, {}), std::vector<std::string>{});

  const CaseInfo unknown = Case({{"variants", {{"select", {{"portable", {"e7"}}}}}}});
  StatusOr<std::vector<std::string>> bad = ExpectedSelection(unknown, model, {kPortableTarget}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("names entry 'e7', which the model does not have (its entries: e0, e1, e2)"),
            std::string::npos)
      << bad.status().message();
  // A malformed "select" never reaches here: ParseCaseFile refuses it (case_file_test.cc).
}

TEST(VariantCheckTest, AModelTheReferenceCannotResolveIsAnErrorNamingTheRule) {
  LoadedModel model = VariantModel();
  auto broken = std::make_shared<onnx::ModelProto>(*model.proto);
  broken->mutable_graph()->mutable_equivalent_subgraph(0)->set_op_type("NoSuchFunction");
  model.proto = broken;
  StatusOr<std::vector<std::string>> bad = ExpectedSelection(Case(), model, {kReferenceTarget}, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("the reference cannot resolve"), std::string::npos);
  EXPECT_NE(bad.status().message().find(kRuleCall), std::string::npos) << bad.status().message();
}

}  // namespace
}  // namespace parity
