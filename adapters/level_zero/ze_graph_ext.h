/* The Level Zero graph extension, as far as ONNX Parity uses it: declared
 * here from the extension's public specification (Intel's
 * level-zero-npu-extensions, "ZE_extension_graph", versions 1.0 to 1.4),
 * since no package of this machine ships its header. The names are the
 * project's own; the layout of every structure and of the function table is
 * the specification's, so that the same code can run against a production
 * NPU driver; it has run against adapters/level_zero/test_driver/ only.
 *
 * How a driver offers it: zeDriverGetExtensionProperties lists an extension
 * named "ZE_extension_graph_1_<minor>" (PZE_GRAPH_EXT_NAME_1_4 below) with its
 * version; zeDriverGetExtensionFunctionAddress with that name returns the
 * address of the driver's function table (pze_graph_ddi_1_4). Slots are
 * appended version by version; a caller reads only those of the version the
 * driver lists.
 *
 * Two formats cross pfnCreate (pze_graph_desc.format):
 * - PZE_GRAPH_FORMAT_IR ("ngraph lite" in the specification): OpenVINO IR in
 *   one buffer, laid out as OpenVINO's NPU plugin hands it to a driver:
 *     uint16 compiler major, uint16 compiler minor  (the driver's, from
 *                                                    pfnDeviceGetGraphProperties)
 *     uint64 xml size, then the IR's XML text
 *     uint64 weights size, then the IR's weights (.bin)
 *   all little-endian (PzeIrBuffer in ir_buffer.h writes and reads it).
 * - PZE_GRAPH_FORMAT_NATIVE: a precompiled blob, exactly the bytes
 *   pfnGetNativeBinary returned for a graph of the same driver.
 *
 * Build flags (pze_graph_desc.build_flags) are the specification's
 * '--config KEY="VALUE" ...' string; the adapter passes the graph's name
 * (--config NPU_GRAPH_NAME="...") so that a driver's build log and the test
 * driver's fault rules can name it. */
#ifndef PARITY_ADAPTERS_LEVEL_ZERO_ZE_GRAPH_EXT_H_
#define PARITY_ADAPTERS_LEVEL_ZERO_ZE_GRAPH_EXT_H_

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PZE_GRAPH_EXT_NAME_1_4 "ZE_extension_graph_1_4"
#define PZE_GRAPH_EXT_VERSION_1_4 ZE_MAKE_VERSION(1, 4)

typedef struct pze_graph_object* pze_graph_handle_t;
typedef struct pze_graph_query_object* pze_graph_query_handle_t;
typedef struct pze_graph_profiling_query_object* pze_graph_profiling_query_handle_t; /* unused: always null */

typedef enum pze_graph_format {
  PZE_GRAPH_FORMAT_NATIVE = 0x1, /* a blob the driver exported */
  PZE_GRAPH_FORMAT_IR = 0x2      /* OpenVINO IR in the layout above */
} pze_graph_format;

typedef enum pze_graph_structure_type {
  PZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES = 0x1,
  PZE_STRUCTURE_TYPE_GRAPH_DESC = 0x2,
  PZE_STRUCTURE_TYPE_GRAPH_PROPERTIES = 0x3,
  PZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES = 0x4
} pze_graph_structure_type;

typedef struct pze_graph_compiler_version {
  uint16_t major;
  uint16_t minor;
} pze_graph_compiler_version;

typedef struct pze_device_graph_properties {
  pze_graph_structure_type stype; /* PZE_STRUCTURE_TYPE_DEVICE_GRAPH_PROPERTIES */
  void* next;
  uint32_t extension_version;                   /* ZE_MAKE_VERSION(major, minor) */
  pze_graph_compiler_version compiler_version;
  uint32_t formats_supported;                   /* pze_graph_format bits */
  uint32_t max_ov_opset;                        /* the newest OpenVINO opset its compiler reads */
} pze_device_graph_properties;

typedef struct pze_graph_desc {
  pze_graph_structure_type stype; /* PZE_STRUCTURE_TYPE_GRAPH_DESC */
  const void* next;
  pze_graph_format format;
  size_t input_size;
  const uint8_t* input;
  const char* build_flags; /* optional */
} pze_graph_desc;

typedef struct pze_graph_properties {
  pze_graph_structure_type stype; /* PZE_STRUCTURE_TYPE_GRAPH_PROPERTIES */
  void* next;
  uint32_t argument_count; /* inputs first, then outputs */
} pze_graph_properties;

typedef enum pze_graph_argument_kind {
  PZE_GRAPH_ARGUMENT_INPUT = 0,
  PZE_GRAPH_ARGUMENT_OUTPUT = 1
} pze_graph_argument_kind;

/* Element types, with the specification's values. */
typedef enum pze_graph_precision {
  PZE_PRECISION_UNKNOWN = 0x00,
  PZE_PRECISION_FP32 = 0x01,
  PZE_PRECISION_FP16 = 0x02,
  PZE_PRECISION_UINT16 = 0x03,
  PZE_PRECISION_UINT8 = 0x04,
  PZE_PRECISION_INT32 = 0x05,
  PZE_PRECISION_INT16 = 0x06,
  PZE_PRECISION_INT8 = 0x07,
  PZE_PRECISION_BIN = 0x08,
  PZE_PRECISION_BF16 = 0x09,
  PZE_PRECISION_UINT32 = 0x0A,
  PZE_PRECISION_UINT4 = 0x0B,
  PZE_PRECISION_INT4 = 0x0C,
  PZE_PRECISION_DYNAMIC = 0x0D,
  PZE_PRECISION_BOOLEAN = 0x0E,
  PZE_PRECISION_FP64 = 0x0F,
  PZE_PRECISION_UINT64 = 0x10,
  PZE_PRECISION_INT64 = 0x11
} pze_graph_precision;

#define PZE_MAX_ARGUMENT_NAME 256
#define PZE_MAX_ARGUMENT_DIMS 5

typedef struct pze_graph_argument_properties {
  pze_graph_structure_type stype; /* PZE_STRUCTURE_TYPE_GRAPH_ARGUMENT_PROPERTIES */
  void* next;
  char name[PZE_MAX_ARGUMENT_NAME]; /* the IR's name: the parameter's or result's tensor name */
  pze_graph_argument_kind kind;
  uint32_t dims[PZE_MAX_ARGUMENT_DIMS]; /* up to 5; unused trailing dims are 1 */
  pze_graph_precision network_precision;
  uint32_t network_layout; /* the specification's layout enumeration; 0 is "any" */
  pze_graph_precision device_precision;
  uint32_t device_layout;
} pze_graph_argument_properties;

typedef ze_result_t(ZE_APICALL* pze_pfnGraphCreate)(ze_context_handle_t, ze_device_handle_t, const pze_graph_desc*,
                                                    pze_graph_handle_t*);
typedef ze_result_t(ZE_APICALL* pze_pfnGraphDestroy)(pze_graph_handle_t);
typedef ze_result_t(ZE_APICALL* pze_pfnGraphGetProperties)(pze_graph_handle_t, pze_graph_properties*);
typedef ze_result_t(ZE_APICALL* pze_pfnGraphGetArgumentProperties)(pze_graph_handle_t, uint32_t,
                                                                   pze_graph_argument_properties*);
/* The value is the address of the argument's memory (host or device memory
 * of the graph's context), which must stay valid until execution ends. */
typedef ze_result_t(ZE_APICALL* pze_pfnGraphSetArgumentValue)(pze_graph_handle_t, uint32_t, const void*);
typedef ze_result_t(ZE_APICALL* pze_pfnAppendGraphInitialize)(ze_command_list_handle_t, pze_graph_handle_t,
                                                              ze_event_handle_t, uint32_t, ze_event_handle_t*);
typedef ze_result_t(ZE_APICALL* pze_pfnAppendGraphExecute)(ze_command_list_handle_t, pze_graph_handle_t,
                                                           pze_graph_profiling_query_handle_t, ze_event_handle_t,
                                                           uint32_t, ze_event_handle_t*);
/* Size first (binary null), then the bytes into the caller's buffer. */
typedef ze_result_t(ZE_APICALL* pze_pfnGraphGetNativeBinary)(pze_graph_handle_t, size_t*, uint8_t*);
typedef ze_result_t(ZE_APICALL* pze_pfnDeviceGetGraphProperties)(ze_device_handle_t, pze_device_graph_properties*);
typedef ze_result_t(ZE_APICALL* pze_pfnGraphQueryCreate)(ze_context_handle_t, ze_device_handle_t,
                                                         const pze_graph_desc*, pze_graph_query_handle_t*);
typedef ze_result_t(ZE_APICALL* pze_pfnGraphQueryDestroy)(pze_graph_query_handle_t);
/* The names of the IR's layers the device runs, separated by ';', NUL
 * terminated: size first (layers null), then the text. */
typedef ze_result_t(ZE_APICALL* pze_pfnGraphQuerySupportedLayers)(pze_graph_query_handle_t, size_t*, char*);
/* The last creation's build log: size first (log null), then the text. */
typedef ze_result_t(ZE_APICALL* pze_pfnGraphBuildLog)(pze_graph_handle_t, uint32_t*, char*);

/* Slots of versions 1.1 and 1.2 that the project does not call
 * (argument metadata, argument properties 2 and 3). */
typedef void (*pze_pfnUnused)(void);

typedef struct pze_graph_ddi_1_4 {
  /* 1.0 */
  pze_pfnGraphCreate pfnCreate;
  pze_pfnGraphDestroy pfnDestroy;
  pze_pfnGraphGetProperties pfnGetProperties;
  pze_pfnGraphGetArgumentProperties pfnGetArgumentProperties;
  pze_pfnGraphSetArgumentValue pfnSetArgumentValue;
  pze_pfnAppendGraphInitialize pfnAppendGraphInitialize;
  pze_pfnAppendGraphExecute pfnAppendGraphExecute;
  pze_pfnGraphGetNativeBinary pfnGetNativeBinary;
  pze_pfnDeviceGetGraphProperties pfnDeviceGetGraphProperties;
  /* 1.1 */
  pze_pfnUnused pfnGraphGetArgumentMetadata;
  pze_pfnUnused pfnGetArgumentProperties2;
  /* 1.2 */
  pze_pfnUnused pfnGetArgumentProperties3;
  /* 1.3 */
  pze_pfnGraphQueryCreate pfnQueryNetworkCreate;
  pze_pfnGraphQueryDestroy pfnQueryNetworkDestroy;
  pze_pfnGraphQuerySupportedLayers pfnQueryNetworkGetSupportedLayers;
  /* 1.4 */
  pze_pfnGraphBuildLog pfnBuildLogGetString;
} pze_graph_ddi_1_4;

#ifdef __cplusplus
}
#endif

#endif /* PARITY_ADAPTERS_LEVEL_ZERO_ZE_GRAPH_EXT_H_ */
