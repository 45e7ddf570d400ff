// The settings OpenVINO's CPU plugin compiles with, wherever the project
// hands it a model (the OpenVINO adapter, and the Level Zero test driver,
// which compiles the NPU's graphs with it): float32 inference (no silent
// bfloat16 or float16; a model typed in 16 bits keeps its types at its
// inputs and outputs), no dynamic quantization of activations, one stream,
// no core pinning (workers run side by side), and `threads` when given.
#pragma once

#include <cstdint>
#include <optional>

#include <openvino/runtime/properties.hpp>

namespace parity::adapters::openvino {

inline ov::AnyMap Float32CpuConfig(std::optional<int32_t> threads) {
  ov::AnyMap config{
      ov::hint::inference_precision(ov::element::f32),
      ov::hint::performance_mode(ov::hint::PerformanceMode::LATENCY),
      ov::num_streams(1),
      ov::hint::enable_cpu_pinning(false),
      ov::hint::dynamic_quantization_group_size(0),
  };
  if (threads) config.insert(ov::inference_num_threads(*threads));
  return config;
}

}  // namespace parity::adapters::openvino
