/* The ONNX Parity adapter C ABI: what a native backend adapter exports.
 *
 * An adapter is a shared library that exports one function,
 * parity_adapter_query, returning a table of function pointers. The table
 * starts with its ABI version and its size in bytes, so a host built against
 * another version never calls a slot that is not there. The host never loads
 * an adapter into its own process: `parity-worker` loads it, and speaks the
 * worker protocol (spec/protocol/) to the harness, so a crash or a hang in
 * the adapter costs one case, not the run.
 *
 * Conventions
 * - Every call that can fail returns a parity_status*: NULL is success; a
 *   non-null status carries a code and a message and is released by the host
 *   with release_status.
 * - Values (inputs and outputs) cross the ABI as serialized ONNX protobuf
 *   messages: onnx.TensorProto, onnx.SequenceProto or onnx.OptionalProto,
 *   exactly as in the case files (test_data_set_N/input_K.pb). Every element
 *   type, strings, packed sub-byte types, sequences and optionals travel
 *   without a conversion the ABI would have to define.
 * - Strings are UTF-8 and NUL-terminated. Memory returned by the adapter
 *   stays owned by the adapter; the lifetime of each is stated at its call.
 * - Calls on one session come from one thread; the host may create several
 *   sessions, but uses them one at a time.
 *
 * Versioning: PARITY_ABI_VERSION rises when a slot is added at the end of
 * parity_adapter_api (struct_size grows with it) or a meaning changes. A host
 * uses a slot only when struct_size covers it and the slot is non-null.
 * Version 2 added bind_state and read_state (stateful sessions, aliasing:
 * spec/aliasing.md); a version 1 table is still served, its state carried by
 * the host. Version 3 appended model_dir to parity_session_options (the
 * folder external data is read from); the table is unchanged, and tables of
 * versions 1 and 2 are still served: their adapters never read past the
 * fields they know. An adapter reads model_dir only when the host_abi_version
 * it was queried with is 3 or more, since an older host's options end
 * before it. Version 4 appended session_cost (the backend's compile time
 * within session creation); tables of versions 1 to 3 are still served.
 * Version 5 appended run_cost (what a run copied between the host and the
 * device, and the device memory it held); tables of versions 1 to 4 are
 * still served. */
#ifndef PARITY_ADAPTER_H_
#define PARITY_ADAPTER_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PARITY_ABI_VERSION 5u
#define PARITY_ADAPTER_QUERY_SYMBOL "parity_adapter_query"

#if defined(_WIN32)
#define PARITY_ADAPTER_EXPORT __declspec(dllexport)
#else
#define PARITY_ADAPTER_EXPORT __attribute__((visibility("default")))
#endif

/* What went wrong; the harness maps codes to result states
 * (spec/results.md): UNSUPPORTED -> UNSUPPORTED, DEVICE_UNAVAILABLE -> SKIP,
 * FALLBACK_REQUIRED -> UNSUPPORTED on that device, anything else from
 * create_session or run -> FAIL with the message. */
typedef enum parity_status_code {
  PARITY_STATUS_OK = 0,
  PARITY_STATUS_UNSUPPORTED = 1,        /* an operator, type or attribute the backend cannot run */
  PARITY_STATUS_INVALID_ARGUMENT = 2,   /* the model or an input is malformed */
  PARITY_STATUS_DEVICE_UNAVAILABLE = 3, /* the requested device is absent */
  PARITY_STATUS_FALLBACK_REQUIRED = 4,  /* fallback forbidden, and some node can only run elsewhere */
  PARITY_STATUS_OUT_OF_MEMORY = 5,
  PARITY_STATUS_INTERNAL = 6            /* anything else */
} parity_status_code;

typedef struct parity_status parity_status;   /* opaque, defined by the adapter */
typedef struct parity_session parity_session; /* opaque, defined by the adapter */

typedef enum parity_value_kind {
  PARITY_VALUE_TENSOR = 1,   /* data holds a serialized onnx.TensorProto */
  PARITY_VALUE_SEQUENCE = 2, /* onnx.SequenceProto */
  PARITY_VALUE_OPTIONAL = 3  /* onnx.OptionalProto */
} parity_value_kind;

/* A named value. For inputs, `name` is the graph input it binds; outputs come
 * in the order of the graph's outputs, named after them. */
typedef struct parity_value {
  const char* name;
  parity_value_kind kind;
  const void* data;
  size_t size; /* bytes of data */
} parity_value;

typedef struct parity_device_info {
  const char* name;        /* what --device selects: "cpu", "cuda:0", "npu" */
  const char* kind;        /* "cpu", "gpu" or "npu" */
  const char* description; /* for reports: model name, driver, memory */
} parity_device_info;

/* Valid for the adapter's lifetime. */
typedef struct parity_adapter_info {
  const char* name;            /* short name for reports, e.g. "onnxruntime" */
  const char* version;         /* the adapter's own version */
  const char* backend_version; /* the runtime or driver underneath */
  size_t device_count;
  const parity_device_info* devices; /* the first is the default device */
} parity_adapter_info;

/* What the adapter declares it can run on one device. The harness marks a
 * case UNSUPPORTED without running it when it needs something not declared.
 * Valid for the adapter's lifetime. */
typedef struct parity_capabilities {
  /* "domain:op_type" entries ("ai.onnx:Add", "com.microsoft:Attention"), or
   * "domain:*" for every operator of a domain; the empty domain is written
   * "ai.onnx". */
  size_t operator_count;
  const char* const* operators;
  /* onnx.TensorProto.DataType values it accepts anywhere; none listed means all. */
  size_t data_type_count;
  const int32_t* data_types;
  /* Variant targets (spec/variants.md) it can select, e.g. "com.example.npu". */
  size_t variant_target_count;
  const char* const* variant_targets;
  int honours_aliasing;    /* nonzero: updates aliased inputs and outputs in place */
  int can_forbid_fallback; /* nonzero: can create a session with fallback forbidden */
} parity_capabilities;

typedef struct parity_session_options {
  const char* device;  /* one of parity_adapter_info.devices[].name */
  int allow_fallback;  /* zero: nodes the device cannot run fail session creation */
  size_t variant_target_count;
  const char* const* variant_targets; /* preferred first; empty: the adapter's own choice */
  const char* case_name; /* for the adapter's logs only; results must not depend on it */
  /* ABI version 3: the absolute path of the folder that holds the model
   * file. Tensors whose data_location is EXTERNAL name a `location` relative
   * to it. Read from it only under the containment rule of spec/abi/README.md
   * ("External data"): a relative location without '..', whose real path
   * (through symbolic links) is a regular file inside the folder, and an
   * offset and length inside that file. NULL or empty: the model has no
   * folder, and a model with external data is refused. */
  const char* model_dir;
} parity_session_options;

/* Which alternative an adapter chose for one variant entry of the model. */
typedef struct parity_variant_choice {
  const char* entry;  /* the entry's id (spec/variants.md): "e0", or "loop_0.body/e1" in a subgraph */
  const char* chosen; /* the call it substituted ("domain:op_type"), or "main" */
} parity_variant_choice;

/* Where one node runs after any substitution. */
typedef struct parity_node_placement {
  const char* node;   /* node name, or "op_type#index" when it has none */
  const char* device; /* a device name; a device other than the session's is a fallback */
} parity_node_placement;

/* Valid until the session is released. */
typedef struct parity_session_report {
  size_t variant_count;
  const parity_variant_choice* variants;
  size_t node_count;
  const parity_node_placement* nodes;
} parity_session_report;

/* One value a stateful session keeps from run to run: after each run, the
 * graph output `output` becomes the graph input `input` of the next run. */
typedef struct parity_state_binding {
  const char* output;
  const char* input;
} parity_state_binding;

/* What one create_session spent on the backend's own compile or plan step
 * (ABI version 4): creating its kernels, JIT included, or compiling its
 * graph, apart from the rest of the call (parsing, variant resolution, the
 * partition's walk). Figures of that one session; a backend that caches
 * kernels across sessions says so in its README, since a later session may
 * find them made. */
typedef struct parity_session_cost {
  double compile_ms;          /* wall milliseconds of the compile step within create_session */
  uint64_t kernels_compiled;  /* kernels made (or taken from a cache) during create_session */
  uint64_t kernels_deferred;  /* claimed nodes whose kernel waits for the first run: shapes unknown before it */
} parity_session_cost;

/* What one run copied between the host and the session's device, and the
 * device memory the adapter held (ABI version 5): the figures of the last
 * run alone, its read-back of the outputs included. A read_state's copies
 * belong to no run. A backend whose values live in host memory (a CPU
 * backend) leaves the slot NULL. */
typedef struct parity_run_cost {
  uint64_t to_device_copies; /* host to device */
  uint64_t to_device_bytes;
  uint64_t to_host_copies;   /* device to host */
  uint64_t to_host_bytes;
  uint64_t device_bytes;      /* device memory the adapter held when the run returned */
  uint64_t device_peak_bytes; /* the most it held during the run */
} parity_run_cost;

typedef struct parity_adapter_api {
  uint32_t abi_version; /* PARITY_ABI_VERSION the adapter was built with */
  uint32_t struct_size; /* sizeof(parity_adapter_api) as the adapter saw it */

  /* Status objects. The message is valid until the status is released. */
  parity_status_code (*status_code)(const parity_status* status);
  const char* (*status_message)(const parity_status* status);
  void (*release_status)(parity_status* status);

  parity_status* (*get_info)(const parity_adapter_info** info);

  /* Optional (may be NULL): without it, the adapter is assumed to try every case. */
  parity_status* (*get_capabilities)(const char* device, const parity_capabilities** capabilities);

  /* Creates a session from the bytes of an onnx.ModelProto, reading external
   * data from options->model_dir (ABI version 3). `report` may be
   * NULL; when not, *report receives where nodes run and which variants were
   * chosen, valid until release_session. */
  parity_status* (*create_session)(const void* model, size_t model_size, const parity_session_options* options,
                                   parity_session** session, const parity_session_report** report);

  /* Runs the session once. *outputs receives *output_count values, owned by
   * the session and valid until its next run or its release. */
  parity_status* (*run)(parity_session* session, const parity_value* inputs, size_t input_count,
                        const parity_value** outputs, size_t* output_count);

  void (*release_session)(parity_session* session);

  /* --- ABI version 2 (both optional: NULL, or a table too short to hold
   * them, and the host keeps the state itself, passing each kept output back
   * in as an input of the next run). */

  /* Makes the session stateful, before its first run; called at most once.
   * The first run gets every input, as before. After each run the session
   * keeps each binding's output as that binding's input; later runs leave
   * the bound inputs out (an input passed anyway replaces the kept value),
   * and `run` returns only the outputs that are not bound, in graph order,
   * so that no cache is serialized at every step. An adapter that declares
   * honours_aliasing keeps them in place where the model's annotations say
   * it may (spec/aliasing.md); the values must be the functional ones
   * either way. Fails with INVALID_ARGUMENT naming a binding whose output or
   * input the graph does not have, or an input bound twice. */
  parity_status* (*bind_state)(parity_session* session, const parity_state_binding* bindings, size_t count);

  /* The value a bound input holds now (after a run: that run's bound output),
   * serialized as run's outputs are, named after the input. Valid until the
   * next run or the release of the session. Fails with INVALID_ARGUMENT for
   * an input that is not bound, or before the first run. */
  parity_status* (*read_state)(parity_session* session, const char* input, parity_value* value);

  /* --- ABI version 4 (optional: NULL, or a table too short to hold it,
   * and no compile time is reported). */

  /* Fills *cost for the session's creation. A backend with no compile step
   * of its own (the reference) leaves the slot NULL. */
  parity_status* (*session_cost)(parity_session* session, parity_session_cost* cost);

  /* --- ABI version 5 (optional: NULL, or a table too short to hold it,
   * and no run's copies are reported). */

  /* Fills *cost for the session's last run; INVALID_ARGUMENT before its
   * first run has finished. */
  parity_status* (*run_cost)(parity_session* session, parity_run_cost* cost);
} parity_adapter_api;

/* The one exported symbol. `host_abi_version` is the host's PARITY_ABI_VERSION;
 * an adapter that cannot serve it returns NULL. */
PARITY_ADAPTER_EXPORT const parity_adapter_api* parity_adapter_query(uint32_t host_abi_version);

typedef const parity_adapter_api* (*parity_adapter_query_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* PARITY_ADAPTER_H_ */
