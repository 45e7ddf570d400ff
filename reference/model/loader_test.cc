// Tests of model loading from files and bytes.
#include "reference/model/loader.h"

#include <filesystem>
#include <fstream>

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

}  // namespace
}  // namespace parity
