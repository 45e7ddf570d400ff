// Classifies OpenVINO's exceptions (ov_errors.h). The ONNX frontend reports
// a model it cannot convert as an OpConversionFailure whose summary lists
// "No conversion rule found for operations: <domain>.<op>, ..." (no
// translator at all) or "Conversion is failed for: ..." (a translator that
// refused the node's attributes or inputs); both are UNSUPPORTED, naming
// those operators.
#include "adapters/openvino/ov_errors.h"

#include <sstream>
#include <vector>

namespace parity::adapters::openvino {
namespace {

bool Contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

// The lines of `text` after `marker` on its line, up to the end of that line.
std::string AfterMarker(const std::string& text, const char* marker) {
  const size_t at = text.find(marker);
  if (at == std::string::npos) return "";
  const size_t begin = at + std::string(marker).size();
  const size_t end = text.find('\n', begin);
  std::string rest = text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.pop_back();
  while (!rest.empty() && rest.front() == ' ') rest.erase(rest.begin());
  return rest;
}

}  // namespace

std::string CleanOvMessage(const std::string& what) {
  std::istringstream lines(what);
  std::string line, out;
  while (std::getline(lines, line)) {
    // Source locations of OpenVINO itself tell a reader of a case nothing.
    if (line.rfind("Exception from src/", 0) == 0 || line.rfind("Exception from ", 0) == 0) continue;
    if (line.rfind("Check '", 0) == 0 && Contains(line, " failed at ")) continue;
    if (Contains(line, "To facilitate the conversion of unsupported operations")) continue;
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string::npos) continue;
    line = line.substr(b);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!out.empty()) out += out.back() == ':' ? " " : "; ";
    out += line;
  }
  if (out.size() > 700) out = out.substr(0, 700) + " ...";
  return out.empty() ? what : out;
}

OvFailure ClassifyOvError(OvStep step, const std::string& what, const std::string& case_name) {
  const std::string cleaned = CleanOvMessage(what);
  const std::string missing = AfterMarker(what, "No conversion rule found for operations:");
  const std::string failed = AfterMarker(what, "Conversion is failed for:");
  if (!missing.empty() || !failed.empty()) {
    std::string message = case_name + ": OpenVINO's ONNX frontend cannot convert ";
    if (!missing.empty()) message += "(no conversion rule) " + missing;
    if (!missing.empty() && !failed.empty()) message += "; ";
    if (!failed.empty()) message += "(conversion failed) " + failed;
    return {PARITY_STATUS_UNSUPPORTED, message + " [" + cleaned + "]"};
  }
  static const char* const kUnsupportedWords[] = {"OpConversionFailure", "Unsupported operation", "not supported",
                                                  "doesn't support", "Unsupported", "unsupported"};
  const char* step_name = step == OvStep::kRead      ? "read_model"
                          : step == OvStep::kCompile ? "compile_model (CPU)"
                          : step == OvStep::kQuery   ? "query_model (CPU)"
                                                     : "infer";
  // At creation, OpenVINO's own "unsupported" is its declaration that it
  // cannot run the model; at inference the model was accepted, so any
  // failure is the backend's.
  if (step != OvStep::kInfer) {
    for (const char* word : kUnsupportedWords) {
      if (Contains(what, word)) {
        return {PARITY_STATUS_UNSUPPORTED, case_name + ": OpenVINO " + step_name + ": " + cleaned};
      }
    }
  }
  if (Contains(what, "std::bad_alloc") || Contains(what, "Failed to allocate")) {
    return {PARITY_STATUS_OUT_OF_MEMORY, case_name + ": OpenVINO " + step_name + ": " + cleaned};
  }
  return {PARITY_STATUS_INTERNAL, case_name + ": OpenVINO " + step_name + " failed: " + cleaned};
}

}  // namespace parity::adapters::openvino
