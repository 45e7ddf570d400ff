// Finding an adapter from `--adapter NAME|PATH` and how to start its worker.
//
// NAME is a folder adapters/NAME/ of the source tree holding adapter.json;
// PATH is such a folder anywhere, or a native adapter library (.so) that
// parity-worker loads. adapter.json:
//   {"name": "reference", "description": "...",
//    "library": "libparity_adapter_reference.so"}        a native adapter, or
//   {"name": "onnxruntime", "command": ["{python}", "adapter.py"]}
// A library name without a folder is looked for in the build's adapters/
// folder, then beside adapter.json. A command runs in the adapter's folder;
// "{python}" is the project's Python (PARITY_PYTHON, else .venv/bin/python).
#pragma once

#include <string>

#include "harness/run/worker_client.h"

namespace parity {

struct ResolvedAdapter {
  std::string name;         // from the manifest, or the library's file name
  std::string spec;         // what --adapter said, made absolute when it is a path
  WorkerLaunch launch;      // log_path and memory limit are left for the caller
};

// `binary_dir` is the folder of the parity executable (parity-worker, the
// native adapter libraries and the Python protocol module are found from it).
StatusOr<ResolvedAdapter> ResolveAdapter(const std::string& name_or_path, const std::string& binary_dir);

// The folder of the running executable.
std::string ExecutableDir();

}  // namespace parity
