// Tests of the output digests: SHA-256 itself, equality with the bytes of
// the file `parity expect` writes, and that any change of value, shape, type
// or name changes the digest.
#include "harness/results/output_digest.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "reference/model/tensor_io.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

Tensor Floats(Shape shape, const std::vector<double>& values) {
  return *Tensor::FromDoubles(DataType::kFloat, std::move(shape), values);
}

std::string Digest(const Value& value, const std::string& name) {
  StatusOr<std::vector<std::string>> d = OutputDigests({value}, {name});
  EXPECT_TRUE(d.ok()) << d.status().ToString();
  return d.ok() ? (*d)[0] : "";
}

TEST(OutputDigestTest, Sha256OfTheStandardVectors) {
  // "abc" (FIPS 180-2's example) and no bytes, as sha256sum gives them.
  EXPECT_EQ(*Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(*Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(OutputDigestTest, EqualsTheDigestOfTheValueFile) {
  const fs::path dir = fs::path(::testing::TempDir()) / ("parity_output_digest_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::vector<std::pair<std::string, Value>> values = {
      {"y", Value::FromTensor(Floats({2, 2}, {1.5, -0.0, 3.25, 1e-40}))},
      {"s", Value::FromSequence({Value::FromTensor(Floats({1}, {2})), Value::FromTensor(Floats({2}, {3, 4}))},
                                DataType::kFloat)},
      {"o", Value::SomeOptional(Value::FromTensor(Floats({1}, {5})))},
      {"n", Value::NoneOptional()},
      // The tensor forms that write raw_data straight from the buffer, and
      // those that do not (packed int4, strings).
      {"h", Value::FromTensor(*Tensor::FromDoubles(DataType::kFloat16, {3}, {1, -2, 65504}))},
      {"i", Value::FromTensor(Tensor::FromInt64s({2}, {-7, 1} ))},
      {"q", Value::FromTensor(*Tensor::FromDoubles(DataType::kInt4, {3}, {-8, 7, 1}))},
      {"scalar", Value::FromTensor(Tensor::Scalar(DataType::kDouble, 0.5))},
      {"empty", Value::FromTensor(Floats({0, 3}, {}))},
      {"large", Value::FromTensor(Floats({300000}, std::vector<double>(300000, 0.25)))},
      {"str", Value::FromTensor([] {
         Tensor t = *Tensor::Create(DataType::kString, {2});
         t.mutable_strings() = {"a", "bc"};
         return t;
       }())},
  };
  for (const auto& [name, value] : values) {
    const std::string path = (dir / (name + ".pb")).string();
    ASSERT_TRUE(WriteValueFile(path, value, name).ok());
    std::ifstream in(path, std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    EXPECT_EQ(SerializedValue(value, name), bytes.str()) << name;
    EXPECT_EQ(Digest(value, name), *Sha256Hex(bytes.str())) << name;
  }
  fs::remove_all(dir);
}

TEST(OutputDigestTest, AnyChangeChangesTheDigest) {
  const std::string base = Digest(Value::FromTensor(Floats({2, 2}, {1, 2, 3, 4})), "y");
  EXPECT_EQ(base.size(), 64u);
  // The same bits again give the same digest.
  EXPECT_EQ(Digest(Value::FromTensor(Floats({2, 2}, {1, 2, 3, 4})), "y"), base);
  // One element one ULP away, the sign of a zero, the shape, the type, the name.
  Tensor nudged = Floats({2, 2}, {1, 2, 3, 4});
  nudged.mutable_data<float>()[3] = std::nextafter(4.0f, 5.0f);
  EXPECT_NE(Digest(Value::FromTensor(nudged), "y"), base);
  EXPECT_NE(Digest(Value::FromTensor(Floats({2}, {0.0, 1})), "y"), Digest(Value::FromTensor(Floats({2}, {-0.0, 1})), "y"));
  EXPECT_NE(Digest(Value::FromTensor(Floats({4}, {1, 2, 3, 4})), "y"), base);
  EXPECT_NE(Digest(Value::FromTensor(*Tensor::FromDoubles(DataType::kDouble, {2, 2}, {1, 2, 3, 4})), "y"), base);
  EXPECT_NE(Digest(Value::FromTensor(Floats({2, 2}, {1, 2, 3, 4})), "z"), base);
}

TEST(OutputDigestTest, CountsMustMatch) {
  StatusOr<std::vector<std::string>> d = OutputDigests({Value::FromTensor(Floats({1}, {1}))}, {"a", "b"});
  ASSERT_FALSE(d.ok());
  EXPECT_NE(d.status().message().find("1 outputs but 2 names"), std::string::npos) << d.status().message();
}

}  // namespace
}  // namespace parity
