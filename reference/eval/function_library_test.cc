// The standard function library: the bodies of spec/functions/ embedded at
// build time, all of them, byte for byte, parsed without reading the disk.
#include "reference/eval/function_library.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "reference/eval/embedded_functions.h"
#include "reference/model/text_syntax.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

// spec/functions/ of the source tree: ctest passes PARITY_SOURCE_DIR.
fs::path FunctionsFolder() {
  const char* source = std::getenv("PARITY_SOURCE_DIR");
  return fs::path(source && *source ? source : PARITY_SOURCE_DIR) / "spec" / "functions";
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(FunctionLibraryTest, EmbedsEveryFileOfSpecFunctionsAsItIs) {
  std::set<std::string> on_disk;
  for (const auto& entry : fs::directory_iterator(FunctionsFolder())) {
    if (entry.path().extension() == ".onnxtxt") on_disk.insert(entry.path().filename().string());
  }
  ASSERT_FALSE(on_disk.empty()) << "no .onnxtxt file in " << FunctionsFolder();
  std::set<std::string> embedded;
  for (const EmbeddedFunctionFile& file : EmbeddedFunctionFiles()) {
    embedded.insert(std::string(file.name));
    // A stale build would embed an older text.
    EXPECT_EQ(file.text, ReadFile(FunctionsFolder() / file.name)) << file.name << " differs from the source tree";
  }
  EXPECT_EQ(embedded, on_disk);
}

TEST(FunctionLibraryTest, StandardHoldsEveryFunctionOfEveryEmbeddedFile) {
  StatusOr<const FunctionLibrary*> standard = FunctionLibrary::Standard();
  ASSERT_TRUE(standard.ok()) << standard.status().ToString();
  size_t functions = 0;
  for (const EmbeddedFunctionFile& file : EmbeddedFunctionFiles()) {
    StatusOr<std::vector<onnx::FunctionProto>> parsed = ParseFunctionsText(file.text);
    ASSERT_TRUE(parsed.ok()) << file.name << ": " << parsed.status().ToString();
    for (const onnx::FunctionProto& f : *parsed) {
      const onnx::FunctionProto* found = (*standard)->Find(f.domain(), f.name(), f.overload());
      ASSERT_NE(found, nullptr) << f.domain() << "." << f.name() << " of " << file.name;
      EXPECT_EQ(found->SerializeAsString(), f.SerializeAsString()) << f.name();
      ++functions;
    }
  }
  EXPECT_EQ((*standard)->size(), functions);
  // The same library each time: parsed once.
  StatusOr<const FunctionLibrary*> again = FunctionLibrary::Standard();
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *standard);
}

TEST(FunctionLibraryTest, ParseErrorsNameTheFileAndLine) {
  const EmbeddedFunctionFile files[] = {
      {"good.onnxtxt", "<domain: \"d\", opset_import: [\"\" : 18]>\nF (x) => (y) {\n  y = Identity(x)\n}\n"},
      {"bad.onnxtxt", "<domain: \"d\", opset_import: [\"\" : 18]>\nG (x) => (y) {\n  y = Identity(x\n}\n"},
  };
  StatusOr<FunctionLibrary> parsed = FunctionLibrary::Parse(files);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("spec/functions/bad.onnxtxt:4:"), std::string::npos)
      << parsed.status().ToString();
}

TEST(FunctionLibraryTest, AFunctionDefinedInTwoFilesIsAnError) {
  const std::string text = "<domain: \"d\", opset_import: [\"\" : 18]>\nF (x) => (y) {\n  y = Identity(x)\n}\n";
  const EmbeddedFunctionFile files[] = {{"a.onnxtxt", text}, {"b.onnxtxt", text}};
  StatusOr<FunctionLibrary> parsed = FunctionLibrary::Parse(files);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("defined twice"), std::string::npos) << parsed.status().ToString();
}

}  // namespace
}  // namespace parity
