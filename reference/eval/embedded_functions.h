// The texts of spec/functions/*.onnxtxt, compiled into the binary: the
// build parses each one (embed_functions_main.cc) and writes them into a
// generated source, so that a body that does not parse fails the build.
#pragma once

#include <span>
#include <string_view>

namespace parity {

struct EmbeddedFunctionFile {
  std::string_view name;  // the file's name in spec/functions/, e.g. "swish.onnxtxt"
  std::string_view text;  // its contents, byte for byte
};

// Every file, sorted by name. Defined in the generated embedded_functions.cc.
std::span<const EmbeddedFunctionFile> EmbeddedFunctionFiles();

}  // namespace parity
