// parity_embed_functions: the build step that parses every function body of
// spec/functions/ and writes them into a C++ source (embedded_functions.h).
//
//   parity_embed_functions OUT.cc FILE.onnxtxt...
//
// A file that does not parse, or a function defined twice, fails the build
// with "FILE:LINE:COLUMN: message" (as a compiler reports) and writes nothing.
// The texts become char arrays, not string literals, so that no compiler's
// limit on the length of a literal applies.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "reference/core/status.h"
#include "reference/model/text_syntax.h"

namespace {

namespace fs = std::filesystem;

struct FunctionFile {
  std::string path;
  std::string name;
  std::string text;
};

parity::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return parity::IoError("cannot read ", path);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return parity::IoError("cannot read ", path);
  return text.str();
}

// Parses every file and checks that no (domain, name, overload) comes twice;
// the first problem, as "FILE:LINE:COLUMN: message" or "FILE: message".
parity::Status CheckFiles(const std::vector<FunctionFile>& files) {
  std::map<std::tuple<std::string, std::string, std::string>, std::string> defined_in;
  for (const FunctionFile& file : files) {
    parity::StatusOr<std::vector<onnx::FunctionProto>> parsed = parity::ParseFunctionsText(file.text);
    // The parser's messages start "LINE:COLUMN:", so this reads "FILE:LINE:COLUMN: ...".
    if (!parsed.ok()) return parity::InvalidArgument(file.path, ":", parsed.status().message());
    if (parsed->empty()) return parity::InvalidArgument(file.path, ": defines no function");
    for (const onnx::FunctionProto& f : *parsed) {
      // The evaluator's key: ai.onnx and the empty domain are one domain.
      const std::string domain = f.domain() == "ai.onnx" ? "" : f.domain();
      auto [it, added] = defined_in.emplace(std::make_tuple(domain, f.name(), f.overload()), file.path);
      if (!added) {
        return parity::InvalidArgument(file.path, ": function ", f.domain(), ".", f.name(),
                                       f.overload().empty() ? "" : ":" + f.overload(), " is also defined in ",
                                       it->second);
      }
    }
  }
  return parity::Status::Ok();
}

// Writes `text` as a char array named `array_name`, one character literal per
// byte and a final NUL, so that an empty text is still a valid array.
void WriteArray(std::ostream& out, const std::string& array_name, const std::string& text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out << "constexpr char " << array_name << "[] = {";
  for (size_t i = 0; i <= text.size(); ++i) {
    const unsigned char byte = i < text.size() ? static_cast<unsigned char>(text[i]) : 0;
    out << (i % 16 == 0 ? "\n    " : " ") << "'\\x" << kHex[byte >> 4] << kHex[byte & 15] << "',";
  }
  out << "\n};\n";
}

std::string GeneratedSource(const std::vector<FunctionFile>& files) {
  std::ostringstream out;
  out << "// The function bodies of spec/functions/, written by parity_embed_functions\n"
         "// (reference/eval/embed_functions_main.cc) at build time; do not edit.\n"
         "#include \"reference/eval/embedded_functions.h\"\n\n"
         "namespace parity {\nnamespace {\n\n";
  for (size_t i = 0; i < files.size(); ++i) {
    out << "// " << files[i].name << "\n";
    WriteArray(out, "kText" + std::to_string(i), files[i].text);
  }
  out << "\nconstexpr EmbeddedFunctionFile kFiles[] = {\n";
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string array = "kText" + std::to_string(i);
    out << "    {\"" << files[i].name << "\", std::string_view(" << array << ", sizeof(" << array << ") - 1)},\n";
  }
  out << "};\n\n}  // namespace\n\n"
         "std::span<const EmbeddedFunctionFile> EmbeddedFunctionFiles() { return kFiles; }\n\n"
         "}  // namespace parity\n";
  return out.str();
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: parity_embed_functions OUT.cc FILE.onnxtxt...\n";
    return 2;
  }
  const std::string out_path = argv[1];
  std::vector<FunctionFile> files;
  for (int i = 2; i < argc; ++i) {
    const std::string path = argv[i];
    const std::string name = fs::path(path).filename().string();
    // The name goes into a string literal of the generated source.
    if (name.find_first_of("\"\\\n") != std::string::npos) {
      std::cerr << path << ": a function file's name may not hold quotes, backslashes or newlines\n";
      return 1;
    }
    parity::StatusOr<std::string> text = ReadFile(path);
    if (!text.ok()) {
      std::cerr << "parity_embed_functions: " << text.status().message() << "\n";
      return 1;
    }
    files.push_back({path, name, std::move(text).value()});
  }
  std::sort(files.begin(), files.end(), [](const FunctionFile& a, const FunctionFile& b) { return a.name < b.name; });
  for (size_t i = 1; i < files.size(); ++i) {
    if (files[i].name == files[i - 1].name) {
      std::cerr << files[i].path << ": a second file named " << files[i].name << "\n";
      return 1;
    }
  }
  if (parity::Status checked = CheckFiles(files); !checked.ok()) {
    std::cerr << checked.message() << "\n";
    return 1;
  }
  const std::string source = GeneratedSource(files);
  // An unchanged source is left as it is, so that the build (which restats
  // the outputs of custom commands) recompiles and relinks nothing.
  if (parity::StatusOr<std::string> old = ReadFile(out_path); old.ok() && *old == source) return 0;
  // Written beside and renamed, so that a failed write leaves no half source.
  const std::string temp_path = out_path + ".tmp";
  {
    std::ofstream out(temp_path, std::ios::binary | std::ios::trunc);
    out << source;
    if (!out.flush()) {
      std::cerr << "parity_embed_functions: cannot write " << temp_path << "\n";
      return 1;
    }
  }
  std::error_code ec;
  fs::rename(temp_path, out_path, ec);
  if (ec) {
    std::cerr << "parity_embed_functions: cannot write " << out_path << ": " << ec.message() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return Main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "parity_embed_functions: internal error: " << e.what() << "\n";
    return 1;
  }
}
