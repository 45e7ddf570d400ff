// Feeds test-data files (input_K.pb / output_K.pb) to ReadValueFile, the one
// reader of a case's TensorProto, SequenceProto and OptionalProto values: a
// corpus from elsewhere (ONNX's node tests, a vendor's cases) is read through
// it, so a file with a lying shape, a wrong data field or a nested sequence
// must end in a status.
//
// Input: one byte choosing the declared type (modulo 3: tensor, sequence,
// optional; the graph input's type decides this in a real case), then the
// file's bytes.
//
// Checked beyond "no crash": a value that was read is written back with
// WriteValueFile and reads again, as the same kind of value.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "reference/model/tensor_io.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::InitializeTarget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  onnx::TypeProto declared;
  switch (data[0] % 3) {
    case 0: declared.mutable_tensor_type(); break;
    case 1: declared.mutable_sequence_type(); break;
    default: declared.mutable_optional_type(); break;
  }
  const std::string path =
      parity::fuzz::WriteScratchFile("value.pb", std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1));
  parity::StatusOr<parity::Value> value = parity::ReadValueFile(path, declared);
  if (!value.ok()) return 0;

  const std::string again = parity::fuzz::ScratchDir() + "/again.pb";
  parity::Status written = parity::WriteValueFile(again, *value, "x");
  if (!written.ok()) {
    std::fprintf(stderr, "tensor_fuzzer: a value that was read cannot be written: %s\n", written.ToString().c_str());
    std::abort();
  }
  parity::StatusOr<parity::Value> reread = parity::ReadValueFile(again, declared);
  if (!reread.ok() || reread->kind() != value->kind()) {
    std::fprintf(stderr, "tensor_fuzzer: a value written by WriteValueFile does not read back: %s\n",
                 reread.ok() ? "another kind of value" : reread.status().ToString().c_str());
    std::abort();
  }
  return 0;
}
