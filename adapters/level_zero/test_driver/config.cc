// The test driver's configuration, read from the environment at zeInit
// (README.md lists the variables), and the parser of the graph
// extension's build flags.
#include <fnmatch.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "adapters/level_zero/test_driver/driver.h"

namespace parity::ze_test_driver {
namespace {

std::mutex g_config_mutex;
Config g_config;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start));
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return parts;
}

std::optional<Fault> ParseFault(std::string_view name) {
  if (name == "device_lost") return Fault::kDeviceLost;
  if (name == "out_of_memory") return Fault::kOutOfMemory;
  if (name == "compile_failure") return Fault::kCompileFailure;
  if (name == "hang") return Fault::kHang;
  return std::nullopt;
}

// Same rule as the project's other adapters (adapters/reference/host_settings.h):
// a whole number from 1 to 1024, anything else leaves OpenVINO's default.
std::optional<int> ReadThreads() {
  const char* text = std::getenv("PARITY_THREADS");
  if (!text || !*text || std::strlen(text) > 4 || std::strspn(text, "0123456789") != std::strlen(text)) {
    return std::nullopt;
  }
  const int value = std::atoi(text);
  if (value <= 0 || value > 1024) return std::nullopt;
  return value;
}

}  // namespace

bool ReadConfig(Config* config, std::string* error) {
  Config result;
  if (const char* unsupported = std::getenv("PARITY_ZE_TEST_UNSUPPORTED")) {
    for (std::string_view type : Split(unsupported, ',')) {
      type = Trim(type);
      if (!type.empty()) result.unsupported.emplace(type);
    }
  }
  if (const char* faults = std::getenv("PARITY_ZE_TEST_FAULTS"); faults && !Trim(faults).empty()) {
    for (std::string_view entry : Split(faults, ',')) {
      const std::string_view trimmed = Trim(entry);
      // The last '=' splits, so that a pattern may itself hold one.
      const size_t equals = trimmed.rfind('=');
      if (equals == std::string_view::npos || equals == 0) {
        *error = "PARITY_ZE_TEST_FAULTS: entry '" + std::string(trimmed) +
                 "' is not GLOB=FAULT (FAULT one of device_lost, out_of_memory, compile_failure, hang)";
        return false;
      }
      const std::string_view glob = Trim(trimmed.substr(0, equals));
      const std::string_view name = Trim(trimmed.substr(equals + 1));
      const std::optional<Fault> fault = ParseFault(name);
      if (glob.empty() || !fault) {
        *error = "PARITY_ZE_TEST_FAULTS: entry '" + std::string(trimmed) + "' names unknown fault '" +
                 std::string(name) + "' (known: device_lost, out_of_memory, compile_failure, hang)";
        return false;
      }
      result.faults.push_back({std::string(glob), *fault});
    }
  }
  result.threads = ReadThreads();
  *config = std::move(result);
  return true;
}

const Config& CurrentConfig() {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  return g_config;
}

void SetCurrentConfig(Config config) {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  g_config = std::move(config);
}

Fault FaultFor(const std::string& graph_name) {
  std::lock_guard<std::mutex> lock(g_config_mutex);
  for (const FaultRule& rule : g_config.faults) {
    if (fnmatch(rule.glob.c_str(), graph_name.c_str(), 0) == 0) return rule.fault;
  }
  return Fault::kNone;
}

const char* FaultName(Fault fault) {
  switch (fault) {
    case Fault::kNone: return "none";
    case Fault::kDeviceLost: return "device_lost";
    case Fault::kOutOfMemory: return "out_of_memory";
    case Fault::kCompileFailure: return "compile_failure";
    case Fault::kHang: return "hang";
  }
  return "none";
}

// The grammar: options start with "--"; "--config" is followed by
// KEY="VALUE" pairs (VALUE quoted, no escapes, may hold spaces) up to the
// next option; other options (--inputs_precisions="..." and the like) are
// read past, since this driver has nothing to do with them.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseBuildFlags(const char* flags, std::string* error) {
  std::vector<std::pair<std::string, std::string>> pairs;
  if (!flags) return pairs;
  const std::string_view text(flags);
  size_t at = 0;
  bool in_config = false;
  auto skip_space = [&] {
    while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
  };
  while (true) {
    skip_space();
    if (at >= text.size()) break;
    const bool option = text.compare(at, 2, "--") == 0;
    if (option) at += 2;
    size_t key_end = at;
    while (key_end < text.size() && text[key_end] != '=' && !std::isspace(static_cast<unsigned char>(text[key_end]))) {
      ++key_end;
    }
    const std::string key(text.substr(at, key_end - at));
    at = key_end;
    if (option && key == "config") {
      in_config = true;
      continue;
    }
    if (key.empty() || at >= text.size() || text[at] != '=') {
      *error = "build flags '" + std::string(text) + "': expected KEY=\"VALUE\" at '" + key + "'";
      return std::nullopt;
    }
    ++at;  // '='
    std::string value;
    if (at < text.size() && text[at] == '"') {
      const size_t close = text.find('"', at + 1);
      if (close == std::string_view::npos) {
        *error = "build flags '" + std::string(text) + "': the value of '" + key + "' has no closing quote";
        return std::nullopt;
      }
      value = std::string(text.substr(at + 1, close - at - 1));
      at = close + 1;
    } else {
      const size_t start = at;
      while (at < text.size() && !std::isspace(static_cast<unsigned char>(text[at]))) ++at;
      value = std::string(text.substr(start, at - start));
    }
    if (option) {
      in_config = false;  // an option of its own, not a config entry
    } else if (!in_config) {
      *error = "build flags '" + std::string(text) + "': '" + key + "' is outside any --config";
      return std::nullopt;
    } else {
      pairs.emplace_back(key, std::move(value));
    }
  }
  return pairs;
}

}  // namespace parity::ze_test_driver
