// Loading function definitions written in ONNX text syntax.
#include "reference/eval/function_library.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

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

StatusOr<FunctionLibrary> FunctionLibrary::LoadDirectory(const std::string& dir) {
  namespace fs = std::filesystem;
  FunctionLibrary library;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return NotFound("function folder '", dir, "' does not exist");
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".onnxtxt") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    StatusOr<std::vector<onnx::FunctionProto>> parsed = ParseFunctionsText(text);
    if (!parsed.ok()) return parsed.status().WithContext(path.string());
    for (auto& f : *parsed) PARITY_RETURN_IF_ERROR(library.Add(std::move(f), path.string()));
  }
  return library;
}

const FunctionLibrary& FunctionLibrary::Standard() {
  static const FunctionLibrary* library = [] {
    const std::string dir = std::string(PARITY_SOURCE_DIR) + "/spec/functions";
    StatusOr<FunctionLibrary> loaded = LoadDirectory(dir);
    if (!loaded.ok()) {
      if (loaded.status().code() != StatusCode::kNotFound) {
        std::cerr << "warning: " << loaded.status().ToString() << "\n";
      }
      return new FunctionLibrary();
    }
    return new FunctionLibrary(std::move(loaded).value());
  }();
  return *library;
}

}  // namespace parity
