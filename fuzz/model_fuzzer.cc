// Feeds model files, with one external data file beside them, to loading,
// validation, external tensor data, variant resolution and the aliasing
// rules: the path every model a user hands to `parity check`, `eval` or a
// worker takes before anything runs, and where a hostile model must end in
// a status, never a crash or an unbounded allocation.
//
// Input: a 4-byte little-endian length N, N bytes of model (ModelProto), and
// the rest as the bytes of `data.bin`, written into this process's scratch
// folder, which is the model's base folder (so a tensor with
// data_location EXTERNAL and location "data.bin" reads it). Without a full
// prefix, the whole input is the model and data.bin is empty.
//
// Checked beyond "no crash": a model that variant resolution accepts
// resolves into one that ValidateModel accepts and that has no entry left
// (spec/variants.md, "Resolution").
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/fuzz_util.h"
#include "reference/aliasing/aliasing.h"
#include "reference/model/loader.h"
#include "reference/model/tensor_io.h"
#include "reference/model/validator.h"
#include "reference/variants/variants.h"

namespace {

using parity::LoadedModel;
using parity::Status;

void Fail(const char* what, const std::vector<Status>& problems) {
  std::fprintf(stderr, "model_fuzzer: %s\n", what);
  for (const Status& p : problems) std::fprintf(stderr, "  %s\n", p.ToString().c_str());
  std::abort();
}

// Reads every initializer, the path that opens external data. The reader
// checks for itself what CheckExternalData checks, so both run on each.
void ReadInitializers(const LoadedModel& model) {
  const parity::ExternalDataPolicy policy{model.base_dir};
  for (const auto& initializer : model.proto->graph().initializer()) {
    (void)parity::CheckExternalData(initializer, policy);
    (void)parity::TensorFromProto(initializer, policy);
  }
}

void Resolve(const LoadedModel& model, std::vector<std::string> targets) {
  parity::ResolveOptions options;
  options.targets = std::move(targets);
  parity::StatusOr<parity::ResolvedModel> resolved = parity::ResolveVariants(model, options);
  if (!resolved.ok()) return;
  if (parity::HasVariants(resolved->model)) Fail("a resolved model still holds variant entries", {});
  LoadedModel after{std::make_shared<const onnx::ModelProto>(resolved->model), model.name, model.base_dir};
  std::vector<Status> problems = parity::ValidateModel(after);
  if (!problems.empty()) Fail("variant resolution made a model that ValidateModel refuses", problems);
  (void)parity::ResolveForReference(model, options);
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  parity::fuzz::InitializeTarget();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view model_bytes = input, external;
  if (input.size() >= 4) {
    const uint32_t n = uint32_t{data[0]} | uint32_t{data[1]} << 8 | uint32_t{data[2]} << 16 | uint32_t{data[3]} << 24;
    if (n <= input.size() - 4) {
      model_bytes = input.substr(4, n);
      external = input.substr(4 + n);
    }
  }
  parity::fuzz::WriteScratchFile("data.bin", external);

  parity::StatusOr<LoadedModel> model = parity::LoadModelBytes(model_bytes, "fuzz.onnx", parity::fuzz::ScratchDir());
  if (!model.ok()) return 0;
  if (!parity::ValidateModel(*model).empty()) return 0;
  ReadInitializers(*model);
  (void)parity::ValidateAliases(*model);
  (void)parity::ValidAliases(*model);
  // Resolution checks the variant rules itself (and takes stale entries).
  const bool variants_valid = parity::ValidateVariants(*model).empty();
  for (const parity::VariantEntry& entry : parity::CollectEntries(*model->proto)) {
    if (variants_valid) (void)parity::RegionHash(*model->proto, entry);
  }
  Resolve(*model, {parity::kReferenceTarget, parity::kPortableTarget});
  Resolve(*model, {"com.example.npu"});
  return 0;
}
