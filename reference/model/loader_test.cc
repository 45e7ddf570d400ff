// Tests of model loading from files and bytes.
#include "reference/model/loader.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>

#include <gtest/gtest.h>

namespace parity {
namespace {

TEST(LoaderTest, MissingFileIsNotFound) {
  StatusOr<LoadedModel> m = LoadModelFile("/nonexistent/model.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
}

TEST(LoaderTest, EveryTruncationOfAValidModelIsAnErrorOrAModel) {
  onnx::ModelProto proto;
  proto.set_ir_version(10);
  proto.add_opset_import()->set_version(21);
  auto* n = proto.mutable_graph()->add_node();
  n->set_op_type("Relu");
  n->add_input("x");
  n->add_output("y");
  const std::string bytes = proto.SerializeAsString();
  ASSERT_TRUE(LoadModelBytes(bytes, "whole").ok());
  int refused = 0;
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    StatusOr<LoadedModel> m = LoadModelBytes(bytes.substr(0, cut), "cut");
    if (!m.ok()) {
      ++refused;
      EXPECT_NE(m.status().message().find("malformed or truncated"), std::string::npos);
    }
  }
  // A cut on a field boundary is a valid, smaller message; most cuts are not.
  EXPECT_GT(refused, static_cast<int>(bytes.size()) / 2);
}

TEST(LoaderTest, FileLoadRemembersItsFolderForExternalData) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "parity_loader";
  std::filesystem::create_directories(dir);
  onnx::ModelProto proto;
  proto.set_ir_version(10);
  std::ofstream(dir / "m.onnx", std::ios::binary) << proto.SerializeAsString();
  StatusOr<LoadedModel> m = LoadModelFile((dir / "m.onnx").string());
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  EXPECT_EQ(m->base_dir, dir.string());
}

// A float[2] tensor named `name` whose data is in `location` at offset 4.
onnx::TensorProto ExternalFloats(const std::string& name, const std::string& location) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(2);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* where = t.add_external_data();
  where->set_key("location");
  where->set_value(location);
  auto* offset = t.add_external_data();
  offset->set_key("offset");
  offset->set_value("4");
  return t;
}

TEST(LoaderTest, CheckModelExternalDataWalksEveryTensorOfEveryGraph) {
  const auto root = std::filesystem::path(::testing::TempDir()) / "parity_loader_external";
  std::filesystem::remove_all(root);
  std::filesystem::create_directories(root / "case");
  std::ofstream(root / "case" / "w.bin", std::ios::binary) << std::string(12, '\0');
  std::ofstream(root / "outside.bin", std::ios::binary) << std::string(12, '\0');
  const std::string dir = (root / "case").string();

  onnx::ModelProto proto;
  proto.set_ir_version(10);
  EXPECT_TRUE(CheckModelExternalData(LoadedModel{std::make_shared<onnx::ModelProto>(proto), "m", ""}).ok())
      << "no external data needs no folder";
  *proto.mutable_graph()->add_initializer() = ExternalFloats("w", "w.bin");
  EXPECT_TRUE(CheckModelExternalData(LoadedModel{std::make_shared<onnx::ModelProto>(proto), "m", dir}).ok());
  const Status no_folder = CheckModelExternalData(LoadedModel{std::make_shared<onnx::ModelProto>(proto), "m", ""});
  EXPECT_NE(no_folder.message().find("not loaded from a folder"), std::string::npos) << no_folder.ToString();

  // Where a bad location may hide: a subgraph's initializer, a tensor
  // attribute, a sparse initializer's values, a model function's node.
  auto refused = [&](const std::function<void(onnx::ModelProto&, const onnx::TensorProto&)>& place,
                     const std::string& location, const std::string& rule) {
    onnx::ModelProto m = proto;
    place(m, ExternalFloats("bad", location));
    const Status s = CheckModelExternalData(LoadedModel{std::make_shared<onnx::ModelProto>(m), "m.onnx", dir});
    EXPECT_FALSE(s.ok()) << location;
    EXPECT_NE(s.message().find(rule), std::string::npos) << s.ToString();
    EXPECT_NE(s.message().find("model 'm.onnx': tensor 'bad'"), std::string::npos) << s.ToString();
  };
  auto in_subgraph = [](onnx::ModelProto& m, const onnx::TensorProto& t) {
    auto* node = m.mutable_graph()->add_node();
    node->set_op_type("If");
    auto* branch = node->add_attribute();
    branch->set_name("then_branch");
    branch->set_type(onnx::AttributeProto::GRAPH);
    *branch->mutable_g()->add_initializer() = t;
  };
  auto in_attribute = [](onnx::ModelProto& m, const onnx::TensorProto& t) {
    auto* node = m.mutable_graph()->add_node();
    node->set_op_type("Constant");
    auto* value = node->add_attribute();
    value->set_name("value");
    value->set_type(onnx::AttributeProto::TENSOR);
    *value->mutable_t() = t;
  };
  auto in_sparse = [](onnx::ModelProto& m, const onnx::TensorProto& t) {
    *m.mutable_graph()->add_sparse_initializer()->mutable_values() = t;
  };
  auto in_function = [&](onnx::ModelProto& m, const onnx::TensorProto& t) {
    onnx::ModelProto holder;
    in_attribute(holder, t);
    *m.add_functions()->add_node() = holder.graph().node(0);
  };
  refused(in_subgraph, "../outside.bin", "contains '..'");
  refused(in_attribute, (root / "outside.bin").string(), "is an absolute path");
  refused(in_sparse, "sub/../w.bin", "contains '..'");
  refused(in_function, "missing.bin", "not found");
  std::filesystem::create_symlink(root / "outside.bin", root / "case" / "link.bin");
  refused(in_subgraph, "link.bin", "outside the model's folder");
  onnx::ModelProto beyond = proto;
  beyond.mutable_graph()->mutable_initializer(0)->mutable_external_data(1)->set_value("8");
  const Status range = CheckModelExternalData(LoadedModel{std::make_shared<onnx::ModelProto>(beyond), "m", dir});
  EXPECT_NE(range.message().find("lies beyond the end of 'w.bin'"), std::string::npos) << range.ToString();
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace parity
