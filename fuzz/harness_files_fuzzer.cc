// Feeds the harness's data files to their readers: case.json
// (harness/case_file.h), expectations files (harness/expectations.h) and the
// tolerance policy (spec/tolerance.json, TolerancePolicy in harness/compare.h).
// All three are written by people and diffed in review, so a typo, a wrong
// type or a deep nesting must give an error naming the key, never a crash.
//
// Input: one byte choosing the reader (modulo 3: case.json, expectations,
// tolerance), then the file's bytes. A policy that parses is asked for the
// tolerance of a few operators and types, and a case.json's tolerance
// override is applied to a policy's tolerance, as a comparison would.
#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "harness/case_file.h"
#include "harness/compare.h"
#include "harness/expectations.h"

namespace {

void CaseJson(std::string_view bytes) {
  const std::string path = parity::fuzz::WriteScratchFile("case.json", bytes);
  parity::StatusOr<parity::CaseFile> file = parity::ReadCaseFile(path);
  if (!file.ok() || !file->tolerance.has_value()) return;
  (void)parity::TolerancePolicy::ApplyOverride(parity::Tolerance{}, *file->tolerance);
}

void ExpectationsFile(std::string_view bytes) {
  const std::string path = parity::fuzz::WriteScratchFile("expectations.json", bytes);
  parity::StatusOr<parity::Expectations> expectations = parity::Expectations::Load(path);
  if (!expectations.ok()) return;
  for (const char* name : {"test_add", "test_attention_4d", "", "*", "test_[a"}) (void)expectations->Find(name);
}

void ToleranceFile(std::string_view bytes) {
  parity::StatusOr<parity::TolerancePolicy> policy = parity::TolerancePolicy::Parse(std::string(bytes));
  if (!policy.ok()) return;
  const parity::ShapeFacts facts{1024, 64};
  for (const char* op : {"Add", "MatMul", "ReduceSum", "Softmax", "Attention", "NoSuchOp", ""}) {
    (void)policy->FamilyOf(op);
    for (parity::DataType type : {parity::DataType::kFloat, parity::DataType::kFloat16, parity::DataType::kBfloat16,
                                  parity::DataType::kDouble, parity::DataType::kFloat8E4M3FN,
                                  parity::DataType::kInt32}) {
      (void)policy->For(op, type, facts);
      (void)policy->For(op, type, facts, "onnxruntime");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::InitializeTarget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 3) {
    case 0: CaseJson(bytes); break;
    case 1: ExpectationsFile(bytes); break;
    default: ToleranceFile(bytes); break;
  }
  return 0;
}
