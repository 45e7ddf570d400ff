// Function definitions written in ONNX text syntax, and the standard library
// of them: the bodies of spec/functions/ that the build embedded.
#include "reference/eval/function_library.h"

#include "reference/eval/registry.h"
#include "reference/model/text_syntax.h"

namespace parity {

Status FunctionLibrary::Add(onnx::FunctionProto function, const std::string& source) {
  auto key = std::make_tuple(std::string(CanonicalDomain(function.domain())), function.name(), function.overload());
  if (functions_.count(key)) {
    return InvalidModel(source, ": function ", function.domain(), ".", function.name(),
                        function.overload().empty() ? "" : ":" + function.overload(), " is defined twice");
  }
  functions_.emplace(std::move(key), std::move(function));
  return Status::Ok();
}

const onnx::FunctionProto* FunctionLibrary::Find(const std::string& domain, const std::string& name,
                                                 const std::string& overload) const {
  auto it = functions_.find(std::make_tuple(std::string(CanonicalDomain(domain)), name, overload));
  return it == functions_.end() ? nullptr : &it->second;
}

StatusOr<FunctionLibrary> FunctionLibrary::Parse(std::span<const EmbeddedFunctionFile> files) {
  FunctionLibrary library;
  for (const EmbeddedFunctionFile& file : files) {
    const std::string source = "spec/functions/" + std::string(file.name);
    StatusOr<std::vector<onnx::FunctionProto>> parsed = ParseFunctionsText(file.text);
    // The parser's messages start "LINE:COLUMN:".
    if (!parsed.ok()) return Status(parsed.status().code(), source + ":" + parsed.status().message());
    for (auto& f : *parsed) PARITY_RETURN_IF_ERROR(library.Add(std::move(f), source));
  }
  return library;
}

StatusOr<const FunctionLibrary*> FunctionLibrary::Standard() {
  // Parsed once; a failure is kept and returned to every caller.
  static const StatusOr<FunctionLibrary>* library = [] {
    StatusOr<FunctionLibrary> parsed = Parse(EmbeddedFunctionFiles());
    if (!parsed.ok()) {
      return new StatusOr<FunctionLibrary>(
          Internal("the function bodies embedded at build time do not load (the build should have refused them): ",
                   parsed.status().ToString()));
    }
    return new StatusOr<FunctionLibrary>(std::move(parsed));
  }();
  if (!library->ok()) return library->status();
  return &library->value();
}

}  // namespace parity
