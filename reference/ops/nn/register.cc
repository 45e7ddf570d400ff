// Registration of the nn family's kernels, at every since_version of each
// operator (the kernels read attributes that later versions added with their
// defaults, so one kernel serves versions whose semantics agree).
#include "reference/ops/families.h"
#include "reference/ops/nn/nn.h"

namespace parity::ops {

namespace {

void RegisterAt(OpRegistry& registry, const char* op, std::initializer_list<int> versions, Kernel kernel) {
  for (int v : versions) registry.Register(op, v, kernel);
}

}  // namespace

void RegisterNnOps(OpRegistry& registry) {
  RegisterAt(registry, "Conv", {1, 11, 22}, nn::Conv);
  RegisterAt(registry, "ConvInteger", {10}, nn::ConvInteger);
  RegisterAt(registry, "QLinearConv", {10}, nn::QLinearConv);
  RegisterAt(registry, "ConvTranspose", {1, 11, 22}, nn::ConvTranspose);
  RegisterAt(registry, "AveragePool", {1, 7, 10, 11, 19, 22}, nn::AveragePool);
  RegisterAt(registry, "MaxPool", {1, 8, 10, 11, 12, 22}, nn::MaxPool);
  RegisterAt(registry, "LpPool", {1, 2, 11, 18, 22}, nn::LpPool);
  RegisterAt(registry, "GlobalAveragePool", {1, 22}, nn::GlobalAveragePool);
  RegisterAt(registry, "GlobalMaxPool", {1, 22}, nn::GlobalMaxPool);
  RegisterAt(registry, "GlobalLpPool", {1, 2, 22}, nn::GlobalLpPool);
  RegisterAt(registry, "MaxUnpool", {9, 11, 22}, nn::MaxUnpool);
  RegisterAt(registry, "QuantizeLinear", {10, 13, 19, 21, 23, 24, 25, 28}, nn::QuantizeLinear);
  RegisterAt(registry, "DequantizeLinear", {10, 13, 19, 21, 23, 24, 25, 28}, nn::DequantizeLinear);
  RegisterAt(registry, "DynamicQuantizeLinear", {11}, nn::DynamicQuantizeLinear);
  RegisterAt(registry, "MatMulInteger", {10}, nn::MatMulInteger);
  RegisterAt(registry, "QLinearMatMul", {10, 21}, nn::QLinearMatMul);
  RegisterAt(registry, "GridSample", {16, 20, 22}, nn::GridSample);
  RegisterAt(registry, "AffineGrid", {20}, nn::AffineGrid);
  RegisterAt(registry, "Col2Im", {18}, nn::Col2Im);
  RegisterAt(registry, "DeformConv", {19, 22}, nn::DeformConv);
  RegisterAt(registry, "RoiAlign", {10, 16, 22}, nn::RoiAlign);
  RegisterAt(registry, "MaxRoiPool", {1, 22}, nn::MaxRoiPool);
  RegisterAt(registry, "NonMaxSuppression", {10, 11}, nn::NonMaxSuppression);
}

}  // namespace parity::ops
