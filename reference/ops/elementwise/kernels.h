// The kernels of the elementwise family, one function per operator, grouped
// by the file that defines them. register.cc binds each to the versions and
// element types of its ONNX schemas.
#pragma once

#include "reference/ops/elementwise/elementwise.h"

namespace parity::ops::elementwise {

using Result = StatusOr<std::vector<Value>>;

// arithmetic.cc: binary arithmetic with numpy broadcasting.
Result Add(const KernelContext& ctx, const OpVersion& version);
Result Sub(const KernelContext& ctx, const OpVersion& version);
Result Mul(const KernelContext& ctx, const OpVersion& version);
Result Div(const KernelContext& ctx, const OpVersion& version);
Result Mod(const KernelContext& ctx, const OpVersion& version);
Result Pow(const KernelContext& ctx, const OpVersion& version);

// bitwise.cc: bit operations on integers.
Result BitShift(const KernelContext& ctx, const OpVersion& version);
Result BitwiseAnd(const KernelContext& ctx, const OpVersion& version);
Result BitwiseOr(const KernelContext& ctx, const OpVersion& version);
Result BitwiseXor(const KernelContext& ctx, const OpVersion& version);
Result BitwiseNot(const KernelContext& ctx, const OpVersion& version);

// logic.cc: boolean logic, comparisons, classification and selection.
Result And(const KernelContext& ctx, const OpVersion& version);
Result Or(const KernelContext& ctx, const OpVersion& version);
Result Xor(const KernelContext& ctx, const OpVersion& version);
Result Not(const KernelContext& ctx, const OpVersion& version);
Result Equal(const KernelContext& ctx, const OpVersion& version);
Result Less(const KernelContext& ctx, const OpVersion& version);
Result LessOrEqual(const KernelContext& ctx, const OpVersion& version);
Result Greater(const KernelContext& ctx, const OpVersion& version);
Result GreaterOrEqual(const KernelContext& ctx, const OpVersion& version);
Result IsNaN(const KernelContext& ctx, const OpVersion& version);
Result IsInf(const KernelContext& ctx, const OpVersion& version);
Result Where(const KernelContext& ctx, const OpVersion& version);

// variadic.cc: operators over any number of broadcast inputs, and Clip.
Result Max(const KernelContext& ctx, const OpVersion& version);
Result Min(const KernelContext& ctx, const OpVersion& version);
Result Sum(const KernelContext& ctx, const OpVersion& version);
Result Mean(const KernelContext& ctx, const OpVersion& version);
Result Clip(const KernelContext& ctx, const OpVersion& version);

// math.cc: unary mathematical functions.
Result Abs(const KernelContext& ctx, const OpVersion& version);
Result Neg(const KernelContext& ctx, const OpVersion& version);
Result Sign(const KernelContext& ctx, const OpVersion& version);
Result Ceil(const KernelContext& ctx, const OpVersion& version);
Result Floor(const KernelContext& ctx, const OpVersion& version);
Result Round(const KernelContext& ctx, const OpVersion& version);
Result Reciprocal(const KernelContext& ctx, const OpVersion& version);
Result Sqrt(const KernelContext& ctx, const OpVersion& version);
Result Exp(const KernelContext& ctx, const OpVersion& version);
Result Log(const KernelContext& ctx, const OpVersion& version);
Result Sin(const KernelContext& ctx, const OpVersion& version);
Result Cos(const KernelContext& ctx, const OpVersion& version);
Result Tan(const KernelContext& ctx, const OpVersion& version);
Result Asin(const KernelContext& ctx, const OpVersion& version);
Result Acos(const KernelContext& ctx, const OpVersion& version);
Result Atan(const KernelContext& ctx, const OpVersion& version);
Result Sinh(const KernelContext& ctx, const OpVersion& version);
Result Cosh(const KernelContext& ctx, const OpVersion& version);
Result Tanh(const KernelContext& ctx, const OpVersion& version);
Result Asinh(const KernelContext& ctx, const OpVersion& version);
Result Acosh(const KernelContext& ctx, const OpVersion& version);
Result Atanh(const KernelContext& ctx, const OpVersion& version);
Result Erf(const KernelContext& ctx, const OpVersion& version);

// activation.cc: activation functions.
Result Relu(const KernelContext& ctx, const OpVersion& version);
Result LeakyRelu(const KernelContext& ctx, const OpVersion& version);
Result PRelu(const KernelContext& ctx, const OpVersion& version);
Result Elu(const KernelContext& ctx, const OpVersion& version);
Result Selu(const KernelContext& ctx, const OpVersion& version);
Result Celu(const KernelContext& ctx, const OpVersion& version);
Result ThresholdedRelu(const KernelContext& ctx, const OpVersion& version);
Result Sigmoid(const KernelContext& ctx, const OpVersion& version);
Result HardSigmoid(const KernelContext& ctx, const OpVersion& version);
Result HardSwish(const KernelContext& ctx, const OpVersion& version);
Result Softplus(const KernelContext& ctx, const OpVersion& version);
Result Softsign(const KernelContext& ctx, const OpVersion& version);
Result Mish(const KernelContext& ctx, const OpVersion& version);
Result Gelu(const KernelContext& ctx, const OpVersion& version);
Result Shrink(const KernelContext& ctx, const OpVersion& version);
Result Swish(const KernelContext& ctx, const OpVersion& version);

}  // namespace parity::ops::elementwise
