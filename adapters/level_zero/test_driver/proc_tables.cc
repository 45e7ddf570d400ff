// The tables of the Level Zero API this driver does not implement (images,
// modules, kernels, tools, sysman): the loader accepts a driver only if it
// exports every ze/zet/zes *ProcAddrTable function, so each is here, with
// every slot null. The implemented tables are at the end of core_api.cc.
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>

#include "adapters/level_zero/test_driver/ddi_table.h"

#define PARITY_EMPTY_TABLE(function, table_type)                                                         \
  extern "C" ZE_DLLEXPORT ze_result_t ZE_APICALL function(ze_api_version_t version, table_type* table) { \
    return parity::ze_test_driver::CheckTable(version, table);                                           \
  }

PARITY_EMPTY_TABLE(zeGetDeviceExpProcAddrTable, ze_device_exp_dditable_t)
PARITY_EMPTY_TABLE(zeGetImageProcAddrTable, ze_image_dditable_t)
PARITY_EMPTY_TABLE(zeGetImageExpProcAddrTable, ze_image_exp_dditable_t)
PARITY_EMPTY_TABLE(zeGetEventExpProcAddrTable, ze_event_exp_dditable_t)
PARITY_EMPTY_TABLE(zeGetModuleProcAddrTable, ze_module_dditable_t)
PARITY_EMPTY_TABLE(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
PARITY_EMPTY_TABLE(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
PARITY_EMPTY_TABLE(zeGetKernelExpProcAddrTable, ze_kernel_exp_dditable_t)
PARITY_EMPTY_TABLE(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
PARITY_EMPTY_TABLE(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
PARITY_EMPTY_TABLE(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
PARITY_EMPTY_TABLE(zeGetFabricVertexExpProcAddrTable, ze_fabric_vertex_exp_dditable_t)
PARITY_EMPTY_TABLE(zeGetFabricEdgeExpProcAddrTable, ze_fabric_edge_exp_dditable_t)
PARITY_EMPTY_TABLE(zetGetDeviceProcAddrTable, zet_device_dditable_t)
PARITY_EMPTY_TABLE(zetGetContextProcAddrTable, zet_context_dditable_t)
PARITY_EMPTY_TABLE(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
PARITY_EMPTY_TABLE(zetGetModuleProcAddrTable, zet_module_dditable_t)
PARITY_EMPTY_TABLE(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
PARITY_EMPTY_TABLE(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
PARITY_EMPTY_TABLE(zetGetMetricGroupExpProcAddrTable, zet_metric_group_exp_dditable_t)
PARITY_EMPTY_TABLE(zetGetMetricProcAddrTable, zet_metric_dditable_t)
PARITY_EMPTY_TABLE(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
PARITY_EMPTY_TABLE(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
PARITY_EMPTY_TABLE(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
PARITY_EMPTY_TABLE(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
PARITY_EMPTY_TABLE(zetGetDebugProcAddrTable, zet_debug_dditable_t)
PARITY_EMPTY_TABLE(zesGetDriverProcAddrTable, zes_driver_dditable_t)
PARITY_EMPTY_TABLE(zesGetDeviceProcAddrTable, zes_device_dditable_t)
PARITY_EMPTY_TABLE(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
PARITY_EMPTY_TABLE(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
PARITY_EMPTY_TABLE(zesGetPowerProcAddrTable, zes_power_dditable_t)
PARITY_EMPTY_TABLE(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
PARITY_EMPTY_TABLE(zesGetEngineProcAddrTable, zes_engine_dditable_t)
PARITY_EMPTY_TABLE(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
PARITY_EMPTY_TABLE(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
PARITY_EMPTY_TABLE(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
PARITY_EMPTY_TABLE(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
PARITY_EMPTY_TABLE(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
PARITY_EMPTY_TABLE(zesGetPsuProcAddrTable, zes_psu_dditable_t)
PARITY_EMPTY_TABLE(zesGetFanProcAddrTable, zes_fan_dditable_t)
PARITY_EMPTY_TABLE(zesGetLedProcAddrTable, zes_led_dditable_t)
PARITY_EMPTY_TABLE(zesGetRasProcAddrTable, zes_ras_dditable_t)
PARITY_EMPTY_TABLE(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)

#undef PARITY_EMPTY_TABLE
