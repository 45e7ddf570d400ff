// What the harness passes every adapter in its worker's environment
// (spec/abi/README.md): the memory limit and the thread count, read and
// applied once at start-up by the reference-based adapters and by adapters
// that link the reference's tensors (adapters/openvino/).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "reference/core/parallel.h"
#include "reference/core/tensor.h"
#include "reference/ops/gemm.h"

namespace parity::adapters {

// A positive whole number from environment variable `name`, digits only,
// at most `max`; nullopt when unset or anything else (the default stays).
inline std::optional<int64_t> HostNumber(const char* name, int64_t max) {
  const char* text = std::getenv(name);
  if (!text || !*text || std::strlen(text) > 12 || std::strspn(text, "0123456789") != std::strlen(text)) {
    return std::nullopt;
  }
  const int64_t value = std::strtoll(text, nullptr, 10);
  if (value <= 0 || value > max) return std::nullopt;
  return value;
}

// The harness passes its worker memory limit in PARITY_MEMORY_LIMIT_MIB
// (spec/abi/README.md): the reference then refuses any tensor over it before
// allocating it, instead of being killed by the harness's watch on its
// resident memory.
inline bool ApplyHostMemoryLimit() {
  const std::optional<int64_t> mib = HostNumber("PARITY_MEMORY_LIMIT_MIB", int64_t{1} << 43);
  if (mib) Tensor::SetAllocationLimit(*mib << 20);
  return mib.has_value();
}

// `parity run --threads N` passes N in PARITY_THREADS: the threads one
// operator may use in this worker (reference/core/parallel.h), 1 to 1024;
// anything else leaves one per core.
// OpenBLAS's server threads, started when the library loads, are stopped
// here: the reference's products stop them only at their first call, and a
// session whose products all run on a backend (oneDNN) makes none while
// those threads spin on sched_yield through its runs.
inline bool ApplyHostThreads() {
  ops::UseOneBlasThreadNow();
  const std::optional<int64_t> threads = HostNumber("PARITY_THREADS", 1024);
  if (threads) SetThreadCount(static_cast<int>(*threads));
  return threads.has_value();
}

}  // namespace parity::adapters
