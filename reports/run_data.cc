// Run folders as the reports label and date them.
#include "reports/run_data.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <map>

namespace parity {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string FileTimeUtc(const fs::path& path) {
  std::error_code ec;
  const auto file_time = fs::last_write_time(path, ec);
  if (ec) return "";
  // GCC 12 has no clock_cast; both clocks tick in real time, so the offset
  // between their "now"s converts one to the other.
  const auto system_time = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      file_time - fs::file_time_type::clock::now() + std::chrono::system_clock::now());
  const std::time_t t = std::chrono::system_clock::to_time_t(system_time);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return text;
}

}  // namespace

bool IsListedFailure(const CaseResult& result) {
  return CountsForGate(result) || result.state == CaseState::kError || result.state == CaseState::kMistrusted;
}

std::string RunData::AdapterVersion() const {
  const json adapter = summary.value("adapter", json());
  if (!adapter.is_object()) return "";
  std::string text = adapter.value("version", "");
  const std::string backend = adapter.value("backend_version", "");
  if (!backend.empty()) text += (text.empty() ? "backend " : " (backend ") + backend + (text.empty() ? "" : ")");
  return text;
}

std::string RunData::DeviceDescription() const {
  const json device_info = summary.value("device", json());
  if (!device_info.is_object()) return "";
  std::string kind = device_info.value("kind", "");
  std::string description = device_info.value("description", "");
  if (kind.empty()) return description;
  return description.empty() ? kind : kind + ", " + description;
}

StatusOr<RunData> LoadRunData(const std::string& dir) {
  RunData data;
  PARITY_ASSIGN_OR_RETURN(static_cast<RunFolder&>(data), LoadRunFolder(dir));
  data.label = data.device.empty() ? data.adapter : data.adapter + "@" + data.device;
  const json finished = data.summary.value("finished", json());
  data.when = finished.is_string() ? finished.get<std::string>() : FileTimeUtc(fs::path(dir) / "results.jsonl");
  return data;
}

void AssignLabels(std::vector<RunData>& runs) {
  std::map<std::string, int> uses;
  for (const RunData& r : runs) ++uses[r.label];
  for (RunData& r : runs) {
    if (uses[r.label] <= 1) continue;
    fs::path folder = fs::path(r.dir).lexically_normal();
    if (folder.filename().empty()) folder = folder.parent_path();  // "runs/a/" names "a"
    r.label += " (" + folder.filename().string() + ")";
  }
  // Folders with the same name under different parents: number them.
  std::map<std::string, int> seen;
  for (RunData& r : runs) {
    if (++seen[r.label] > 1) r.label += " #" + std::to_string(seen[r.label]);
  }
}

}  // namespace parity
