// Output digests: SHA-256 (OpenSSL) over the value files' bytes.
#include "harness/results/output_digest.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/wire_format_lite.h>
#include <openssl/evp.h>

#include <algorithm>
#include <memory>

#include "reference/model/tensor_io.h"

namespace parity {
namespace {

std::string Hex(const unsigned char* digest, unsigned int size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
}

// Serialized bytes fed straight into SHA-256, so that a large output is
// never held a second time as a string (a 16 MiB attention output was).
class Sha256Sink : public google::protobuf::io::CopyingOutputStream {
 public:
  Sha256Sink() : context_(EVP_MD_CTX_new()) {
    ok_ = context_ && EVP_DigestInit_ex(context_.get(), EVP_sha256(), nullptr) == 1;
  }
  bool Write(const void* buffer, int size) override {
    ok_ = ok_ && EVP_DigestUpdate(context_.get(), buffer, static_cast<size_t>(size)) == 1;
    return ok_;
  }
  StatusOr<std::string> Finish() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    if (!ok_ || EVP_DigestFinal_ex(context_.get(), digest, &size) != 1) return Internal("SHA-256 from OpenSSL failed");
    return Hex(digest, size);
  }

 private:
  struct Free {
    void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
  };
  std::unique_ptr<EVP_MD_CTX, Free> context_;
  bool ok_ = false;
};

StatusOr<std::string> DigestOf(const google::protobuf::MessageLite& message) {
  Sha256Sink sink;
  {
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&sink);
    if (!message.SerializeToZeroCopyStream(&stream)) return Internal("could not serialize an output for its digest");
  }  // the adaptor flushes its buffer into the sink here
  return sink.Finish();
}

StatusOr<std::string> ValueDigest(const Value& value, const std::string& name) {
  if (value.is_sequence()) {
    onnx::SequenceProto proto;
    proto.set_name(name);
    ValueToSequenceProto(value, &proto);
    return DigestOf(proto);
  }
  if (value.is_optional()) {
    onnx::OptionalProto proto;
    proto.set_name(name);
    ValueToOptionalProto(value, &proto);
    return DigestOf(proto);
  }
  const Tensor& tensor = value.tensor();
  onnx::TensorProto proto;
  proto.set_name(name);
  if (tensor.dtype() == DataType::kString || PackedBits(tensor.dtype()) < 8) {
    TensorToProto(tensor, &proto);
    return DigestOf(proto);
  }
  // TensorToProto would copy the tensor's bytes into raw_data (field 9),
  // which protobuf writes after dims (1), data_type (2) and name (8), the
  // only other fields set: the message without it, then the field written
  // here from the tensor's own buffer, are the same bytes without the copy.
  // output_digest_test.cc checks them against the files.
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  Sha256Sink sink;
  {
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&sink);
    google::protobuf::io::CodedOutputStream out(&stream);
    if (!proto.SerializeToCodedStream(&out)) return Internal("could not serialize an output for its digest");
    out.WriteTag(google::protobuf::internal::WireFormatLite::MakeTag(
        onnx::TensorProto::kRawDataFieldNumber, google::protobuf::internal::WireFormatLite::WIRETYPE_LENGTH_DELIMITED));
    out.WriteVarint64(tensor.byte_size());
    const uint8_t* bytes = tensor.raw_bytes();
    size_t left = tensor.byte_size();
    while (left > 0) {  // WriteRaw takes an int
      const int chunk = static_cast<int>(std::min<size_t>(left, size_t{1} << 30));
      out.WriteRaw(bytes, chunk);
      bytes += chunk;
      left -= static_cast<size_t>(chunk);
    }
  }
  return sink.Finish();
}

}  // namespace

StatusOr<std::string> Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    return Internal("SHA-256 from OpenSSL failed");
  }
  return Hex(digest, size);
}

// The same three encodings as WriteValueFile; output_digest_test.cc checks
// that the bytes stay equal to the file's.
std::string SerializedValue(const Value& value, const std::string& name) {
  if (value.is_sequence()) {
    onnx::SequenceProto proto;
    proto.set_name(name);
    ValueToSequenceProto(value, &proto);
    return proto.SerializeAsString();
  }
  if (value.is_optional()) {
    onnx::OptionalProto proto;
    proto.set_name(name);
    ValueToOptionalProto(value, &proto);
    return proto.SerializeAsString();
  }
  onnx::TensorProto proto;
  proto.set_name(name);
  TensorToProto(value.tensor(), &proto);
  return proto.SerializeAsString();
}

StatusOr<std::vector<std::string>> OutputDigests(const std::vector<Value>& outputs,
                                                 const std::vector<std::string>& names) {
  if (outputs.size() != names.size()) {
    return InvalidArgument("output digests: ", outputs.size(), " outputs but ", names.size(), " names");
  }
  std::vector<std::string> digests;
  for (size_t i = 0; i < outputs.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(std::string hex, ValueDigest(outputs[i], names[i]));
    digests.push_back(std::move(hex));
  }
  return digests;
}

}  // namespace parity
