// Registration of the elementwise family's kernels: for each operator, every
// since_version of its ONNX schema with the element types that version
// allows (onnx/defs/math, logical, nn; docs/Changelog.md). A version is
// listed even where only the types changed, so that each version accepts
// exactly its own types.
#include "reference/ops/elementwise/kernels.h"
#include "reference/ops/families.h"

namespace parity::ops {

void RegisterElementwiseOps(OpRegistry& registry) {
  using namespace types;
  using namespace elementwise;
  constexpr TypeSet F = kFloats;         // float16, float32, float64
  constexpr TypeSet FB = kFloatsBf16;    // and bfloat16
  // The integers of Add-6 to Add-13 (and PRelu-9/16), and those of Pow-12 and Equal-1.
  constexpr TypeSet kWideInts{DataType::kInt32, DataType::kInt64, DataType::kUint32, DataType::kUint64};
  constexpr TypeSet kInt32And64{DataType::kInt32, DataType::kInt64};
  auto reg = [&registry](std::string_view op, ElementwiseKernel kernel, std::initializer_list<OpVersion> versions) {
    RegisterVersions(registry, op, kernel, versions);
  };

  // Binary arithmetic (arithmetic.cc). Versions 1 and 6 broadcast only B, on request.
  for (auto [op, kernel] : {std::pair{"Add", &Add}, {"Sub", &Sub}, {"Mul", &Mul}, {"Div", &Div}}) {
    reg(op, kernel, {{1, F}, {6, F | kWideInts}, {7, F | kWideInts}, {13, FB | kWideInts}, {14, kNumericBf16}});
  }
  reg("Pow", Pow, {{1, F}, {7, F}, {12, F | kInt32And64}, {13, FB | kInt32And64},
                   {15, FB | kInt32And64}});
  reg("Mod", Mod, {{10, kNumeric}, {13, kNumericBf16}, {28, kNumericBf16}});

  // Bit operations (bitwise.cc).
  reg("BitShift", BitShift, {{11, kUnsignedInts}, {28, kInts}});
  reg("BitwiseAnd", BitwiseAnd, {{18, kInts}});
  reg("BitwiseOr", BitwiseOr, {{18, kInts}});
  reg("BitwiseXor", BitwiseXor, {{18, kInts}});
  reg("BitwiseNot", BitwiseNot, {{18, kInts}});

  // Logic, comparison, classification, selection (logic.cc).
  reg("And", And, {{1, kBool}, {7, kBool}});
  reg("Or", Or, {{1, kBool}, {7, kBool}});
  reg("Xor", Xor, {{1, kBool}, {7, kBool}});
  reg("Not", Not, {{1, kBool}});
  reg("Equal", Equal, {{1, kBool | kInt32And64}, {7, kBool | kInt32And64},
                       {11, kBool | kNumeric}, {13, kBool | kNumericBf16}, {19, kBool | kString | kNumericBf16}});
  reg("Less", Less, {{1, F}, {7, F}, {9, kNumeric}, {13, kNumericBf16}});
  reg("Greater", Greater, {{1, F}, {7, F}, {9, kNumeric}, {13, kNumericBf16}});
  reg("LessOrEqual", LessOrEqual, {{12, kNumeric}, {16, kNumericBf16}});
  reg("GreaterOrEqual", GreaterOrEqual, {{12, kNumeric}, {16, kNumericBf16}});
  reg("IsNaN", IsNaN, {{9, F}, {13, FB}, {20, FB | kFloat8}});
  reg("IsInf", IsInf, {{10, TypeSet{DataType::kFloat, DataType::kDouble}}, {20, FB | kFloat8}});
  reg("Where", Where, {{9, kNumeric | kBool | kString | kComplex}, {16, kNumericBf16 | kBool | kString | kComplex}});

  // Variadic operators and Clip (variadic.cc). Broadcasting from version 8.
  reg("Max", Max, {{1, F}, {6, F}, {8, F}, {12, kNumeric}, {13, kNumericBf16}});
  reg("Min", Min, {{1, F}, {6, F}, {8, F}, {12, kNumeric}, {13, kNumericBf16}});
  reg("Sum", Sum, {{1, F}, {6, F}, {8, F}, {13, FB}});
  reg("Mean", Mean, {{1, F}, {6, F}, {8, F}, {13, FB}});
  reg("Clip", Clip, {{1, F}, {6, F}, {11, F}, {12, kNumeric}, {13, kNumericBf16}});

  // Unary mathematical functions (math.cc).
  reg("Abs", Abs, {{1, F}, {6, kNumeric}, {13, kNumericBf16}});
  reg("Neg", Neg, {{1, F}, {6, F | kSignedInts}, {13, FB | kSignedInts}});
  reg("Sign", Sign, {{9, kNumeric}, {13, kNumericBf16}});
  for (auto [op, kernel] : {std::pair{"Ceil", &Ceil}, {"Floor", &Floor}, {"Reciprocal", &Reciprocal},
                            {"Sqrt", &Sqrt}, {"Exp", &Exp}, {"Log", &Log}, {"Tanh", &Tanh}}) {
    reg(op, kernel, {{1, F}, {6, F}, {13, FB}});
  }
  reg("Round", Round, {{11, F}, {22, FB}});
  for (auto [op, kernel] : {std::pair{"Sin", &Sin}, {"Cos", &Cos}, {"Tan", &Tan}, {"Asin", &Asin},
                            {"Acos", &Acos}, {"Atan", &Atan}}) {
    reg(op, kernel, {{7, F}, {22, FB}});
  }
  for (auto [op, kernel] : {std::pair{"Sinh", &Sinh}, {"Cosh", &Cosh}, {"Asinh", &Asinh}, {"Acosh", &Acosh},
                            {"Atanh", &Atanh}}) {
    reg(op, kernel, {{9, F}, {22, FB}});
  }
  reg("Erf", Erf, {{9, kNumeric}, {13, FB}});

  // Activations (activation.cc).
  reg("Relu", Relu, {{1, F}, {6, F}, {13, FB}, {14, FB | kSignedInts}});
  reg("LeakyRelu", LeakyRelu, {{1, F}, {6, F}, {16, FB}});
  reg("PRelu", PRelu, {{1, F}, {6, F}, {7, F}, {9, F | kWideInts}, {16, FB | kWideInts}});
  reg("Elu", Elu, {{1, F}, {6, F}, {22, FB}});
  reg("Selu", Selu, {{1, F}, {6, F}, {22, FB}});
  reg("Celu", Celu, {{12, TypeSet{DataType::kFloat}}, {28, FB}});
  reg("ThresholdedRelu", ThresholdedRelu, {{10, F}, {22, FB}});
  reg("Sigmoid", Sigmoid, {{1, F}, {6, F}, {13, FB}});
  reg("HardSigmoid", HardSigmoid, {{1, F}, {6, F}, {22, FB}});
  reg("HardSwish", HardSwish, {{14, F}, {22, FB}});
  reg("Softplus", Softplus, {{1, F}, {22, FB}});
  reg("Softsign", Softsign, {{1, F}, {22, FB}});
  reg("Mish", Mish, {{18, F}, {22, FB}});
  reg("Gelu", Gelu, {{20, FB}});
  reg("Shrink", Shrink, {{9, kNumeric}});
  reg("Swish", Swish, {{24, FB}});
}

}  // namespace parity::ops
