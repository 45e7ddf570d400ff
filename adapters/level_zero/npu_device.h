// The NPU as the adapter reaches it: the Level Zero loader (opened at run
// time, so that a machine without libze1 gets a SKIP that says so, not a
// worker that cannot start), the first driver with an NPU device that
// offers the graph extension (ze_graph_ext.h), and one context, command
// queue and fence on it. Graphs made here are OpenVINO IR compiled by the
// driver, or native blobs it exported; each runs in a command list of its
// own, closed once, executed with the fence per run.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <level_zero/ze_api.h>

#include "adapters/level_zero/ze_graph_ext.h"
#include "reference/core/status.h"
#include "reference/core/tensor.h"

namespace parity::adapters::level_zero {

// What discovery found, for the adapter info and the capabilities.
struct NpuDescription {
  std::string driver;        // "driver 0x01000000, Level Zero API 1.8"
  std::string device_name;   // ze_device_properties_t::name
  std::string device;        // the adapter info's description of the device
  uint32_t vendor_id = 0;
  uint32_t graph_extension = 0;  // ZE_MAKE_VERSION of the graph extension
  pze_graph_compiler_version compiler{};
  // The variant target this NPU's blobs are for (spec/variants.md), and the
  // __identifier__ its blobs carry: "<target>.blob/<compiler major>.<minor>".
  std::string target;
  std::string blob_identifier;
};

class NpuGraph;

class NpuDevice {
 public:
  // The process's NPU: found on first use. kUnavailable, with a message
  // that says what is missing (no loader, zeInit's answer, no NPU device,
  // no graph extension), when there is none.
  static StatusOr<NpuDevice*> Get();
  // Whether discovery has failed, without trying again (for capabilities).
  const NpuDescription& description() const { return description_; }

  // The driver's graph from OpenVINO IR (the XML and weights of one model)
  // or from a native blob; `name` names it in messages and build flags.
  StatusOr<std::unique_ptr<NpuGraph>> CompileIr(const std::string& xml, const std::string& weights,
                                                const std::string& name);
  StatusOr<std::unique_ptr<NpuGraph>> LoadBlob(const std::string& blob, const std::string& name);
  // The IR's layers the device runs (the driver's layer query), by name.
  StatusOr<std::vector<std::string>> SupportedLayers(const std::string& xml, const std::string& weights,
                                                     const std::string& name);

  // A Level Zero result as a Status: device loss and memory exhaustion
  // keep their meaning (the adapter maps them to their ABI codes), a
  // creation's build log is appended when there is one.
  Status Check(ze_result_t result, const std::string& what, const std::string& name,
               pze_graph_handle_t graph = nullptr);

  struct Api;
  const Api& api() const { return *api_; }
  const pze_graph_ddi_1_4& graph_ddi() const { return *graph_ddi_; }
  ze_context_handle_t context() const { return context_; }
  ze_device_handle_t device() const { return device_; }
  ze_command_queue_handle_t queue() const { return queue_; }
  // After ZE_RESULT_ERROR_DEVICE_LOST the context is dead: the next session
  // makes a new one (Get() calls Recover()).
  void MarkLost() { lost_ = true; }

  // The copies into and out of the graphs' argument buffers (memory the
  // NPU reads and writes), and the bytes those buffers hold now and at
  // their peak since ResetPeak: a run's parity_run_cost. Sessions are
  // called one at a time (spec/abi/parity_adapter.h), so plain counts do.
  struct Traffic {
    uint64_t in_copies = 0, in_bytes = 0;
    uint64_t out_copies = 0, out_bytes = 0;
    uint64_t held_bytes = 0, peak_bytes = 0;
  };
  const Traffic& traffic() const { return traffic_; }
  void ResetPeak() { traffic_.peak_bytes = traffic_.held_bytes; }

 private:
  friend class NpuGraph;  // counts its copies and argument buffers in traffic_
  NpuDevice() = default;
  Status Discover();
  Status OpenContext();
  Status Recover();
  StatusOr<std::unique_ptr<NpuGraph>> Create(const pze_graph_desc& desc, const std::string& name);
  std::string BuildLog(pze_graph_handle_t graph);
  std::string WriteIrBufferFor(const std::string& xml, const std::string& weights) const;

  std::unique_ptr<Api> api_;
  const pze_graph_ddi_1_4* graph_ddi_ = nullptr;
  ze_driver_handle_t driver_ = nullptr;
  ze_device_handle_t device_ = nullptr;
  ze_context_handle_t context_ = nullptr;
  ze_command_queue_handle_t queue_ = nullptr;
  bool lost_ = false;
  NpuDescription description_;
  Traffic traffic_;
};

// One graph on the device: its arguments in the driver's order, host
// memory for each (allocated once, from the driver, at the argument's
// static shape), and its command list.
class NpuGraph {
 public:
  struct Argument {
    std::string name;
    bool input = true;
    DataType type = DataType::kUndefined;
    Shape dims;
    void* memory = nullptr;
    size_t bytes = 0;
  };

  ~NpuGraph();
  const std::vector<Argument>& arguments() const { return arguments_; }
  const std::string& name() const { return name_; }
  // Copies `inputs` (one per input argument, in argument order) in, runs
  // the graph, and returns the outputs in argument order.
  StatusOr<std::vector<Tensor>> Run(const std::vector<const Tensor*>& inputs);
  // The driver's native blob of this graph.
  StatusOr<std::string> ExportBlob();

 private:
  friend class NpuDevice;
  NpuGraph(NpuDevice* device, pze_graph_handle_t handle, std::string name)
      : device_(device), context_(device->context()), handle_(handle), name_(std::move(name)) {}
  Status Prepare();

  NpuDevice* device_;
  // The context the graph's memory and list belong to: after a device loss
  // the device opens a new one, and this graph's are freed in their own.
  ze_context_handle_t context_;
  pze_graph_handle_t handle_;
  std::string name_;
  std::vector<Argument> arguments_;
  ze_command_list_handle_t list_ = nullptr;
  ze_fence_handle_t fence_ = nullptr;
};

}  // namespace parity::adapters::level_zero
