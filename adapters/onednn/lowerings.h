// The oneDNN adapter's lowering table, one Add*Lowerings per operator family
// (each in its own file of adapters/onednn/), and the whole table built once.
#pragma once

#include "adapters/device/lowering.h"

namespace parity::adapters::onednn {

void AddMatMulLowerings(Lowering& lowering);  // matmul.cc: MatMul, Gemm

// Every family's entries; built on first use.
const Lowering& OneDnnLowering();

}  // namespace parity::adapters::onednn
