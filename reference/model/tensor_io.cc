// TensorProto, SequenceProto and OptionalProto <-> Value, with packed
// sub-byte types (an LSB-first bit stream, onnx.proto TensorProto.raw_data)
// and safely resolved external data.
#include "reference/model/tensor_io.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <google/protobuf/wire_format_lite.h>

#include <algorithm>
#include <cerrno>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>

#include "reference/core/checked_size.h"
#include "reference/model/loader.h"

namespace parity {
namespace {

namespace fs = std::filesystem;

bool HostIsLittleEndian() {
  const uint16_t probe = 1;
  uint8_t first;
  std::memcpy(&first, &probe, 1);
  return first == 1;
}

// Unpacks `count` elements of `bits` width from an LSB-first bit stream.
void UnpackBits(const uint8_t* packed, int bits, int64_t count, uint8_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t bit = i * bits;
    uint32_t word = packed[bit / 8];
    if ((bit % 8) + bits > 8) word |= static_cast<uint32_t>(packed[bit / 8 + 1]) << 8;
    out[i] = static_cast<uint8_t>((word >> (bit % 8)) & ((1u << bits) - 1));
  }
}

void PackBits(const uint8_t* in, int bits, int64_t count, std::string* packed) {
  packed->assign(static_cast<size_t>((count * bits + 7) / 8), '\0');
  auto* out = reinterpret_cast<uint8_t*>(packed->data());
  for (int64_t i = 0; i < count; ++i) {
    const int64_t bit = i * bits;
    const uint32_t v = (in[i] & ((1u << bits) - 1)) << (bit % 8);
    out[bit / 8] |= static_cast<uint8_t>(v & 0xFF);
    if (v > 0xFF) out[bit / 8 + 1] |= static_cast<uint8_t>(v >> 8);
  }
}

// Sign-extends sub-byte signed integers after unpacking.
void SignExtend(Tensor& t) {
  const int bits = PackedBits(t.dtype());
  if (t.dtype() != DataType::kInt4 && t.dtype() != DataType::kInt2) return;
  int8_t* d = t.mutable_data<int8_t>();
  for (int64_t i = 0; i < t.size(); ++i) {
    int v = static_cast<uint8_t>(d[i]);
    if (v & (1 << (bits - 1))) v -= (1 << bits);
    d[i] = static_cast<int8_t>(v);
  }
}

// Fills `t` from little-endian bytes in the packed layout of its type.
Status FillFromRawBytes(Tensor& t, const uint8_t* bytes, size_t length, const std::string& name) {
  const int bits = PackedBits(t.dtype());
  const int64_t want = (t.size() * bits + 7) / 8;
  if (static_cast<int64_t>(length) != want) {
    return InvalidModel("tensor '", name, "' (", t.Description(), ") has ", length, " bytes of data, expected ", want);
  }
  if (bits < 8) {
    UnpackBits(bytes, bits, t.size(), t.mutable_raw_bytes());
    SignExtend(t);
    return Status::Ok();
  }
  if (length) std::memcpy(t.mutable_raw_bytes(), bytes, length);
  if (!HostIsLittleEndian()) return Unimplemented("big-endian hosts are not supported");
  if (t.dtype() == DataType::kBool) {
    uint8_t* d = t.mutable_data<uint8_t>();
    for (int64_t i = 0; i < t.size(); ++i) d[i] = d[i] != 0;
  }
  return Status::Ok();
}

// Checks that the typed field a tensor of `dtype` with `n` elements reads
// holds the right number of entries, before anything is allocated.
Status CheckTypedFieldCount(const onnx::TensorProto& proto, DataType dtype, int64_t n, const std::string& description) {
  const char* field_name = "int32_data";
  int64_t have = proto.int32_data_size();
  int64_t want = n;
  switch (dtype) {
    case DataType::kFloat: field_name = "float_data", have = proto.float_data_size(); break;
    case DataType::kComplex64: field_name = "float_data", have = proto.float_data_size(), want = 2 * n; break;
    case DataType::kDouble: field_name = "double_data", have = proto.double_data_size(); break;
    case DataType::kComplex128: field_name = "double_data", have = proto.double_data_size(), want = 2 * n; break;
    case DataType::kInt64: field_name = "int64_data", have = proto.int64_data_size(); break;
    case DataType::kUint32:
    case DataType::kUint64: field_name = "uint64_data", have = proto.uint64_data_size(); break;
    case DataType::kString: field_name = "string_data", have = proto.string_data_size(); break;
    default: {
      // 4-bit and 2-bit types pack two or four elements into each int32_data entry.
      const int bits = PackedBits(dtype);
      const int per_entry = (bits == 4 || bits == 2) ? 8 / bits : 1;
      want = n / per_entry + (n % per_entry != 0);
    }
  }
  // A repeated field holds at most 2^31 entries, so `2 * n` above cannot
  // matter unless n is already far beyond it; compare without overflow.
  if (n > (int64_t{1} << 40) || have != want) {
    return InvalidModel("tensor '", proto.name(), "' (", description, ") has ", have, " entries in ", field_name,
                        ", expected ", want);
  }
  return Status::Ok();
}

// Fills `t` from the typed field of its type, whose count
// CheckTypedFieldCount has checked before `t` was allocated.
Status FillFromTypedFields(Tensor& t, const onnx::TensorProto& proto) {
  const std::string& name = proto.name();
  const DataType dt = t.dtype();
  const int64_t n = t.size();
  switch (dt) {
    case DataType::kFloat:
      std::copy(proto.float_data().begin(), proto.float_data().end(), t.mutable_data<float>());
      return Status::Ok();
    case DataType::kComplex64: {
      auto* out = t.mutable_data<std::complex<float>>();
      for (int64_t i = 0; i < n; ++i) out[i] = {proto.float_data(2 * i), proto.float_data(2 * i + 1)};
      return Status::Ok();
    }
    case DataType::kDouble:
      std::copy(proto.double_data().begin(), proto.double_data().end(), t.mutable_data<double>());
      return Status::Ok();
    case DataType::kComplex128: {
      auto* out = t.mutable_data<std::complex<double>>();
      for (int64_t i = 0; i < n; ++i) out[i] = {proto.double_data(2 * i), proto.double_data(2 * i + 1)};
      return Status::Ok();
    }
    case DataType::kInt64:
      std::copy(proto.int64_data().begin(), proto.int64_data().end(), t.mutable_data<int64_t>());
      return Status::Ok();
    case DataType::kUint32:
    case DataType::kUint64:
      for (int64_t i = 0; i < n; ++i) t.SetUint64(i, proto.uint64_data(static_cast<int>(i)));
      return Status::Ok();
    case DataType::kString:
      for (int64_t i = 0; i < n; ++i) t.mutable_strings()[i] = proto.string_data(static_cast<int>(i));
      return Status::Ok();
    default:
      break;
  }
  // Everything else travels in int32_data: one element per entry, except the
  // 4-bit and 2-bit types, packed two or four to an entry.
  const int bits = PackedBits(dt);
  const int per_entry = (bits == 4 || bits == 2) ? 8 / bits : 1;
  const int64_t entries = (n + per_entry - 1) / per_entry;
  if (per_entry > 1) {
    std::string packed;
    packed.reserve(static_cast<size_t>(entries));
    for (int64_t i = 0; i < entries; ++i) packed.push_back(static_cast<char>(proto.int32_data(static_cast<int>(i)) & 0xFF));
    return FillFromRawBytes(t, reinterpret_cast<const uint8_t*>(packed.data()), packed.size(), name);
  }
  for (int64_t i = 0; i < n; ++i) {
    const int32_t v = proto.int32_data(static_cast<int>(i));
    if (dt == DataType::kFloat16 || dt == DataType::kBfloat16) {
      t.mutable_data<uint16_t>()[i] = static_cast<uint16_t>(v);
    } else if (IsSmallFloat(dt)) {
      t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(v);
    } else {
      t.SetInt64(i, v);
    }
  }
  return Status::Ok();
}

struct ExternalRange {
  std::string path;
  int64_t offset = 0;
  int64_t length = 0;
};

// An external data offset or length: decimal digits only (onnx.proto
// StringStringEntryProto holds them as text), no sign, no space, at most
// what int64 holds.
StatusOr<int64_t> ParseExternalNumber(const std::string& text) {
  if (text.empty() || text.size() > 19 || text.find_first_not_of("0123456789") != std::string::npos) {
    return InvalidModel("is not a non-negative decimal integer");
  }
  int64_t value = 0;
  for (const char c : text) {
    const std::optional<int64_t> next = CheckedMul(value, 10);
    const std::optional<int64_t> sum = next ? CheckedAdd(*next, c - '0') : std::nullopt;
    if (!sum) return InvalidModel("overflows a 64-bit size");
    value = *sum;
  }
  return value;
}

// Where a tensor's external data lies, checked: location inside the model's
// folder, offset and length numbers, the range inside the file.
StatusOr<ExternalRange> LocateExternalData(const onnx::TensorProto& proto, const ExternalDataPolicy& policy,
                                           int64_t expected_bytes) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") {
      location = entry.value();
    } else if (entry.key() == "offset" || entry.key() == "length") {
      StatusOr<int64_t> v = ParseExternalNumber(entry.value());
      if (!v.ok()) {
        return InvalidModel("tensor '", proto.name(), "': external data ", entry.key(), " '", entry.value(), "' ",
                            v.status().message());
      }
      (entry.key() == "offset" ? offset : length) = *v;
    }
  }
  if (location.empty()) return InvalidModel("tensor '", proto.name(), "': external data has no location");
  if (policy.base_dir.empty()) {
    return InvalidModel("tensor '", proto.name(), "': external data '", location,
                        "' but the model was not loaded from a folder");
  }
  StatusOr<std::string> path = ResolveExternalDataPath(policy.base_dir, location);
  if (!path.ok()) return path.status().WithContext("tensor '" + proto.name() + "'");
  std::error_code ec;
  const auto file_size = static_cast<int64_t>(fs::file_size(*path, ec));
  if (ec) return IoError("tensor '", proto.name(), "': cannot stat external data '", location, "': ", ec.message());
  if (length < 0) length = expected_bytes;
  if (length != expected_bytes) {
    return InvalidModel("tensor '", proto.name(), "': external data length ", length, " but the tensor needs ",
                        expected_bytes, " bytes");
  }
  StatusOr<int64_t> end = CheckedSum(offset, length, "external data offset + length");
  if (!end.ok() || *end > file_size) {
    return InvalidModel("tensor '", proto.name(), "': external data range at offset ", offset, ", ", length,
                        " bytes long, lies beyond the end of '", location, "' (", file_size, " bytes)");
  }
  return ExternalRange{*path, offset, length};
}

StatusOr<std::string> ReadExternalData(const onnx::TensorProto& proto, const ExternalDataPolicy& policy,
                                       int64_t expected_bytes) {
  PARITY_ASSIGN_OR_RETURN(ExternalRange range, LocateExternalData(proto, policy, expected_bytes));
  std::ifstream in(range.path, std::ios::binary);
  if (!in) return IoError("tensor '", proto.name(), "': cannot open external data '", range.path, "'");
  std::string bytes(static_cast<size_t>(range.length), '\0');
  in.seekg(range.offset);
  in.read(bytes.data(), range.length);
  if (in.gcount() != range.length) return IoError("tensor '", proto.name(), "': short read from '", range.path, "'");
  return bytes;
}

}  // namespace

StatusOr<std::string> ResolveExternalDataPath(const std::string& base_dir, const std::string& location) {
  const fs::path loc(location);
  if (location.empty()) return InvalidModel("external data location is empty");
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) {
    return InvalidModel("external data location '", location, "' is an absolute path; only paths inside the model's folder are allowed");
  }
  for (const auto& part : loc) {
    if (part == "..") {
      return InvalidModel("external data location '", location, "' contains '..'; only paths inside the model's folder are allowed");
    }
  }
  std::error_code ec;
  const fs::path base = fs::canonical(base_dir, ec);
  if (ec) return IoError("model folder '", base_dir, "': ", ec.message());
  const fs::path resolved = fs::canonical(base / loc, ec);
  if (ec) return NotFound("external data file '", location, "' not found in '", base_dir, "'");
  // A symbolic link may lead anywhere: the canonical path must stay inside.
  auto rel = resolved.lexically_relative(base);
  if (rel.empty() || *rel.begin() == "..") {
    return InvalidModel("external data location '", location, "' resolves to '", resolved.string(),
                        "', outside the model's folder");
  }
  if (!fs::is_regular_file(resolved, ec)) {
    return InvalidModel("external data location '", location, "' is not a regular file");
  }
  return resolved.string();
}

Status CheckExternalData(const onnx::TensorProto& proto, const ExternalDataPolicy& policy) {
  if (!IsKnownDataType(proto.data_type())) return InvalidModel("tensor '", proto.name(), "' has unknown data_type");
  PARITY_ASSIGN_OR_RETURN(int64_t count, ElementCount(Shape(proto.dims().begin(), proto.dims().end())));
  PARITY_ASSIGN_OR_RETURN(int64_t want, PackedByteCount(count, PackedBits(static_cast<DataType>(proto.data_type())),
                                                        "tensor '" + proto.name() + "' data size"));
  StatusOr<ExternalRange> range = LocateExternalData(proto, policy, want);
  return range.status();
}

StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, const ExternalDataPolicy& policy) {
  const int32_t raw_type = proto.data_type();
  const std::string& name = proto.name();
  if (!IsKnownDataType(raw_type)) return InvalidModel("tensor '", name, "' has unknown data_type ", raw_type);
  if (proto.has_segment()) return Unimplemented("tensor '", name, "' uses segments, which are not supported");
  const DataType dtype = static_cast<DataType>(raw_type);
  Shape shape(proto.dims().begin(), proto.dims().end());
  // Made only for an error: a model's inputs are parsed at every run.
  const auto description = [&] { return StrCat(DataTypeName(dtype), ShapeToString(shape)); };
  // The data the proto holds must match its shape before the tensor is
  // allocated: a few bytes declaring 2^31 elements are an error, not an
  // allocation of their size.
  StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return count.status().WithContext("tensor '" + name + "'");
  PARITY_ASSIGN_OR_RETURN(int64_t want, PackedByteCount(*count, PackedBits(dtype), "tensor '" + name + "' data size"));
  const bool external = proto.data_location() == onnx::TensorProto::EXTERNAL;
  std::string external_bytes;
  if (external) {
    if (dtype == DataType::kString) return InvalidModel("tensor '", name, "': string tensors cannot be external");
    PARITY_ASSIGN_OR_RETURN(external_bytes, ReadExternalData(proto, policy, want));
  } else if (proto.has_raw_data()) {
    if (dtype == DataType::kString) return InvalidModel("tensor '", name, "': string tensors cannot use raw_data");
    if (static_cast<int64_t>(proto.raw_data().size()) != want) {
      return InvalidModel("tensor '", name, "' (", description(), ") has ", proto.raw_data().size(),
                          " bytes of data, expected ", want);
    }
  } else {
    PARITY_RETURN_IF_ERROR(CheckTypedFieldCount(proto, dtype, *count, description()));
  }
  StatusOr<Tensor> created = Tensor::Create(dtype, std::move(shape));
  if (!created.ok()) return created.status().WithContext("tensor '" + name + "'");
  Tensor t = std::move(created).value();
  if (external) {
    PARITY_RETURN_IF_ERROR(FillFromRawBytes(t, reinterpret_cast<const uint8_t*>(external_bytes.data()),
                                            external_bytes.size(), name));
    return t;
  }
  if (proto.has_raw_data()) {
    const std::string& raw = proto.raw_data();
    PARITY_RETURN_IF_ERROR(FillFromRawBytes(t, reinterpret_cast<const uint8_t*>(raw.data()), raw.size(), name));
    return t;
  }
  PARITY_RETURN_IF_ERROR(FillFromTypedFields(t, proto));
  return t;
}

std::optional<Tensor> TensorFromPlainWire(const void* data, size_t size) {
  using google::protobuf::internal::WireFormatLite;
  if (size > static_cast<size_t>(INT32_MAX)) return std::nullopt;
  const auto* base = static_cast<const uint8_t*>(data);
  google::protobuf::io::CodedInputStream in(base, static_cast<int>(size));
  Shape shape;
  std::optional<int32_t> data_type;
  const uint8_t* raw = nullptr;
  uint32_t raw_size = 0;
  while (in.CurrentPosition() < static_cast<int>(size)) {
    const uint32_t tag = in.ReadTag();
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const WireFormatLite::WireType wire = WireFormatLite::GetTagWireType(tag);
    uint64_t value = 0;
    uint32_t length = 0;
    if (field == onnx::TensorProto::kDimsFieldNumber && wire == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(&value)) return std::nullopt;
      shape.push_back(static_cast<int64_t>(value));
    } else if (field == onnx::TensorProto::kDimsFieldNumber && wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!in.ReadVarint32(&length) || length > size - static_cast<size_t>(in.CurrentPosition())) return std::nullopt;
      const auto limit = in.PushLimit(static_cast<int>(length));  // packed dims
      while (in.BytesUntilLimit() > 0) {
        if (!in.ReadVarint64(&value)) return std::nullopt;
        shape.push_back(static_cast<int64_t>(value));
      }
      in.PopLimit(limit);
    } else if (field == onnx::TensorProto::kDataTypeFieldNumber && wire == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint64(&value) || value > static_cast<uint64_t>(INT32_MAX)) return std::nullopt;
      data_type = static_cast<int32_t>(value);
    } else if ((field == onnx::TensorProto::kNameFieldNumber || field == onnx::TensorProto::kRawDataFieldNumber) &&
               wire == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      if (!in.ReadVarint32(&length)) return std::nullopt;
      const uint8_t* at = base + in.CurrentPosition();
      if (!in.Skip(static_cast<int>(length))) return std::nullopt;
      if (field == onnx::TensorProto::kRawDataFieldNumber) {
        raw = at;
        raw_size = length;
      }
    } else {
      return std::nullopt;  // any other field, or a malformed tag: the full reader's
    }
  }
  // What TensorFromProto would refuse or read otherwise is left to it.
  if (!data_type || !raw || !IsKnownDataType(*data_type)) return std::nullopt;
  const DataType dtype = static_cast<DataType>(*data_type);
  if (dtype == DataType::kString) return std::nullopt;
  for (int64_t d : shape) {
    if (d < 0) return std::nullopt;
  }
  const StatusOr<int64_t> count = ElementCount(shape);
  if (!count.ok()) return std::nullopt;
  const StatusOr<int64_t> want = PackedByteCount(*count, PackedBits(dtype), "tensor data size");
  if (!want.ok() || *want != static_cast<int64_t>(raw_size)) return std::nullopt;
  StatusOr<Tensor> created = Tensor::Create(dtype, std::move(shape));
  if (!created.ok()) return std::nullopt;
  Tensor t = std::move(created).value();
  if (!FillFromRawBytes(t, raw, raw_size, "").ok()) return std::nullopt;
  return t;
}

void TensorToProto(const Tensor& tensor, onnx::TensorProto* proto) {
  proto->set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto->clear_dims();
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  if (tensor.dtype() == DataType::kString) {
    for (const auto& s : tensor.strings()) proto->add_string_data(s);
    return;
  }
  const int bits = PackedBits(tensor.dtype());
  if (bits < 8) {
    PackBits(tensor.raw_bytes(), bits, tensor.size(), proto->mutable_raw_data());
  } else {
    proto->set_raw_data(reinterpret_cast<const char*>(tensor.raw_bytes()), tensor.byte_size());
  }
}

StatusOr<Value> ValueFromSequenceProto(const onnx::SequenceProto& proto) {
  std::vector<Value> elements;
  switch (proto.elem_type()) {
    case onnx::SequenceProto::TENSOR:
      for (const auto& t : proto.tensor_values()) {
        PARITY_ASSIGN_OR_RETURN(Tensor tensor, TensorFromProto(t));
        elements.push_back(Value::FromTensor(std::move(tensor)));
      }
      break;
    case onnx::SequenceProto::SEQUENCE:
      for (const auto& s : proto.sequence_values()) {
        PARITY_ASSIGN_OR_RETURN(Value v, ValueFromSequenceProto(s));
        elements.push_back(std::move(v));
      }
      break;
    case onnx::SequenceProto::OPTIONAL:
      for (const auto& o : proto.optional_values()) {
        PARITY_ASSIGN_OR_RETURN(Value v, ValueFromOptionalProto(o));
        elements.push_back(std::move(v));
      }
      break;
    default:
      return Unimplemented("sequence '", proto.name(), "' of element kind ", proto.elem_type(), " is not supported");
  }
  return Value::FromSequence(std::move(elements));
}

StatusOr<Value> ValueFromOptionalProto(const onnx::OptionalProto& proto) {
  switch (proto.elem_type()) {
    case onnx::OptionalProto::UNDEFINED: return Value::NoneOptional();
    case onnx::OptionalProto::TENSOR: {
      if (!proto.has_tensor_value()) return Value::NoneOptional();
      PARITY_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(proto.tensor_value()));
      return Value::SomeOptional(Value::FromTensor(std::move(t)));
    }
    case onnx::OptionalProto::SEQUENCE: {
      if (!proto.has_sequence_value()) return Value::NoneOptional();
      PARITY_ASSIGN_OR_RETURN(Value v, ValueFromSequenceProto(proto.sequence_value()));
      return Value::SomeOptional(std::move(v));
    }
    default:
      return Unimplemented("optional '", proto.name(), "' of element kind ", proto.elem_type(), " is not supported");
  }
}

void ValueToSequenceProto(const Value& value, onnx::SequenceProto* proto) {
  for (const Value& e : value.sequence()) {
    if (e.is_tensor()) {
      proto->set_elem_type(onnx::SequenceProto::TENSOR);
      TensorToProto(e.tensor(), proto->add_tensor_values());
    } else if (e.is_sequence()) {
      proto->set_elem_type(onnx::SequenceProto::SEQUENCE);
      ValueToSequenceProto(e, proto->add_sequence_values());
    } else {
      proto->set_elem_type(onnx::SequenceProto::OPTIONAL);
      ValueToOptionalProto(e, proto->add_optional_values());
    }
  }
  if (value.sequence().empty()) proto->set_elem_type(onnx::SequenceProto::TENSOR);
}

void ValueToOptionalProto(const Value& value, onnx::OptionalProto* proto) {
  if (!value.has_element()) {
    proto->set_elem_type(onnx::OptionalProto::UNDEFINED);
    return;
  }
  const Value& e = value.element();
  if (e.is_tensor()) {
    proto->set_elem_type(onnx::OptionalProto::TENSOR);
    TensorToProto(e.tensor(), proto->mutable_tensor_value());
  } else if (e.is_sequence()) {
    proto->set_elem_type(onnx::OptionalProto::SEQUENCE);
    ValueToSequenceProto(e, proto->mutable_sequence_value());
  }
}

StatusOr<Value> ReadValueFile(const std::string& path, const onnx::TypeProto& declared_type) {
  PARITY_ASSIGN_OR_RETURN(std::string bytes, ReadProtobufFile(path));
  if (declared_type.has_sequence_type()) {
    onnx::SequenceProto proto;
    if (!proto.ParseFromString(bytes)) return InvalidModel("'", path, "' is not a valid SequenceProto");
    StatusOr<Value> v = ValueFromSequenceProto(proto);
    return v.ok() ? v : v.status().WithContext("'" + path + "'");
  }
  if (declared_type.has_optional_type()) {
    onnx::OptionalProto proto;
    if (!proto.ParseFromString(bytes)) return InvalidModel("'", path, "' is not a valid OptionalProto");
    StatusOr<Value> v = ValueFromOptionalProto(proto);
    return v.ok() ? v : v.status().WithContext("'" + path + "'");
  }
  if (declared_type.has_map_type()) return Unimplemented("'", path, "' holds a map, which is not supported");
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return InvalidModel("'", path, "' is not a valid TensorProto");
  // The file's bytes go before the tensor is made: a large value is then
  // held twice at most (proto and tensor), not three times.
  std::string().swap(bytes);
  StatusOr<Tensor> t = TensorFromProto(proto);
  if (!t.ok()) return t.status().WithContext("'" + path + "'");
  return Value::FromTensor(std::move(t).value());
}

bool SerializeValue(const Value& value, const std::string& name, google::protobuf::io::ZeroCopyOutputStream* out) {
  if (value.is_sequence()) {
    onnx::SequenceProto proto;
    proto.set_name(name);
    ValueToSequenceProto(value, &proto);
    return proto.SerializeToZeroCopyStream(out);
  }
  if (value.is_optional()) {
    onnx::OptionalProto proto;
    proto.set_name(name);
    ValueToOptionalProto(value, &proto);
    return proto.SerializeToZeroCopyStream(out);
  }
  const Tensor& tensor = value.tensor();
  onnx::TensorProto proto;
  proto.set_name(name);
  if (tensor.dtype() == DataType::kString || PackedBits(tensor.dtype()) < 8) {
    TensorToProto(tensor, &proto);
    return proto.SerializeToZeroCopyStream(out);
  }
  // TensorToProto would copy the tensor's bytes into raw_data (field 9),
  // which protobuf writes after dims (1), data_type (2) and name (8), the
  // only other fields set: the message without it, then the field written
  // here from the tensor's own buffer, are the same bytes without the copy
  // (tensor_io_test.cc and output_digest_test.cc compare them).
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  google::protobuf::io::CodedOutputStream coded(out);
  if (!proto.SerializeToCodedStream(&coded)) return false;
  coded.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
      onnx::TensorProto::kRawDataFieldNumber, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
  coded.WriteVarint64(tensor.byte_size());
  const uint8_t* bytes = tensor.raw_bytes();
  size_t left = tensor.byte_size();
  while (left > 0) {  // WriteRaw takes an int
    const int chunk = static_cast<int>(std::min<size_t>(left, size_t{1} << 30));
    coded.WriteRaw(bytes, chunk);
    bytes += chunk;
    left -= static_cast<size_t>(chunk);
  }
  return !coded.HadError();
}

Status WriteValueFile(const std::string& path, const Value& value, const std::string& name) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) return IoError("cannot write '", path, "'");
  bool written = false;
  {
    google::protobuf::io::OstreamOutputStream stream(&out);
    written = SerializeValue(value, name, &stream);
  }  // the stream flushes its buffer into `out` here
  if (!written || !out) return IoError("short write to '", path, "'");
  return Status::Ok();
}

}  // namespace parity
