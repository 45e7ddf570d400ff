// Shared set-up of the libFuzzer targets in fuzz/: a low allocation limit,
// so that a huge declared shape is an error rather than an out-of-memory
// abort, and a scratch folder per process for the files a target writes.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "reference/core/tensor.h"

namespace parity::fuzz {

// The reference's limit on one tensor while fuzzing (bytes). libFuzzer runs
// with -rss_limit_mb=2048; a few tensors at this size fit well under it.
inline constexpr int64_t kFuzzAllocationLimit = int64_t{64} << 20;

// A folder of this process's own, removed when the process exits normally.
// Created on first use; the path never changes afterwards.
inline const std::string& ScratchDir() {
  // Never freed: the exit handler below runs after static destructors would.
  static const std::string* const dir = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "parity-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::perror("mkdtemp");
      std::abort();
    }
    return new std::string(pattern);
  }();
  static const bool cleanup_registered = [] {
    return std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(*dir, ignored);
    }) == 0;
  }();
  (void)cleanup_registered;
  return *dir;
}

// Replaces `name` in the scratch folder with `bytes`; returns its path.
inline std::string WriteScratchFile(const std::string& name, std::string_view bytes) {
  const std::string path = ScratchDir() + "/" + name;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::perror(path.c_str());
    std::abort();
  }
  return path;
}

// Called from each target's LLVMFuzzerInitialize.
inline void InitializeTarget() {
  Tensor::SetAllocationLimit(kFuzzAllocationLimit);
  (void)ScratchDir();
}

}  // namespace parity::fuzz
