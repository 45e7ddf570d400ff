// Output digests: SHA-256 (OpenSSL) over the value files' bytes.
#include "harness/results/output_digest.h"

#include <openssl/evp.h>

#include "reference/model/tensor_io.h"

namespace parity {

StatusOr<std::string> Sha256Hex(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &size, EVP_sha256(), nullptr) != 1) {
    return Internal("SHA-256 from OpenSSL failed");
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * size);
  for (unsigned int i = 0; i < size; ++i) {
    hex += kDigits[digest[i] >> 4];
    hex += kDigits[digest[i] & 15];
  }
  return hex;
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
    PARITY_ASSIGN_OR_RETURN(std::string hex, Sha256Hex(SerializedValue(outputs[i], names[i])));
    digests.push_back(std::move(hex));
  }
  return digests;
}

}  // namespace parity
