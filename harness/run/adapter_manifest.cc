// Adapter lookup: manifests in adapters/<name>/adapter.json, or a library path.
#include "harness/run/adapter_manifest.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

namespace parity {
namespace {

namespace fs = std::filesystem;

std::string ProjectPython() {
  if (const char* p = std::getenv("PARITY_PYTHON"); p && *p) return p;
  const fs::path venv = fs::path(PARITY_SOURCE_DIR) / ".venv/bin/python";
  std::error_code ec;
  return fs::exists(venv, ec) ? venv.string() : "python3";
}

std::string KnownAdapters() {
  std::string names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(PARITY_SOURCE_DIR) / "adapters", ec)) {
    if (fs::exists(entry.path() / "adapter.json", ec)) names += (names.empty() ? "" : ", ") + entry.path().filename().string();
  }
  return names.empty() ? "none" : names;
}

WorkerLaunch NativeLaunch(const std::string& library, const std::string& binary_dir) {
  WorkerLaunch launch;
  launch.argv = {(fs::path(binary_dir) / "parity-worker").string(), library};
  return launch;
}

StatusOr<ResolvedAdapter> FromManifest(const fs::path& dir, const std::string& binary_dir) {
  const fs::path path = dir / "adapter.json";
  nlohmann::json manifest;
  try {
    std::ifstream in(path);
    manifest = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(path.string(), ": not valid JSON: ", e.what());
  }
  if (!manifest.is_object() || !manifest.contains("name") || !manifest["name"].is_string()) {
    return InvalidArgument(path.string(), ": needs a string \"name\"");
  }
  ResolvedAdapter adapter;
  adapter.name = manifest["name"];
  adapter.spec = fs::absolute(dir).lexically_normal().string();
  const bool has_library = manifest.contains("library"), has_command = manifest.contains("command");
  if (has_library == has_command) {
    return InvalidArgument(path.string(), ": needs exactly one of \"library\" (a native adapter) and \"command\"");
  }
  if (has_library) {
    if (!manifest["library"].is_string()) return InvalidArgument(path.string(), ": \"library\" must be a string");
    fs::path library = manifest["library"].get<std::string>();
    std::error_code ec;
    if (library.is_relative()) {
      const fs::path built = fs::path(binary_dir) / "adapters" / library;
      library = fs::exists(built, ec) ? built : dir / library;
    }
    if (!fs::exists(library, ec)) {
      return NotFound(path.string(), ": the library '", manifest["library"].get<std::string>(),
                      "' is neither in ", binary_dir, "/adapters nor beside the manifest; build it first");
    }
    adapter.launch = NativeLaunch(library.string(), binary_dir);
  } else {
    const nlohmann::json& command = manifest["command"];
    if (!command.is_array() || command.empty()) {
      return InvalidArgument(path.string(), ": \"command\" must be a non-empty list of strings");
    }
    for (const auto& word : command) {
      if (!word.is_string()) return InvalidArgument(path.string(), ": \"command\" must hold strings only");
      const std::string w = word;
      adapter.launch.argv.push_back(w == "{python}" ? ProjectPython() : w);
    }
    adapter.launch.cwd = dir.string();
  }
  // Python adapters import the protocol module and its generated messages.
  std::string python_path = (fs::path(binary_dir) / "python").string() + ":" +
                            (fs::path(PARITY_SOURCE_DIR) / "harness/python").string();
  if (const char* existing = std::getenv("PYTHONPATH"); existing && *existing) python_path += std::string(":") + existing;
  adapter.launch.env.emplace_back("PYTHONPATH", python_path);
  adapter.launch.adapter = adapter.name;
  return adapter;
}

}  // namespace

std::string ExecutableDir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::current_path().string() : self.parent_path().string();
}

StatusOr<ResolvedAdapter> ResolveAdapter(const std::string& name_or_path, const std::string& binary_dir) {
  if (name_or_path.empty()) return InvalidArgument("--adapter is required (known adapters: ", KnownAdapters(), ")");
  std::error_code ec;
  const fs::path given(name_or_path);
  if (fs::is_regular_file(given, ec)) {
    if (given.extension() != ".so") {
      return InvalidArgument("--adapter ", name_or_path, ": a file must be a native adapter library (.so)");
    }
    ResolvedAdapter adapter;
    adapter.spec = fs::absolute(given).lexically_normal().string();
    adapter.name = given.stem().string();
    if (adapter.name.rfind("libparity_adapter_", 0) == 0) adapter.name = adapter.name.substr(18);
    adapter.launch = NativeLaunch(adapter.spec, binary_dir);
    adapter.launch.adapter = adapter.name;
    return adapter;
  }
  if (fs::is_directory(given, ec) && fs::exists(given / "adapter.json", ec)) return FromManifest(given, binary_dir);
  if (name_or_path.find('/') == std::string::npos) {
    const fs::path dir = fs::path(PARITY_SOURCE_DIR) / "adapters" / name_or_path;
    if (fs::exists(dir / "adapter.json", ec)) return FromManifest(dir, binary_dir);
  }
  return NotFound("--adapter ", name_or_path, ": no such adapter (known adapters: ", KnownAdapters(),
                  "; or give a folder with adapter.json, or a .so)");
}

}  // namespace parity
