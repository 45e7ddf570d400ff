// The core Level Zero API of the test NPU driver: one driver, one VPU
// device, contexts, command queues and lists that run synchronously on the
// calling thread, fences, events and host memory. The loader reaches these
// through the ProcAddrTable functions at the end of this file.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <thread>
#include <type_traits>
#include <unordered_map>

#include <level_zero/ze_ddi.h>
#include <openvino/core/version.hpp>

#include "adapters/level_zero/test_driver/ddi_table.h"
#include "adapters/level_zero/test_driver/driver.h"

namespace parity::ze_test_driver {
namespace {

// --- Handles -------------------------------------------------------------------

std::mutex g_handles_mutex;
std::unordered_map<const void*, Kind>& Handles() {
  static auto* handles = new std::unordered_map<const void*, Kind>;  // never freed: outlives every caller
  return *handles;
}

// The driver and device objects: only their addresses matter.
char g_driver_object;
char g_device_object;

std::mutex g_init_mutex;
std::atomic<bool> g_initialized{false};

// --- Host memory -------------------------------------------------------------------

struct Allocation {
  size_t size = 0;
  ze_memory_type_t type = ZE_MEMORY_TYPE_UNKNOWN;
  Context* context = nullptr;
  uint64_t id = 0;
};

std::mutex g_memory_mutex;
std::map<uintptr_t, Allocation> g_allocations;  // by base address
uint64_t g_next_allocation_id = 1;

// The largest single allocation: a quarter of the host's memory, as a
// stand-in for an NPU's share of system memory.
uint64_t HostMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : uint64_t{1} << 34;
}
uint64_t MaxAllocationBytes() { return HostMemoryBytes() / 4; }

ze_result_t Allocate(Context* context, ze_memory_type_t type, size_t size, size_t alignment, void** out) {
  if (!out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (size == 0 || size > MaxAllocationBytes()) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
  if (alignment == 0) alignment = 64;
  if ((alignment & (alignment - 1)) != 0) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
  alignment = std::max<size_t>(alignment, sizeof(void*));
  // aligned_alloc wants a size that is a multiple of the alignment.
  const size_t rounded = (size + alignment - 1) / alignment * alignment;
  void* memory = std::aligned_alloc(alignment, rounded);
  if (!memory) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  g_allocations[reinterpret_cast<uintptr_t>(memory)] = {size, type, context, g_next_allocation_id++};
  *out = memory;
  return ZE_RESULT_SUCCESS;
}

// --- Waiting ---------------------------------------------------------------------------

// Polls `done` until it holds or `timeout_ns` has passed (UINT64_MAX:
// forever, as the specification says). Execution is synchronous, so only a
// hung queue ever makes a caller wait here.
template <typename Done>
ze_result_t WaitFor(Done done, uint64_t timeout_ns) {
  if (done()) return ZE_RESULT_SUCCESS;
  const auto start = std::chrono::steady_clock::now();
  auto waited_ns = [start] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
  };
  while (true) {
    if (timeout_ns != UINT64_MAX && waited_ns() >= timeout_ns) {
      return ZE_RESULT_NOT_READY;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (done()) return ZE_RESULT_SUCCESS;
  }
}

// --- Driver ----------------------------------------------------------------------------------

ze_result_t Init(ze_init_flags_t flags) {
  // A GPU-only request finds nothing here: this driver has only a VPU.
  if (flags != 0 && !(flags & ZE_INIT_FLAG_VPU_ONLY)) return ZE_RESULT_ERROR_UNINITIALIZED;
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_initialized) return ZE_RESULT_SUCCESS;
  Config config;
  std::string error;
  if (!ReadConfig(&config, &error)) {
    std::fprintf(stderr, "ze_parity_test_npu: zeInit refused: %s\n", error.c_str());
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  SetCurrentConfig(std::move(config));
  g_initialized = true;
  return ZE_RESULT_SUCCESS;
}

template <typename Handle>
ze_result_t ListOne(Handle handle, uint32_t* count, Handle* out) {
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !out) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  out[0] = handle;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

bool IsDriver(ze_driver_handle_t driver) { return driver && driver == DriverHandle(); }

ze_result_t DriverGet(uint32_t* count, ze_driver_handle_t* drivers) {
  if (!g_initialized) return ZE_RESULT_ERROR_UNINITIALIZED;
  return ListOne(DriverHandle(), count, drivers);
}

ze_result_t DriverGetApiVersion(ze_driver_handle_t driver, ze_api_version_t* version) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!version) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  *version = ZE_API_VERSION_CURRENT;
  return ZE_RESULT_SUCCESS;
}

// Fixed identities, so that two runs of the suite see the same driver and device.
constexpr uint8_t kDriverUuid[ZE_MAX_DRIVER_UUID_SIZE] = {'p', 'a', 'r', 'i', 't', 'y', '-', 'z', 'e',
                                                          '-', 't', 'e', 's', 't', 'd', 'r'};
constexpr uint8_t kDeviceUuid[ZE_MAX_DEVICE_UUID_SIZE] = {'p', 'a', 'r', 'i', 't', 'y', '-', 'z', 'e',
                                                          '-', 't', 'e', 's', 't', 'n', 'p'};

ze_result_t DriverGetProperties(ze_driver_handle_t driver, ze_driver_properties_t* properties) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::memcpy(properties->uuid.id, kDriverUuid, sizeof kDriverUuid);
  properties->driverVersion = kDriverVersion;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DriverGetIpcProperties(ze_driver_handle_t driver, ze_driver_ipc_properties_t* properties) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->flags = 0;  // no IPC: memory is plain host memory of one process
  return ZE_RESULT_SUCCESS;
}

ze_result_t DriverGetExtensionProperties(ze_driver_handle_t driver, uint32_t* count,
                                         ze_driver_extension_properties_t* extensions) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !extensions) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  std::snprintf(extensions[0].name, ZE_MAX_EXTENSION_NAME, "%s", PZE_GRAPH_EXT_NAME_1_4);
  extensions[0].version = PZE_GRAPH_EXT_VERSION_1_4;
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DriverGetExtensionFunctionAddress(ze_driver_handle_t driver, const char* name, void** address) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!name || !address) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (std::strcmp(name, PZE_GRAPH_EXT_NAME_1_4) != 0) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  *address = const_cast<pze_graph_ddi_1_4*>(GraphDdi());
  return ZE_RESULT_SUCCESS;
}

// --- Device ------------------------------------------------------------------------------------

ze_result_t DeviceGet(ze_driver_handle_t driver, uint32_t* count, ze_device_handle_t* devices) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  return ListOne(DeviceHandle(), count, devices);
}

ze_result_t DeviceGetProperties(ze_device_handle_t device, ze_device_properties_t* properties) {
  if (!IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->type = ZE_DEVICE_TYPE_VPU;
  properties->vendorId = kVendorId;
  properties->deviceId = 0x0001;
  properties->flags = ZE_DEVICE_PROPERTY_FLAG_INTEGRATED;  // it shares the host's memory, as an NPU does
  properties->subdeviceId = 0;
  properties->coreClockRate = 1000;  // MHz; nothing depends on it
  properties->maxMemAllocSize = MaxAllocationBytes();
  properties->maxHardwareContexts = 1;
  properties->maxCommandQueuePriority = 0;
  properties->numThreadsPerEU = 1;
  properties->physicalEUSimdWidth = 1;
  properties->numEUsPerSubslice = 1;
  properties->numSubslicesPerSlice = 1;
  properties->numSlices = 1;
  properties->timerResolution = 1;  // ns
  properties->timestampValidBits = 64;
  properties->kernelTimestampValidBits = 0;
  std::memcpy(properties->uuid.id, kDeviceUuid, sizeof kDeviceUuid);
  // The adapter recognises this driver's blobs by the name's prefix
  // ("ONNX Parity test NPU"), so it is part of the interface.
  std::snprintf(properties->name, ZE_MAX_DEVICE_NAME, "ONNX Parity test NPU (OpenVINO %s CPU plugin)",
                ov::get_openvino_version().buildNumber);
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetComputeProperties(ze_device_handle_t device, ze_device_compute_properties_t* properties) {
  if (!IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  // No kernels: graphs are the only work this device takes.
  properties->maxTotalGroupSize = 1;
  properties->maxGroupSizeX = properties->maxGroupSizeY = properties->maxGroupSizeZ = 1;
  properties->maxGroupCountX = properties->maxGroupCountY = properties->maxGroupCountZ = 1;
  properties->maxSharedLocalMemory = 0;
  properties->numSubGroupSizes = 1;
  properties->subGroupSizes[0] = 1;
  return ZE_RESULT_SUCCESS;
}

ze_result_t DeviceGetMemoryProperties(ze_device_handle_t device, uint32_t* count,
                                      ze_device_memory_properties_t* properties) {
  if (!IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!count) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (*count == 0 || !properties) {
    *count = 1;
    return ZE_RESULT_SUCCESS;
  }
  properties[0].flags = 0;
  properties[0].maxClockRate = 0;
  properties[0].maxBusWidth = 0;
  properties[0].totalSize = HostMemoryBytes();
  std::snprintf(properties[0].name, ZE_MAX_DEVICE_NAME, "host memory");
  *count = 1;
  return ZE_RESULT_SUCCESS;
}

// --- Context -------------------------------------------------------------------------------------

ze_result_t ContextCreate(ze_driver_handle_t driver, const ze_context_desc_t* desc, ze_context_handle_t* out) {
  if (!IsDriver(driver)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return Make(Kind::kContext, new Context, out);
}

ze_result_t ContextDestroy(ze_context_handle_t context) { return Destroy<Context>(context, Kind::kContext); }

// --- Command queue ------------------------------------------------------------------------------------

ze_result_t CommandQueueCreate(ze_context_handle_t hContext, ze_device_handle_t device,
                               const ze_command_queue_desc_t* desc, ze_command_queue_handle_t* out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context || !IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  auto* queue = new CommandQueue;
  queue->context = context;
  return Make(Kind::kQueue, queue, out);
}

ze_result_t CommandQueueDestroy(ze_command_queue_handle_t queue) { return Destroy<CommandQueue>(queue, Kind::kQueue); }

ze_result_t SignalEvent(Event* event) {
  if (event && IsHandle(event, Kind::kEvent)) event->signalled = true;
  return ZE_RESULT_SUCCESS;
}

// Runs one command; for a graph that hangs, `*hung` is set and the rest of
// the submission never runs.
ze_result_t RunCommand(CommandQueue* queue, const Command& command, bool* hung) {
  switch (command.type) {
    case Command::Type::kBarrier:
    case Command::Type::kGraphInitialize:
      break;
    case Command::Type::kMemoryCopy:
      std::memmove(command.dst, command.src, command.size);
      break;
    case Command::Type::kGraphExecute: {
      // The graph may have been destroyed since it was appended.
      if (!IsHandle(command.graph, Kind::kGraph)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
      switch (FaultOf(command.graph)) {
        case Fault::kDeviceLost:
          std::fprintf(stderr, "ze_parity_test_npu: injected device loss while running graph '%s'\n",
                       NameOf(command.graph).c_str());
          queue->context->lost = true;
          return ZE_RESULT_ERROR_DEVICE_LOST;
        case Fault::kHang:
          queue->hung = true;
          *hung = true;
          return ZE_RESULT_SUCCESS;
        default:
          break;
      }
      const ze_result_t result = ExecuteGraph(command.graph);
      if (result != ZE_RESULT_SUCCESS) return result;
      break;
    }
  }
  return SignalEvent(command.signal);
}

ze_result_t CommandQueueExecuteCommandLists(ze_command_queue_handle_t hQueue, uint32_t count,
                                            ze_command_list_handle_t* hLists, ze_fence_handle_t hFence) {
  CommandQueue* queue = Lookup<CommandQueue>(hQueue, Kind::kQueue);
  if (!queue) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!hLists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  if (queue->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  Fence* fence = nullptr;
  if (hFence) {
    fence = Lookup<Fence>(hFence, Kind::kFence);
    if (!fence) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (fence->queue != queue) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  }
  std::vector<CommandList*> lists;
  for (uint32_t i = 0; i < count; ++i) {
    CommandList* list = Lookup<CommandList>(hLists[i], Kind::kList);
    if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!list->closed || list->context != queue->context) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    lists.push_back(list);
  }
  // Work submitted behind a hung graph never starts.
  if (queue->hung) return ZE_RESULT_SUCCESS;
  bool hung = false;
  for (CommandList* list : lists) {
    for (const Command& command : list->commands) {
      const ze_result_t result = RunCommand(queue, command, &hung);
      if (result != ZE_RESULT_SUCCESS) return result;
      if (hung) return ZE_RESULT_SUCCESS;
    }
  }
  if (fence) fence->signalled = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandQueueSynchronize(ze_command_queue_handle_t hQueue, uint64_t timeout) {
  CommandQueue* queue = Lookup<CommandQueue>(hQueue, Kind::kQueue);
  if (!queue) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (queue->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  return WaitFor([queue] { return !queue->hung; }, timeout);
}

// --- Command list -------------------------------------------------------------------------------------

ze_result_t CommandListCreate(ze_context_handle_t hContext, ze_device_handle_t device,
                              const ze_command_list_desc_t* desc, ze_command_list_handle_t* out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context || !IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  auto* list = new CommandList;
  list->context = context;
  return Make(Kind::kList, list, out);
}

ze_result_t CommandListDestroy(ze_command_list_handle_t list) { return Destroy<CommandList>(list, Kind::kList); }

ze_result_t CommandListClose(ze_command_list_handle_t hList) {
  CommandList* list = Lookup<CommandList>(hList, Kind::kList);
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (list->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  list->closed = true;
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListReset(ze_command_list_handle_t hList) {
  CommandList* list = Lookup<CommandList>(hList, Kind::kList);
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (list->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  list->commands.clear();
  list->closed = false;
  return ZE_RESULT_SUCCESS;
}

// Execution is in order, so a wait list is satisfied by the order of
// commands alone; its handles are still checked.
ze_result_t CheckEvents(ze_event_handle_t signal, uint32_t wait_count, ze_event_handle_t* waits) {
  if (signal && !IsHandle(signal, Kind::kEvent)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (wait_count > 0 && !waits) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < wait_count; ++i) {
    if (!IsHandle(waits[i], Kind::kEvent)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  return ZE_RESULT_SUCCESS;
}

ze_result_t CommandListAppendBarrier(ze_command_list_handle_t list, ze_event_handle_t signal, uint32_t wait_count,
                                     ze_event_handle_t* waits) {
  Command command;
  command.type = Command::Type::kBarrier;
  return AppendCommand(list, command, signal, wait_count, waits);
}

ze_result_t CommandListAppendMemoryCopy(ze_command_list_handle_t list, void* dst, const void* src, size_t size,
                                        ze_event_handle_t signal, uint32_t wait_count, ze_event_handle_t* waits) {
  if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  Command command;
  command.type = Command::Type::kMemoryCopy;
  command.dst = dst;
  command.src = src;
  command.size = size;
  return AppendCommand(list, command, signal, wait_count, waits);
}

// --- Fence -------------------------------------------------------------------------------------------------

ze_result_t FenceCreate(ze_command_queue_handle_t hQueue, const ze_fence_desc_t* desc, ze_fence_handle_t* out) {
  CommandQueue* queue = Lookup<CommandQueue>(hQueue, Kind::kQueue);
  if (!queue) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (queue->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  auto* fence = new Fence;
  fence->queue = queue;
  fence->signalled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
  return Make(Kind::kFence, fence, out);
}

ze_result_t FenceDestroy(ze_fence_handle_t fence) { return Destroy<Fence>(fence, Kind::kFence); }

// Fences and events alike: a flag the host waits for, sets or clears, on a
// context that may be lost.
Context* OwnerOf(const Fence* fence) { return fence->queue->context; }
Context* OwnerOf(const Event* event) { return event->pool->context; }

template <typename T>
ze_result_t WaitSignal(const void* handle, Kind kind, uint64_t timeout) {
  T* object = Lookup<T>(handle, kind);
  if (!object) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (OwnerOf(object)->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  return WaitFor([object] { return object->signalled.load(); }, timeout);
}

template <typename T>
ze_result_t SetSignal(const void* handle, Kind kind, bool value) {
  T* object = Lookup<T>(handle, kind);
  if (!object) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (OwnerOf(object)->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  object->signalled = value;
  return ZE_RESULT_SUCCESS;
}

ze_result_t FenceHostSynchronize(ze_fence_handle_t fence, uint64_t timeout) {
  return WaitSignal<Fence>(fence, Kind::kFence, timeout);
}
ze_result_t FenceQueryStatus(ze_fence_handle_t fence) { return WaitSignal<Fence>(fence, Kind::kFence, 0); }
ze_result_t FenceReset(ze_fence_handle_t fence) { return SetSignal<Fence>(fence, Kind::kFence, false); }

// --- Events --------------------------------------------------------------------------------------------------

ze_result_t EventPoolCreate(ze_context_handle_t hContext, const ze_event_pool_desc_t* desc, uint32_t device_count,
                            ze_device_handle_t* devices, ze_event_pool_handle_t* out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->count == 0 || (device_count > 0 && !devices)) return ZE_RESULT_ERROR_INVALID_SIZE;
  for (uint32_t i = 0; i < device_count; ++i) {
    if (!IsDevice(devices[i])) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  }
  if (context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  auto* pool = new EventPool;
  pool->context = context;
  pool->count = desc->count;
  return Make(Kind::kEventPool, pool, out);
}

ze_result_t EventPoolDestroy(ze_event_pool_handle_t pool) { return Destroy<EventPool>(pool, Kind::kEventPool); }

ze_result_t EventCreate(ze_event_pool_handle_t hPool, const ze_event_desc_t* desc, ze_event_handle_t* out) {
  EventPool* pool = Lookup<EventPool>(hPool, Kind::kEventPool);
  if (!pool) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc || !out) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (desc->index >= pool->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  if (pool->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  auto* event = new Event;
  event->pool = pool;
  return Make(Kind::kEvent, event, out);
}

ze_result_t EventDestroy(ze_event_handle_t event) { return Destroy<Event>(event, Kind::kEvent); }

ze_result_t EventHostSignal(ze_event_handle_t event) { return SetSignal<Event>(event, Kind::kEvent, true); }
ze_result_t EventHostSynchronize(ze_event_handle_t event, uint64_t timeout) {
  return WaitSignal<Event>(event, Kind::kEvent, timeout);
}
ze_result_t EventQueryStatus(ze_event_handle_t event) { return WaitSignal<Event>(event, Kind::kEvent, 0); }
ze_result_t EventHostReset(ze_event_handle_t event) { return SetSignal<Event>(event, Kind::kEvent, false); }

// --- Memory ---------------------------------------------------------------------------------------------------

ze_result_t MemAllocHost(ze_context_handle_t hContext, const ze_host_mem_alloc_desc_t* desc, size_t size,
                         size_t alignment, void** out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return Allocate(context, ZE_MEMORY_TYPE_HOST, size, alignment, out);
}

ze_result_t MemAllocDevice(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* desc, size_t size,
                           size_t alignment, ze_device_handle_t device, void** out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context || !IsDevice(device)) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return Allocate(context, ZE_MEMORY_TYPE_DEVICE, size, alignment, out);
}

ze_result_t MemAllocShared(ze_context_handle_t hContext, const ze_device_mem_alloc_desc_t* device_desc,
                           const ze_host_mem_alloc_desc_t* host_desc, size_t size, size_t alignment,
                           ze_device_handle_t device, void** out) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context || (device && !IsDevice(device))) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!device_desc || !host_desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  return Allocate(context, ZE_MEMORY_TYPE_SHARED, size, alignment, out);
}

ze_result_t MemFree(ze_context_handle_t hContext, void* ptr) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  auto it = g_allocations.find(reinterpret_cast<uintptr_t>(ptr));
  if (it == g_allocations.end() || it->second.context != context) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
  g_allocations.erase(it);
  std::free(ptr);
  return ZE_RESULT_SUCCESS;
}

ze_result_t MemGetAllocProperties(ze_context_handle_t hContext, const void* ptr,
                                  ze_memory_allocation_properties_t* properties, ze_device_handle_t* device) {
  Context* context = Lookup<Context>(hContext, Kind::kContext);
  if (!context) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (!ptr || !properties) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  properties->type = ZE_MEMORY_TYPE_UNKNOWN;
  properties->id = 0;
  properties->pageSize = static_cast<uint64_t>(sysconf(_SC_PAGE_SIZE));
  if (device) *device = nullptr;
  std::lock_guard<std::mutex> lock(g_memory_mutex);
  // The allocation that holds `ptr`, which need not be its base.
  const uintptr_t address = reinterpret_cast<uintptr_t>(ptr);
  auto it = g_allocations.upper_bound(address);
  if (it == g_allocations.begin()) return ZE_RESULT_SUCCESS;
  --it;
  if (address - it->first >= it->second.size || it->second.context != context) return ZE_RESULT_SUCCESS;
  properties->type = it->second.type;
  properties->id = it->second.id;
  if (device && it->second.type != ZE_MEMORY_TYPE_HOST) *device = DeviceHandle();
  return ZE_RESULT_SUCCESS;
}

}  // namespace

void RegisterHandle(const void* handle, Kind kind) {
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  Handles()[handle] = kind;
}

void UnregisterHandle(const void* handle) {
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  Handles().erase(handle);
}

bool IsHandle(const void* handle, Kind kind) {
  if (!handle) return false;
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  auto it = Handles().find(handle);
  return it != Handles().end() && it->second == kind;
}

ze_result_t AppendCommand(ze_command_list_handle_t hList, Command command, ze_event_handle_t signal,
                          uint32_t wait_count, ze_event_handle_t* waits) {
  CommandList* list = Lookup<CommandList>(hList, Kind::kList);
  if (!list) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  if (list->context->lost) return ZE_RESULT_ERROR_DEVICE_LOST;
  if (list->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;  // closed lists take no more commands
  if (const ze_result_t r = CheckEvents(signal, wait_count, waits); r != ZE_RESULT_SUCCESS) return r;
  command.signal = reinterpret_cast<Event*>(signal);
  list->commands.push_back(command);
  return ZE_RESULT_SUCCESS;
}

CommandList* ListOf(ze_command_list_handle_t list) { return Lookup<CommandList>(list, Kind::kList); }

ze_driver_handle_t DriverHandle() { return reinterpret_cast<ze_driver_handle_t>(&g_driver_object); }
ze_device_handle_t DeviceHandle() { return reinterpret_cast<ze_device_handle_t>(&g_device_object); }
bool IsDevice(ze_device_handle_t device) { return device && device == DeviceHandle(); }

}  // namespace parity::ze_test_driver

// --- The tables the loader asks for (ze_ddi.h) --------------------------------------------------------

using namespace parity::ze_test_driver;

extern "C" {

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetGlobalProcAddrTable(ze_api_version_t version, ze_global_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnInit = Guarded<&Init>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDriverProcAddrTable(ze_api_version_t version, ze_driver_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnGet = Guarded<&DriverGet>;
  t->pfnGetApiVersion = Guarded<&DriverGetApiVersion>;
  t->pfnGetProperties = Guarded<&DriverGetProperties>;
  t->pfnGetIpcProperties = Guarded<&DriverGetIpcProperties>;
  t->pfnGetExtensionProperties = Guarded<&DriverGetExtensionProperties>;
  t->pfnGetExtensionFunctionAddress = Guarded<&DriverGetExtensionFunctionAddress>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetDeviceProcAddrTable(ze_api_version_t version, ze_device_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnGet = Guarded<&DeviceGet>;
  t->pfnGetProperties = Guarded<&DeviceGetProperties>;
  t->pfnGetComputeProperties = Guarded<&DeviceGetComputeProperties>;
  t->pfnGetMemoryProperties = Guarded<&DeviceGetMemoryProperties>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetContextProcAddrTable(ze_api_version_t version, ze_context_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = Guarded<&ContextCreate>;
  t->pfnDestroy = Guarded<&ContextDestroy>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandQueueProcAddrTable(ze_api_version_t version,
                                                                   ze_command_queue_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = Guarded<&CommandQueueCreate>;
  t->pfnDestroy = Guarded<&CommandQueueDestroy>;
  t->pfnExecuteCommandLists = Guarded<&CommandQueueExecuteCommandLists>;
  t->pfnSynchronize = Guarded<&CommandQueueSynchronize>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version,
                                                                  ze_command_list_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = Guarded<&CommandListCreate>;
  t->pfnDestroy = Guarded<&CommandListDestroy>;
  t->pfnClose = Guarded<&CommandListClose>;
  t->pfnReset = Guarded<&CommandListReset>;
  t->pfnAppendBarrier = Guarded<&CommandListAppendBarrier>;
  t->pfnAppendMemoryCopy = Guarded<&CommandListAppendMemoryCopy>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetFenceProcAddrTable(ze_api_version_t version, ze_fence_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = Guarded<&FenceCreate>;
  t->pfnDestroy = Guarded<&FenceDestroy>;
  t->pfnHostSynchronize = Guarded<&FenceHostSynchronize>;
  t->pfnQueryStatus = Guarded<&FenceQueryStatus>;
  t->pfnReset = Guarded<&FenceReset>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventPoolProcAddrTable(ze_api_version_t version,
                                                                ze_event_pool_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = Guarded<&EventPoolCreate>;
  t->pfnDestroy = Guarded<&EventPoolDestroy>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetEventProcAddrTable(ze_api_version_t version, ze_event_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnCreate = Guarded<&EventCreate>;
  t->pfnDestroy = Guarded<&EventDestroy>;
  t->pfnHostSignal = Guarded<&EventHostSignal>;
  t->pfnHostSynchronize = Guarded<&EventHostSynchronize>;
  t->pfnQueryStatus = Guarded<&EventQueryStatus>;
  t->pfnHostReset = Guarded<&EventHostReset>;
  return ZE_RESULT_SUCCESS;
}

ZE_DLLEXPORT ze_result_t ZE_APICALL zeGetMemProcAddrTable(ze_api_version_t version, ze_mem_dditable_t* t) {
  if (const ze_result_t r = CheckTable(version, t); r != ZE_RESULT_SUCCESS) return r;
  t->pfnAllocHost = Guarded<&MemAllocHost>;
  t->pfnAllocDevice = Guarded<&MemAllocDevice>;
  t->pfnAllocShared = Guarded<&MemAllocShared>;
  t->pfnFree = Guarded<&MemFree>;
  t->pfnGetAllocProperties = Guarded<&MemGetAllocProperties>;
  return ZE_RESULT_SUCCESS;
}

}  // extern "C"
