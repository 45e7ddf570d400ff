// The test NPU driver's objects and the state they share: the handles the
// core API (core_api.cc) and the graph extension (graph_api.cc) hand out,
// the registry that every entry point checks a handle against, the host
// allocations, and the configuration read at zeInit (config.cc).
//
// Thread safety: the registry, the allocation table and the configuration
// are guarded by their own mutexes; an object's own fields are not, as in
// Level Zero, where a caller may not use one command list or graph from two
// threads at once. Contexts, queues and fences carry atomics because a fence
// is waited on from one thread while another executes.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <new>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include <level_zero/ze_api.h>

#include "adapters/level_zero/ze_graph_ext.h"

namespace parity::ze_test_driver {

// The compiler this driver reports, and that an IR buffer and a native blob
// must name: 1.0.
inline constexpr pze_graph_compiler_version kCompilerVersion = {1, 0};
// zeDriverGetProperties' driverVersion: 1.0.0 as (major << 24 | minor << 16 | patch).
inline constexpr uint32_t kDriverVersion = (1u << 24) | (0u << 16) | 0u;
// A made-up PCI vendor id: the device is nobody's hardware, so it must not
// pass for Intel's (0x8086), which the adapter treats as a production NPU.
inline constexpr uint32_t kVendorId = 0x7e57;
inline constexpr uint32_t kMaxOvOpset = 15;

// --- Configuration (config.cc) ---------------------------------------------

enum class Fault { kNone, kDeviceLost, kOutOfMemory, kCompileFailure, kHang };

struct FaultRule {
  std::string glob;  // fnmatch pattern on the graph's name
  Fault fault = Fault::kNone;
};

struct Config {
  std::set<std::string> unsupported;  // OpenVINO op type names the device refuses
  std::vector<FaultRule> faults;      // first matching rule wins
  std::optional<int> threads;         // PARITY_THREADS, 1 to 1024
};

// The configuration from PARITY_ZE_TEST_UNSUPPORTED, PARITY_ZE_TEST_FAULTS
// and PARITY_THREADS, or a message naming the entry that is malformed.
bool ReadConfig(Config* config, std::string* error);
// The configuration zeInit read; empty before it.
const Config& CurrentConfig();
void SetCurrentConfig(Config config);
Fault FaultFor(const std::string& graph_name);
const char* FaultName(Fault fault);
// The specification's build flags, '--config KEY="VALUE" KEY2="VALUE2"',
// as (key, value) pairs, or nullopt with `error` set when they are malformed.
std::optional<std::vector<std::pair<std::string, std::string>>> ParseBuildFlags(const char* flags, std::string* error);

// --- Objects ----------------------------------------------------------------

enum class Kind { kContext, kQueue, kList, kFence, kEventPool, kEvent, kGraph, kQuery };

struct Context {
  // Set by a device_lost fault: from then on every call on an object of
  // this context answers ZE_RESULT_ERROR_DEVICE_LOST (destroys still work).
  std::atomic<bool> lost{false};
};

struct CommandQueue {
  Context* context = nullptr;
  // Set by a hang fault: zeCommandQueueSynchronize never succeeds again.
  std::atomic<bool> hung{false};
};

struct Event;
struct Graph;

struct Command {
  enum class Type { kBarrier, kMemoryCopy, kGraphInitialize, kGraphExecute } type = Type::kBarrier;
  void* dst = nullptr;
  const void* src = nullptr;
  size_t size = 0;
  Graph* graph = nullptr;
  Event* signal = nullptr;  // signalled once the command has run
};

struct CommandList {
  Context* context = nullptr;
  bool closed = false;
  std::vector<Command> commands;
};

struct Fence {
  CommandQueue* queue = nullptr;
  std::atomic<bool> signalled{false};
};

struct EventPool {
  Context* context = nullptr;
  uint32_t count = 0;
};

struct Event {
  EventPool* pool = nullptr;
  std::atomic<bool> signalled{false};
};

// Every live handle with its kind. Entry points look a handle up here
// before touching it, so a destroyed or made-up handle gets
// ZE_RESULT_ERROR_INVALID_NULL_HANDLE instead of a crash.
void RegisterHandle(const void* handle, Kind kind);
void UnregisterHandle(const void* handle);
bool IsHandle(const void* handle, Kind kind);

template <typename T>
T* Lookup(const void* handle, Kind kind) {
  return handle && IsHandle(handle, kind) ? static_cast<T*>(const_cast<void*>(handle)) : nullptr;
}

// A new object's handle, registered.
template <typename T, typename Handle>
ze_result_t Make(Kind kind, T* object, Handle* out) {
  RegisterHandle(object, kind);
  *out = reinterpret_cast<Handle>(object);
  return ZE_RESULT_SUCCESS;
}

template <typename T>
ze_result_t Destroy(const void* handle, Kind kind) {
  T* object = Lookup<T>(handle, kind);
  if (!object) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
  UnregisterHandle(object);
  // Contexts, queues and event pools are parents that children point to
  // (a fence to its queue, a queue to its context): a caller that destroys
  // the parent first must not make the child read freed memory, so parents
  // are retired (a few bytes each), never freed.
  if constexpr (!std::is_same_v<T, Context> && !std::is_same_v<T, CommandQueue> && !std::is_same_v<T, EventPool>) {
    delete object;
  }
  return ZE_RESULT_SUCCESS;
}

// Appends `command` to an open command list of a live context, with its
// signal event; the wait events are checked, then satisfied by the order of
// execution alone.
ze_result_t AppendCommand(ze_command_list_handle_t list, Command command, ze_event_handle_t signal,
                          uint32_t wait_count, ze_event_handle_t* waits);
CommandList* ListOf(ze_command_list_handle_t list);

// The single driver and device: fixed addresses, no registry entries.
ze_driver_handle_t DriverHandle();
ze_device_handle_t DeviceHandle();
bool IsDevice(ze_device_handle_t device);

// --- Graphs (graph_api.cc) ---------------------------------------------------

// The graph extension's function table, for zeDriverGetExtensionFunctionAddress.
const pze_graph_ddi_1_4* GraphDdi();
Fault FaultOf(const Graph* graph);
const std::string& NameOf(const Graph* graph);
// Runs the graph on its bound arguments, synchronously, on the calling
// thread: ZE_RESULT_ERROR_INVALID_ARGUMENT when an argument is unbound,
// ZE_RESULT_ERROR_UNKNOWN when OpenVINO fails (its message goes to stderr).
ze_result_t ExecuteGraph(Graph* graph);

// --- The C boundary ------------------------------------------------------------

namespace detail {
template <auto F>
struct Guard;
template <typename... Args, ze_result_t (*F)(Args...)>
struct Guard<F> {
  static ze_result_t ZE_APICALL Call(Args... args) noexcept {
    try {
      return F(args...);
    } catch (const std::bad_alloc&) {
      return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    } catch (...) {
      return ZE_RESULT_ERROR_UNKNOWN;
    }
  }
};
}  // namespace detail

// What the function tables hold: the entry point `F`, with any exception
// (an allocation failing inside the standard library) turned into a result
// code at the C boundary, never thrown into the loader.
template <auto F>
inline constexpr auto Guarded = &detail::Guard<F>::Call;

// Size-first copy of a NUL-terminated text, the extension's convention:
// with `out` null, `*size` gets the length with its NUL; otherwise at most
// `*size` bytes are written, always NUL-terminated.
template <typename Size>
ze_result_t CopyText(const std::string& text, Size* size, char* out) {
  if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (!out) {
    *size = static_cast<Size>(text.size() + 1);
    return ZE_RESULT_SUCCESS;
  }
  if (*size == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
  const size_t n = std::min(static_cast<size_t>(*size) - 1, text.size());
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
  return ZE_RESULT_SUCCESS;
}

}  // namespace parity::ze_test_driver
