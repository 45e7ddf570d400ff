// Output digests: SHA-256 (OpenSSL) over the value files' bytes.
#include "harness/results/output_digest.h"

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/evp.h>

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

StatusOr<std::string> ValueDigest(const Value& value, const std::string& name) {
  Sha256Sink sink;
  bool written = false;
  {
    google::protobuf::io::CopyingOutputStreamAdaptor stream(&sink);
    written = SerializeValue(value, name, &stream);
  }  // the adaptor flushes its buffer into the sink here
  if (!written) return Internal("could not serialize output '", name, "' for its digest");
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

std::string SerializedValue(const Value& value, const std::string& name) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  SerializeValue(value, name, &stream);
  return bytes;
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
