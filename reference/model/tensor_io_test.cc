// Tests of TensorProto / SequenceProto / OptionalProto conversion: packed
// sub-byte types, typed fields, external data and its checks.
#include "reference/model/tensor_io.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <gtest/gtest.h>

namespace parity {
namespace {

namespace fs = std::filesystem;

TEST(TensorIoTest, PackedInt4RoundTripsAndSignExtends) {
  StatusOr<Tensor> t = Tensor::Create(DataType::kInt4, {5});
  ASSERT_TRUE(t.ok());
  const std::vector<int64_t> values = {-8, 7, -1, 0, 3};
  for (size_t i = 0; i < values.size(); ++i) t->SetInt64(static_cast<int64_t>(i), values[i]);
  onnx::TensorProto proto;
  TensorToProto(*t, &proto);
  ASSERT_EQ(proto.raw_data().size(), 3u);  // ceil(5 * 4 / 8)
  // First element in the low nibble: -8 = 0x8, 7 = 0x7 -> 0x78.
  EXPECT_EQ(static_cast<uint8_t>(proto.raw_data()[0]), 0x78);
  StatusOr<Tensor> back = TensorFromProto(proto);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->ToInt64s(), values);
}

TEST(TensorIoTest, PackedTwoBitAndSixBitTypesRoundTrip) {
  for (DataType type : {DataType::kUint2, DataType::kInt2, DataType::kFloat6E2M3, DataType::kFloat4E2M1}) {
    StatusOr<Tensor> t = Tensor::Create(type, {7});
    ASSERT_TRUE(t.ok());
    for (int64_t i = 0; i < 7; ++i) t->mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i % 4);
    if (type == DataType::kInt2) {
      for (int64_t i = 0; i < 7; ++i) t->SetInt64(i, (i % 4) - 2);
    }
    onnx::TensorProto proto;
    TensorToProto(*t, &proto);
    EXPECT_EQ(static_cast<int64_t>(proto.raw_data().size()), (7 * PackedBits(type) + 7) / 8) << DataTypeName(type);
    StatusOr<Tensor> back = TensorFromProto(proto);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    for (int64_t i = 0; i < 7; ++i) EXPECT_EQ(back->GetInt64(i), t->GetInt64(i)) << DataTypeName(type) << " " << i;
  }
}

TEST(TensorIoTest, Float16FromInt32DataKeepsBits) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT16);
  proto.add_dims(2);
  proto.add_int32_data(0x3C00);  // 1.0
  proto.add_int32_data(0xC000);  // -2.0
  StatusOr<Tensor> t = TensorFromProto(proto);
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->GetDouble(0), 1.0);
  EXPECT_EQ(t->GetDouble(1), -2.0);
}

TEST(TensorIoTest, WrongFieldCountNamesTheTensor) {
  onnx::TensorProto proto;
  proto.set_name("weights");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(3);
  proto.add_float_data(1.0f);
  StatusOr<Tensor> t = TensorFromProto(proto);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("'weights'"), std::string::npos);
  EXPECT_NE(t.status().message().find("float_data"), std::string::npos);
}

TEST(TensorIoTest, UnknownDataTypeIsRefused) {
  onnx::TensorProto proto;
  proto.set_data_type(99);
  EXPECT_FALSE(TensorFromProto(proto).ok());
}

TEST(TensorIoTest, ExternalDataWithOffsetIsRead) {
  const fs::path dir = fs::path(::testing::TempDir()) / "parity_external_ok";
  fs::create_directories(dir);
  const float values[3] = {1.5f, -2.0f, 4.25f};
  {
    std::ofstream out(dir / "w.bin", std::ios::binary);
    out.write("PAD!", 4);
    out.write(reinterpret_cast<const char*>(values), sizeof(values));
  }
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(3);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  for (auto [k, v] : {std::pair{"location", "w.bin"}, std::pair{"offset", "4"}, std::pair{"length", "12"}}) {
    auto* e = proto.add_external_data();
    e->set_key(k);
    e->set_value(v);
  }
  StatusOr<Tensor> t = TensorFromProto(proto, ExternalDataPolicy{dir.string()});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->GetDouble(2), 4.25);
  // The same tensor without a model folder is refused.
  EXPECT_FALSE(TensorFromProto(proto).ok());
  // A length that does not fit the shape is refused.
  proto.mutable_external_data(2)->set_value("8");
  StatusOr<Tensor> bad = TensorFromProto(proto, ExternalDataPolicy{dir.string()});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("length 8"), std::string::npos) << bad.status().message();
}

TEST(TensorIoTest, ExternalPathsThatEscapeAreRefused) {
  const fs::path dir = fs::path(::testing::TempDir()) / "parity_external_escape";
  fs::create_directories(dir / "sub");
  std::ofstream(dir / "sub" / "inside.bin") << "x";
  EXPECT_TRUE(ResolveExternalDataPath((dir / "sub").string(), "inside.bin").ok());
  EXPECT_FALSE(ResolveExternalDataPath((dir / "sub").string(), "../sub/inside.bin").ok());
  EXPECT_FALSE(ResolveExternalDataPath((dir / "sub").string(), "/etc/hostname").ok());
  EXPECT_FALSE(ResolveExternalDataPath((dir / "sub").string(), "missing.bin").ok());
  EXPECT_FALSE(ResolveExternalDataPath((dir / "sub").string(), "").ok());
  // A link inside the folder pointing inside is fine; pointing out is not.
  std::error_code ec;
  fs::remove(dir / "sub" / "in_link.bin", ec);
  fs::remove(dir / "sub" / "out_link.bin", ec);
  fs::create_symlink("inside.bin", dir / "sub" / "in_link.bin");
  std::ofstream(dir / "outside.bin") << "y";
  fs::create_symlink(dir / "outside.bin", dir / "sub" / "out_link.bin");
  EXPECT_TRUE(ResolveExternalDataPath((dir / "sub").string(), "in_link.bin").ok());
  StatusOr<std::string> out = ResolveExternalDataPath((dir / "sub").string(), "out_link.bin");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("outside the model's folder"), std::string::npos);
}

// A few bytes that declare a huge tensor are refused before the tensor is
// allocated: with a 1 MiB allocation limit, 2^31 floats would be refused by
// the limit too, so the limit is raised out of the way and the message must
// be the data-length check's.
TEST(TensorIoTest, DataLengthIsCheckedBeforeTheTensorIsAllocated) {
  const int64_t saved = Tensor::AllocationLimit();
  Tensor::SetAllocationLimit(int64_t{1} << 62);
  onnx::TensorProto raw;
  raw.set_name("huge");
  raw.set_data_type(onnx::TensorProto::FLOAT);
  raw.add_dims(int64_t{1} << 31);
  raw.set_raw_data("0123456789");
  StatusOr<Tensor> t = TensorFromProto(raw);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("10 bytes of data, expected 8589934592"), std::string::npos)
      << t.status().message();
  onnx::TensorProto typed;
  typed.set_name("huge_typed");
  typed.set_data_type(onnx::TensorProto::DOUBLE);
  typed.add_dims(int64_t{1} << 32);
  typed.add_double_data(1.0);
  t = TensorFromProto(typed);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("1 entries in double_data"), std::string::npos) << t.status().message();
  Tensor::SetAllocationLimit(saved);
}

// A folder `name` with a 16-byte w.bin, and a float[1] tensor "w" whose
// external data entries are `entries` (key, value).
std::pair<fs::path, onnx::TensorProto> ExternalFloat(const std::string& name,
                                                     std::initializer_list<std::pair<const char*, const char*>> entries) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::create_directories(dir);
  std::ofstream(dir / "w.bin", std::ios::binary) << std::string(16, '\0');
  onnx::TensorProto proto;
  proto.set_name("w");
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.add_dims(1);
  proto.set_data_location(onnx::TensorProto::EXTERNAL);
  for (const auto& [key, value] : entries) {
    auto* e = proto.add_external_data();
    e->set_key(key);
    e->set_value(value);
  }
  return {dir, proto};
}

TEST(TensorIoTest, ExternalOffsetsAreDecimalDigitsOnly) {
  auto [dir, proto] = ExternalFloat("parity_external_numbers", {{"location", "w.bin"}, {"offset", "0"}});
  auto* offset = proto.mutable_external_data(1);
  for (const char* text : {" 0", "+0", "0 ", "-0", "0x4", "", "99999999999999999999"}) {
    offset->set_value(text);
    StatusOr<Tensor> t = TensorFromProto(proto, ExternalDataPolicy{dir.string()});
    ASSERT_FALSE(t.ok()) << "offset '" << text << "'";
    EXPECT_NE(t.status().message().find("external data offset '" + std::string(text) + "'"), std::string::npos)
        << t.status().message();
  }
  offset->set_value("12");
  EXPECT_TRUE(TensorFromProto(proto, ExternalDataPolicy{dir.string()}).ok());
}

// offset + length past int64 was signed overflow (undefined behaviour) in
// the range check; it must be a plain refusal.
TEST(TensorIoTest, ExternalRangeThatOverflowsIsRefused) {
  const auto [dir, proto] = ExternalFloat(
      "parity_external_overflow", {{"location", "w.bin"}, {"offset", "9223372036854775807"}, {"length", "4"}});
  StatusOr<Tensor> t = TensorFromProto(proto, ExternalDataPolicy{dir.string()});
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("lies beyond the end of 'w.bin'"), std::string::npos) << t.status().message();
  EXPECT_FALSE(CheckExternalData(proto, ExternalDataPolicy{dir.string()}).ok());
}

TEST(TensorIoTest, SequenceAndOptionalRoundTrip) {
  Value seq = Value::FromSequence({Value::FromTensor(Tensor::FromInt64s({2}, {1, 2})),
                                   Value::FromTensor(Tensor::FromInt64s({1}, {3}))});
  onnx::SequenceProto sp;
  ValueToSequenceProto(seq, &sp);
  StatusOr<Value> back = ValueFromSequenceProto(sp);
  ASSERT_TRUE(back.ok());
  ASSERT_EQ(back->sequence().size(), 2u);
  EXPECT_EQ(back->sequence()[1].tensor().GetInt64(0), 3);

  onnx::OptionalProto none;
  ValueToOptionalProto(Value::NoneOptional(), &none);
  StatusOr<Value> none_back = ValueFromOptionalProto(none);
  ASSERT_TRUE(none_back.ok());
  EXPECT_FALSE(none_back->has_element());

  onnx::OptionalProto some;
  ValueToOptionalProto(Value::SomeOptional(seq), &some);
  StatusOr<Value> some_back = ValueFromOptionalProto(some);
  ASSERT_TRUE(some_back.ok());
  ASSERT_TRUE(some_back->has_element());
  EXPECT_TRUE(some_back->element().is_sequence());
}

// SerializeValue writes a tensor's raw_data from its buffer instead of
// through the message: its bytes must be the message's own serialization,
// for every layout (raw bytes, packed sub-byte, strings) and for sizes past
// the coded stream's buffer.
TEST(TensorIoTest, SerializedValueIsTheTensorProtosOwnEncoding) {
  Tensor strings = *Tensor::Create(DataType::kString, {2});
  strings.mutable_strings() = {"a", "bc"};
  const std::vector<Tensor> tensors = {
      *Tensor::FromDoubles(DataType::kFloat, {2, 2}, {1.5, -0.0, 3.25, 1e-40}),
      *Tensor::FromDoubles(DataType::kFloat16, {3}, {1, -2, 65504}),
      Tensor::FromInt64s({2}, {-7, 1}),
      *Tensor::FromDoubles(DataType::kInt4, {3}, {-8, 7, 1}),
      Tensor::Scalar(DataType::kDouble, 0.5),
      *Tensor::FromDoubles(DataType::kFloat, {0, 3}, {}),
      *Tensor::FromDoubles(DataType::kFloat, {300000}, std::vector<double>(300000, 0.25)),
      strings,
  };
  for (const Tensor& t : tensors) {
    onnx::TensorProto proto;
    proto.set_name("y");
    TensorToProto(t, &proto);
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      ASSERT_TRUE(SerializeValue(Value::FromTensor(t), "y", &stream));
    }
    EXPECT_EQ(bytes, proto.SerializeAsString()) << t.Description();
  }
}

}  // namespace
}  // namespace parity

namespace parity {
namespace {

// The bytes protobuf writes for `t` named `name` (SerializeValue writes the same).
std::string ProtobufBytes(const Tensor& t, const std::string& name) {
  onnx::TensorProto proto;
  TensorToProto(t, &proto);
  proto.set_name(name);
  return proto.SerializeAsString();
}

TEST(PlainWireTest, ReadsProtobufsBytesBack) {
  std::vector<Tensor> tensors;
  tensors.push_back(*Tensor::FromDoubles(DataType::kFloat, {2, 3}, {1.5, -0.0, 3e38, -7, 0.25, 1e-40}));
  tensors.push_back(*Tensor::FromDoubles(DataType::kFloat16, {3}, {1, -2, 65504}));
  tensors.push_back(*Tensor::FromDoubles(DataType::kBool, {4}, {1, 0, 0, 1}));
  tensors.push_back(Tensor::FromInt64s({2, 1}, {-5, int64_t{1} << 40}));
  tensors.push_back(*Tensor::FromDoubles(DataType::kDouble, {}, {3.25}));  // a scalar: no dims
  tensors.push_back(*Tensor::Create(DataType::kFloat, {0, 4}));           // no elements: raw_data is empty
  tensors.push_back(*Tensor::Create(DataType::kComplex64, {2}));
  tensors.push_back(*Tensor::Create(DataType::kFloat, {200, 300}));       // dims of two varint bytes
  for (const Tensor& t : tensors) {
    SCOPED_TRACE(t.Description());
    for (const std::string name : {"", "present_key_0"}) {
      const std::string wire = ProtobufBytes(t, name);
      const std::optional<Tensor> back = TensorFromPlainWire(wire.data(), wire.size());
      ASSERT_TRUE(back.has_value());
      EXPECT_EQ(back->dtype(), t.dtype());
      EXPECT_EQ(back->shape(), t.shape());
      ASSERT_EQ(back->byte_size(), t.byte_size());
      if (t.byte_size() > 0) {
        EXPECT_EQ(std::memcmp(back->raw_bytes(), t.raw_bytes(), t.byte_size()), 0);
      }
    }
  }
}

TEST(PlainWireTest, PackedDimsAreRead) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::FLOAT);
  proto.set_raw_data(std::string(24, '\0'));
  const std::string unpacked = [&] {
    onnx::TensorProto p = proto;
    p.add_dims(2);
    p.add_dims(3);
    return p.SerializeAsString();
  }();
  // dims as one length-delimited field (2 bytes: 2, 3) where protobuf writes two varints.
  std::string packed = std::string("\x0a\x02\x02\x03", 4) + proto.SerializeAsString();
  for (const std::string& wire : {unpacked, packed}) {
    const std::optional<Tensor> t = TensorFromPlainWire(wire.data(), wire.size());
    ASSERT_TRUE(t.has_value());
    EXPECT_EQ(t->shape(), (Shape{2, 3}));
  }
}

// What the fast path reads, TensorFromProto reads the same from the same bytes.
TEST(PlainWireTest, ReadsWhatTensorFromProtoReads) {
  std::vector<std::string> wires;
  {
    onnx::TensorProto p;  // data_type and raw_data twice: the last of each holds
    p.add_dims(3);
    p.set_data_type(onnx::TensorProto::INT8);
    p.set_raw_data(std::string(6, '\x01'));
    std::string wire = p.SerializeAsString();
    onnx::TensorProto later;
    later.set_data_type(onnx::TensorProto::UINT8);
    later.set_raw_data(std::string("\x07\x08\xff", 3));
    wires.push_back(wire + later.SerializeAsString());
  }
  {
    onnx::TensorProto p;  // a dim of nine varint bytes, beside a dim of 0: no elements
    p.add_dims(int64_t{1} << 60);
    p.add_dims(0);
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.set_raw_data("");
    wires.push_back(p.SerializeAsString());
  }
  {
    onnx::TensorProto p;
    p.add_dims(2);
    p.add_dims(2);
    p.set_data_type(onnx::TensorProto::BFLOAT16);
    p.set_name("x");
    p.set_raw_data(std::string("\x80\x3f\x00\xc0\x80\x7f\xc0\x7f", 8));
    wires.push_back(p.SerializeAsString());
  }
  for (const std::string& wire : wires) {
    onnx::TensorProto proto;
    ASSERT_TRUE(proto.ParseFromString(wire));
    const StatusOr<Tensor> slow = TensorFromProto(proto);
    ASSERT_TRUE(slow.ok()) << slow.status().ToString();
    const std::optional<Tensor> fast = TensorFromPlainWire(wire.data(), wire.size());
    ASSERT_TRUE(fast.has_value());
    EXPECT_EQ(fast->dtype(), slow->dtype());
    EXPECT_EQ(fast->shape(), slow->shape());
    ASSERT_EQ(fast->byte_size(), slow->byte_size());
    if (slow->byte_size() > 0) {
      EXPECT_EQ(std::memcmp(fast->raw_bytes(), slow->raw_bytes(), slow->byte_size()), 0);
    }
  }
}

TEST(PlainWireTest, AnythingElseIsLeftToTensorFromProto) {
  auto plain = [] {
    onnx::TensorProto p;
    p.add_dims(2);
    p.set_data_type(onnx::TensorProto::FLOAT);
    p.set_raw_data(std::string(8, '\0'));
    return p;
  };
  std::vector<std::pair<std::string, std::string>> cases;
  {
    onnx::TensorProto p = plain();
    p.set_doc_string("another field");
    cases.emplace_back("doc_string", p.SerializeAsString());
  }
  {
    onnx::TensorProto p = plain();
    p.clear_raw_data();
    p.add_float_data(1);
    p.add_float_data(2);
    cases.emplace_back("typed field", p.SerializeAsString());
  }
  {
    onnx::TensorProto p = plain();
    p.set_raw_data(std::string(7, '\0'));
    cases.emplace_back("raw_data of the wrong size", p.SerializeAsString());
  }
  {
    onnx::TensorProto p = plain();
    p.set_data_type(999);
    cases.emplace_back("unknown data_type", p.SerializeAsString());
  }
  {
    onnx::TensorProto p = plain();
    p.set_dims(0, -1);
    cases.emplace_back("negative dim", p.SerializeAsString());
  }
  {
    onnx::TensorProto p = plain();
    p.clear_data_type();
    cases.emplace_back("no data_type", p.SerializeAsString());
  }
  {
    onnx::TensorProto p = plain();
    p.set_data_location(onnx::TensorProto::EXTERNAL);
    cases.emplace_back("external data", p.SerializeAsString());
  }
  {
    const std::string whole = plain().SerializeAsString();
    cases.emplace_back("truncated", whole.substr(0, whole.size() - 3));
    cases.emplace_back("a varint that never ends", std::string(12, '\xff'));
  }
  for (const auto& [what, wire] : cases) {
    EXPECT_FALSE(TensorFromPlainWire(wire.data(), wire.size()).has_value()) << what;
  }
  EXPECT_FALSE(TensorFromPlainWire(nullptr, 0).has_value());
}

}  // namespace
}  // namespace parity
