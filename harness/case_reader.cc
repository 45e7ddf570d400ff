// Case discovery and test data reading.
#include "harness/case_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "reference/model/tensor_io.h"

namespace parity {
namespace fs = std::filesystem;

StatusOr<std::vector<CaseInfo>> DiscoverCases(const std::vector<std::string>& roots) {
  std::vector<CaseInfo> cases;
  for (const auto& root : roots) {
    std::error_code ec;
    if (!fs::exists(root, ec)) return NotFound("cases folder '", root, "' does not exist");
    auto add = [&](const fs::path& found) {
      // Absolute and normal, without a trailing separator, so that a case
      // has one name however its root was spelled (resume and merge match
      // results by it).
      fs::path dir = fs::absolute(found).lexically_normal();
      if (dir.filename().empty()) dir = dir.parent_path();
      CaseInfo info;
      info.dir = dir.string();
      info.name = dir.filename().string();
      info.suite = dir.parent_path().filename().string();
      cases.push_back(std::move(info));
    };
    if (fs::is_regular_file(fs::path(root) / "model.onnx", ec)) {
      add(fs::path(root));
      continue;
    }
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (ec) return IoError("walking '", root, "': ", ec.message());
      if (it->is_directory(ec) && fs::is_regular_file(it->path() / "model.onnx", ec)) {
        add(it->path());
        it.disable_recursion_pending();
      }
    }
  }
  std::sort(cases.begin(), cases.end(), [](const CaseInfo& a, const CaseInfo& b) { return a.dir < b.dir; });
  return cases;
}

Status ReadCaseMeta(CaseInfo& info) {
  const fs::path path = fs::path(info.dir) / "case.json";
  std::error_code ec;
  if (!fs::exists(path, ec)) return Status::Ok();
  std::ifstream in(path);
  try {
    info.meta = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path.string(), ": not valid JSON: ", e.what());
  }
  if (!info.meta.is_object()) return InvalidArgument(path.string(), ": must hold a JSON object");
  return Status::Ok();
}

StatusOr<std::vector<DataSet>> ReadDataSets(const CaseInfo& info, const onnx::ModelProto& model, bool read_inputs) {
  std::vector<fs::path> dirs;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(info.dir, ec)) {
    if (entry.is_directory() && entry.path().filename().string().rfind("test_data_set_", 0) == 0) {
      dirs.push_back(entry.path());
    }
  }
  if (ec) return IoError("reading '", info.dir, "': ", ec.message());
  std::sort(dirs.begin(), dirs.end());
  const auto& graph = model.graph();
  std::vector<DataSet> sets;
  for (const auto& dir : dirs) {
    DataSet set;
    set.dir = dir.string();
    for (int k = 0; read_inputs; ++k) {
      const fs::path file = dir / ("input_" + std::to_string(k) + ".pb");
      if (!fs::exists(file, ec)) break;
      if (k >= graph.input_size()) {
        return InvalidArgument(file.string(), ": the model has only ", graph.input_size(), " inputs");
      }
      StatusOr<Value> v = ReadValueFile(file.string(), graph.input(k).type());
      if (!v.ok()) return v.status();
      set.inputs.push_back(std::move(v).value());
    }
    for (int k = 0;; ++k) {
      const fs::path file = dir / ("output_" + std::to_string(k) + ".pb");
      if (!fs::exists(file, ec)) break;
      if (k >= graph.output_size()) {
        return InvalidArgument(file.string(), ": the model has only ", graph.output_size(), " outputs");
      }
      StatusOr<Value> v = ReadValueFile(file.string(), graph.output(k).type());
      if (!v.ok()) return v.status();
      set.outputs.push_back(std::move(v).value());
    }
    sets.push_back(std::move(set));
  }
  return sets;
}

std::string CaseOperator(const CaseInfo& info, const onnx::ModelProto& model) {
  if (info.meta.contains("operator") && info.meta["operator"].is_string()) return info.meta["operator"];
  const auto& nodes = model.graph().node();
  if (nodes.size() == 1) return nodes[0].op_type();
  // Expanded function cases and small composite models: the most frequent op
  // that is not plumbing (Constant, Cast, Shape, ...).
  static const char* kPlumbing[] = {"Constant", "Cast", "CastLike", "Shape", "Reshape", "Identity",
                                    "Unsqueeze", "Squeeze", "Concat", "Gather", "Slice", "Size"};
  std::map<std::string, int> counts;
  for (const auto& n : nodes) {
    if (std::find(std::begin(kPlumbing), std::end(kPlumbing), n.op_type()) == std::end(kPlumbing)) {
      ++counts[n.op_type()];
    }
  }
  std::string best = nodes.empty() ? "" : nodes[0].op_type();
  int best_count = 0;
  for (const auto& [op, c] : counts) {
    if (c > best_count) best = op, best_count = c;
  }
  return best;
}

}  // namespace parity
