// Feeds ONNX text syntax to the parser of reference/model/text_syntax.h,
// which reads the function bodies of spec/functions/ at build time and any
// model text a user gives; its header promises that no input crashes or
// hangs it (nesting is bounded by kMaxTextNesting).
//
// Input: the text itself, given to each entry point (model, graph, function
// list). A model that parses is also validated, as `parity check` would.
#include <cstdint>
#include <memory>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "reference/model/text_syntax.h"
#include "reference/model/validator.h"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::InitializeTarget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  parity::StatusOr<onnx::ModelProto> model = parity::ParseModelText(text);
  if (model.ok()) {
    parity::LoadedModel loaded{std::make_shared<const onnx::ModelProto>(std::move(model).value()), "fuzz.onnxtxt", ""};
    (void)parity::ValidateModel(loaded);
  }
  (void)parity::ParseGraphText(text);
  (void)parity::ParseFunctionsText(text);
  return 0;
}
