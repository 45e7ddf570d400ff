// What every ze/zet/zes *ProcAddrTable function of the test driver checks
// first: a table to fill, of an API major version the driver knows; the
// table is cleared, so that a slot the driver does not fill is null.
#pragma once

#include <cstring>

#include <level_zero/ze_api.h>

namespace parity::ze_test_driver {

template <typename Table>
ze_result_t CheckTable(ze_api_version_t version, Table* table) {
  if (!table) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
  if (ZE_MAJOR_VERSION(version) != ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT)) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
  std::memset(table, 0, sizeof *table);
  return ZE_RESULT_SUCCESS;
}

}  // namespace parity::ze_test_driver
