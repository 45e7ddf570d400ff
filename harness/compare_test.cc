// Tests of the tolerance policy (spec/tolerance.json) and of output comparison.
#include "harness/compare.h"

#include <cmath>
#include <cstring>
#include <limits>

#include <gtest/gtest.h>

#include "reference/core/float_formats.h"

namespace parity {
namespace {

Tensor Floats(Shape shape, const std::vector<double>& values, DataType type = DataType::kFloat) {
  StatusOr<Tensor> t = Tensor::FromDoubles(type, std::move(shape), values);
  EXPECT_TRUE(t.ok()) << t.status().ToString();
  return std::move(t).value();
}

Value FloatValue(Shape shape, const std::vector<double>& values, DataType type = DataType::kFloat) {
  return Value::FromTensor(Floats(std::move(shape), values, type));
}

uint32_t Bits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  return bits;
}

Tolerance Exact() { return Tolerance{}; }

Tolerance WithUlp(int64_t ulp) {
  Tolerance tol;
  tol.ulp = ulp;
  return tol;
}

// A small policy whose numbers the tests can predict.
constexpr const char* kPolicy = R"({
  "schema_version": 1,
  "unit_roundoff": {
    "float64": {"value": 1.1102230246251565e-16, "reason": "2^-53"},
    "float32": {"value": 5.960464477539063e-08, "reason": "2^-24"},
    "float16": {"value": 0.00048828125, "reason": "2^-11"},
    "bfloat16": {"value": 0.00390625, "reason": "2^-8"},
    "float8e4m3fn": {"value": 0.0625, "reason": "r"}, "float8e4m3fnuz": {"value": 0.0625, "reason": "r"},
    "float8e5m2": {"value": 0.125, "reason": "r"}, "float8e5m2fnuz": {"value": 0.125, "reason": "r"},
    "float8e8m0": {"value": 0.5, "reason": "r"}, "float4e2m1": {"value": 0.25, "reason": "r"},
    "float6e2m3": {"value": 0.0625, "reason": "r"}, "float6e3m2": {"value": 0.125, "reason": "r"}
  },
  "special_values": {
    "nan": {"rule": "NaN matches NaN", "reason": "r"},
    "inf": {"rule": "inf matches itself", "reason": "r"},
    "zero": {"rule": "-0 == +0", "signed_zero": false, "reason": "r"}
  },
  "mistrust": {"min_elements": 16, "zero_fraction": 0.9, "reason": "zero trust"},
  "budget": {"factor": 2, "mistrust_ratio": 1, "reason": "twice the conventional run"},
  "onnx_runner": {"rtol": 1e-3, "atol": 1e-7, "bfloat16_rtol": 0.015625, "reason": "the backend-test runner's defaults"},
  "default_family": {"family": "exact", "reason": "unlisted ops compare exactly"},
  "families": {
    "exact": {"reason": "no rounding", "default": {"ulp": 0, "atol": 0, "rtol": 0}},
    "transcendental": {"reason": "libm", "default": {"ulp": 4, "atol": {"u": 8}, "rtol": 0},
                       "dtypes": {"float16": {"ulp": 1, "reason": "computed in float32"}}},
    "matmul": {"reason": "dot products", "default": {"ulp": 1, "atol": {"u_k": 2}, "rtol": {"u": 2, "u_sqrt_k": 2}}},
    "reduction": {"reason": "sums", "default": {"ulp": 1, "atol": {"base": 1e-9, "u_n": 1}, "rtol": {"u_sqrt_n": 3}}}
  },
  "ops": {"Exp": "transcendental", "MatMul": "matmul", "ReduceSum": "reduction", "Identity": "exact"},
  "rules": [
    {"match": {"ops": ["Exp"], "dtypes": ["float64"]}, "ulp": 2, "reason": "double libm is better"},
    {"match": {"families": ["matmul"], "dtypes": ["float16"]}, "accumulation_type": "float32",
     "reason": "accumulates in float32"}
  ],
  "adapters": {
    "fastgpu": {"reason": "approximate intrinsics",
                "rules": [{"match": {"families": ["transcendental"]}, "ulp": 16, "reason": "__expf is 2 ulp plus range reduction"}]}
  }
})";

TolerancePolicy TestPolicy() {
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Parse(kPolicy);
  EXPECT_TRUE(policy.ok()) << policy.status().ToString();
  return std::move(policy).value();
}

// Parses kPolicy with `from` replaced by `to` and returns the error message.
std::string ParseErrorAfterEdit(const std::string& from, const std::string& to) {
  std::string text = kPolicy;
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  text.replace(at, from.size(), to);
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Parse(text);
  EXPECT_FALSE(policy.ok()) << "accepted after replacing " << from << " with " << to;
  return policy.ok() ? "" : policy.status().message();
}

// --- Element rules.

TEST(CompareTest, IdenticalTensorsMatch) {
  const Value v = FloatValue({2, 2}, {1.0, -2.5, 0.0, 3e-20});
  const OutputComparison c = CompareValues(v, FloatValue({2, 2}, {1.0, -2.5, 0.0, 3e-20}), Exact());
  EXPECT_EQ(c.verdict, CompareVerdict::kMatch) << c.message;
  EXPECT_EQ(c.stats.elements, 4);
  EXPECT_EQ(c.stats.mismatches, 0);
  EXPECT_EQ(c.stats.first_mismatch_index, -1);
  EXPECT_EQ(c.stats.max_abs_error, 0.0);
  EXPECT_TRUE(c.message.empty());
}

TEST(CompareTest, OneUlpOffFailsAtZeroUlpAndPassesAtOne) {
  const float next = std::nextafter(1.0f, 2.0f);
  const Value expected = FloatValue({1}, {1.0});
  const Value actual = FloatValue({1}, {next});
  const OutputComparison strict = CompareValues(expected, actual, WithUlp(0));
  EXPECT_EQ(strict.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(strict.stats.max_ulp_error, 1.0);
  EXPECT_EQ(strict.stats.mismatches, 1);
  EXPECT_EQ(CompareValues(expected, actual, WithUlp(1)).verdict, CompareVerdict::kMatch);
  // Two steps away needs ulp 2.
  const Value two = FloatValue({1}, {std::nextafter(next, 2.0f)});
  EXPECT_EQ(CompareValues(expected, two, WithUlp(1)).verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(CompareValues(expected, two, WithUlp(2)).verdict, CompareVerdict::kMatch);
}

TEST(CompareTest, UlpDistanceCrossesZeroInEveryLattice) {
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(UlpDistance(DataType::kFloat, Bits(-0.0f), Bits(0.0f)), 0u);
  EXPECT_EQ(UlpDistance(DataType::kFloat, Bits(-0.0f), Bits(tiny)), 1u);
  EXPECT_EQ(UlpDistance(DataType::kFloat, Bits(-tiny), Bits(tiny)), 2u);
  EXPECT_EQ(UlpDistance(DataType::kFloat, Bits(-1.0f), Bits(1.0f)), 2u * Bits(1.0f));
  EXPECT_EQ(UlpDistance(DataType::kFloat, Bits(std::numeric_limits<float>::max()),
                        Bits(std::numeric_limits<float>::infinity())), 1u);
  uint64_t d_minus, d_plus;
  const double d_tiny = std::numeric_limits<double>::denorm_min();
  const double minus = -d_tiny;
  std::memcpy(&d_minus, &minus, 8);
  std::memcpy(&d_plus, &d_tiny, 8);
  EXPECT_EQ(UlpDistance(DataType::kDouble, d_minus, d_plus), 2u);
  // Small floats are ordered through their own encodings.
  for (DataType type : {DataType::kFloat16, DataType::kBfloat16, DataType::kFloat8E4M3FN, DataType::kFloat8E5M2,
                        DataType::kFloat4E2M1, DataType::kFloat6E2M3}) {
    const uint32_t one = EncodeSmallFloat(type, 1.0), minus_one = EncodeSmallFloat(type, -1.0);
    const uint32_t zero = EncodeSmallFloat(type, 0.0), minus_zero = EncodeSmallFloat(type, -0.0);
    EXPECT_EQ(UlpDistance(type, minus_zero, zero), 0u) << DataTypeName(type);
    EXPECT_EQ(UlpDistance(type, minus_one, one), 2 * UlpDistance(type, zero, one)) << DataTypeName(type);
    EXPECT_EQ(UlpDistance(type, minus_zero, zero + 1), 1u) << DataTypeName(type);  // smallest subnormal
    // The next value up from 1 decodes to more than 1 and is 1 step away.
    EXPECT_GT(DecodeSmallFloat(type, one + 1), 1.0) << DataTypeName(type);
    EXPECT_EQ(UlpDistance(type, one, one + 1), 1u) << DataTypeName(type);
  }
  // float8e8m0 has no sign: its encoding is its order.
  EXPECT_EQ(UlpDistance(DataType::kFloat8E8M0, EncodeSmallFloat(DataType::kFloat8E8M0, 1.0),
                        EncodeSmallFloat(DataType::kFloat8E8M0, 8.0)), 3u);
}

TEST(CompareTest, Float16OneUlpUsesItsOwnLattice) {
  // 1 + 2^-10 is the float16 neighbour of 1, far more than 1 float32 ULP away.
  const Value expected = FloatValue({1}, {1.0}, DataType::kFloat16);
  const Value actual = FloatValue({1}, {1.0 + std::ldexp(1.0, -10)}, DataType::kFloat16);
  const OutputComparison c = CompareValues(expected, actual, WithUlp(0));
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.max_ulp_error, 1.0);
  EXPECT_EQ(c.stats.first_mismatch, "at [0] (flat 0): expected 1 (0x3c00) got 1.0009765625 (0x3c01)");
  EXPECT_EQ(CompareValues(expected, actual, WithUlp(1)).verdict, CompareVerdict::kMatch);
}

TEST(CompareTest, AtolAndRtolBoundariesAreInclusive) {
  const Value expected = FloatValue({1}, {128.0});
  const Value actual = FloatValue({1}, {128.5});
  Tolerance tol;
  tol.atol = 0.5;
  EXPECT_EQ(CompareValues(expected, actual, tol).verdict, CompareVerdict::kMatch);
  tol.atol = 0.25;
  EXPECT_EQ(CompareValues(expected, actual, tol).verdict, CompareVerdict::kMismatch);
  tol.atol = 0;
  tol.rtol = std::ldexp(1.0, -8);  // 128 * 2^-8 = 0.5 exactly
  EXPECT_EQ(CompareValues(expected, actual, tol).verdict, CompareVerdict::kMatch);
  tol.rtol = std::ldexp(1.0, -9);
  const OutputComparison c = CompareValues(expected, actual, tol);
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.max_abs_error, 0.5);
  EXPECT_EQ(c.stats.max_rel_error, 0.5 / 128);
  tol.atol = 0.25;  // atol and rtol add up: 0.25 + 0.25
  EXPECT_EQ(CompareValues(expected, actual, tol).verdict, CompareVerdict::kMatch);
}

TEST(CompareTest, NanMatchesOnlyNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // A NaN with another payload and sign still matches.
  Tensor other_nan = Floats({1}, {0.0});
  const uint32_t payload = 0xffc00123u;
  std::memcpy(other_nan.mutable_data<float>(), &payload, 4);
  EXPECT_EQ(CompareValues(FloatValue({1}, {nan}), Value::FromTensor(other_nan), Exact()).verdict,
            CompareVerdict::kMatch);
  Tolerance loose;
  loose.atol = 1e30;
  loose.ulp = 1000000;
  const OutputComparison got_number = CompareValues(FloatValue({1}, {nan}), FloatValue({1}, {1.0}), loose);
  EXPECT_EQ(got_number.verdict, CompareVerdict::kMismatch);
  EXPECT_TRUE(std::isinf(got_number.stats.max_abs_error));
  EXPECT_EQ(CompareValues(FloatValue({1}, {1.0}), FloatValue({1}, {nan}), loose).verdict,
            CompareVerdict::kMismatch);
}

TEST(CompareTest, InfinityMatchesOnlyItselfWithSameSign) {
  const double inf = std::numeric_limits<double>::infinity();
  Tolerance loose;
  loose.atol = 1e300;
  loose.ulp = 1000;
  EXPECT_EQ(CompareValues(FloatValue({1}, {inf}), FloatValue({1}, {inf}), Exact()).verdict, CompareVerdict::kMatch);
  EXPECT_EQ(CompareValues(FloatValue({1}, {-inf}), FloatValue({1}, {-inf}), Exact()).verdict, CompareVerdict::kMatch);
  EXPECT_EQ(CompareValues(FloatValue({1}, {inf}), FloatValue({1}, {-inf}), loose).verdict, CompareVerdict::kMismatch);
  // The largest float is 1 ULP below inf, but overflow is not a rounding difference.
  const double max = std::numeric_limits<float>::max();
  EXPECT_EQ(CompareValues(FloatValue({1}, {inf}), FloatValue({1}, {max}), loose).verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(CompareValues(FloatValue({1}, {max}), FloatValue({1}, {inf}), loose).verdict, CompareVerdict::kMismatch);
}

TEST(CompareTest, SignedZeroOnlyWhenAsked) {
  const Value plus = FloatValue({1}, {0.0});
  const Value minus = FloatValue({1}, {-0.0});
  EXPECT_EQ(CompareValues(plus, minus, Exact()).verdict, CompareVerdict::kMatch);
  Tolerance tol;
  tol.signed_zero = true;
  tol.ulp = 5;  // signed zeros are told apart whatever the ULP tolerance
  const OutputComparison c = CompareValues(plus, minus, tol);
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.first_mismatch, "at [0] (flat 0): expected 0 (0x00000000) got -0 (0x80000000)");
  EXPECT_EQ(CompareValues(minus, minus, tol).verdict, CompareVerdict::kMatch);
}

TEST(CompareTest, FirstMismatchNamesIndexAndBitPatterns) {
  const Value expected = FloatValue({2, 3}, {0, 1, 2, 3, 4, 1.5});
  const Value actual = FloatValue({2, 3}, {0, 1, 2, 3, 4, 1.25});
  const OutputComparison c = CompareValues(expected, actual, Exact());
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.first_mismatch_index, 5);
  EXPECT_EQ(c.stats.first_mismatch, "at [1,2] (flat 5): expected 1.5 (0x3fc00000) got 1.25 (0x3fa00000)");
  EXPECT_NE(c.message.find("1 of 6 elements differ"), std::string::npos) << c.message;
}

TEST(CompareTest, ShapeAndTypeMustMatchExactly) {
  const OutputComparison shape = CompareValues(FloatValue({2, 3}, std::vector<double>(6, 1.0)),
                                               FloatValue({3, 2}, std::vector<double>(6, 1.0)), Exact());
  EXPECT_EQ(shape.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(shape.message, "shape mismatch: expected float32[2,3], got float32[3,2]");
  const OutputComparison type = CompareValues(FloatValue({2}, {1, 2}), FloatValue({2}, {1, 2}, DataType::kDouble),
                                              Exact());
  EXPECT_EQ(type.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(type.message, "element type mismatch: expected float32[2], got float64[2]");
}

TEST(CompareTest, IntegersAndBoolsCompareExactly) {
  const Value expected = Value::FromTensor(Tensor::FromInt64s({3}, {1, -5, std::numeric_limits<int64_t>::max()}));
  const Value actual = Value::FromTensor(Tensor::FromInt64s({3}, {1, -4, std::numeric_limits<int64_t>::min()}));
  Tolerance tol;
  tol.rtol = 0.5;  // relative and ULP tolerances mean nothing for integers
  tol.ulp = 10;
  const OutputComparison c = CompareValues(expected, actual, tol);
  EXPECT_EQ(c.stats.mismatches, 2);
  EXPECT_EQ(c.stats.first_mismatch, "at [1] (flat 1): expected -5 got -4");
  tol.atol = 1;  // an explicit integer atol admits the off-by-one, not the wrap-around
  EXPECT_EQ(CompareValues(expected, actual, tol).stats.mismatches, 1);

  const Value t = FloatValue({2}, {1, 0}, DataType::kBool);
  const OutputComparison b = CompareValues(t, FloatValue({2}, {1, 1}, DataType::kBool), tol);
  EXPECT_EQ(b.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(b.stats.first_mismatch, "at [1] (flat 1): expected false got true");
}

TEST(CompareTest, StringsCompareExactly) {
  StatusOr<Tensor> e = Tensor::Create(DataType::kString, {2});
  StatusOr<Tensor> a = Tensor::Create(DataType::kString, {2});
  ASSERT_TRUE(e.ok() && a.ok());
  e->mutable_strings() = {"abc", "x"};
  a->mutable_strings() = {"abc", "X"};
  const OutputComparison c = CompareValues(Value::FromTensor(*e), Value::FromTensor(*a), Exact());
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.first_mismatch, "at [1] (flat 1): expected \"x\" got \"X\"");
}

TEST(CompareTest, ComplexComparesEachComponent) {
  StatusOr<Tensor> e = Tensor::Create(DataType::kComplex64, {1});
  StatusOr<Tensor> a = Tensor::Create(DataType::kComplex64, {1});
  ASSERT_TRUE(e.ok() && a.ok());
  e->mutable_data<std::complex<float>>()[0] = {1.0f, 2.0f};
  a->mutable_data<std::complex<float>>()[0] = {1.0f, std::nextafter(2.0f, 3.0f)};
  const OutputComparison c = CompareValues(Value::FromTensor(*e), Value::FromTensor(*a), WithUlp(0));
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.max_ulp_error, 1.0);
  EXPECT_EQ(CompareValues(Value::FromTensor(*e), Value::FromTensor(*a), WithUlp(1)).verdict, CompareVerdict::kMatch);
}

// --- MISTRUSTED.

TEST(CompareTest, DegenerateOutputIsMistrusted) {
  const std::vector<double> zeros(32, 0.0);
  OutputComparison c = CompareValues(FloatValue({32}, zeros), FloatValue({32}, zeros), Exact());
  EXPECT_EQ(c.verdict, CompareVerdict::kMistrusted);
  EXPECT_NE(c.message.find("degenerate"), std::string::npos) << c.message;

  const std::vector<double> constant(32, 0.75);
  EXPECT_EQ(CompareValues(FloatValue({32}, constant), FloatValue({32}, constant), Exact()).verdict,
            CompareVerdict::kMistrusted);

  std::vector<double> mostly_zero(32, 0.0);  // 29 of 32 zeros: 90.6% > 90%
  mostly_zero[0] = mostly_zero[1] = mostly_zero[2] = 1.0;
  EXPECT_EQ(CompareValues(FloatValue({32}, mostly_zero), FloatValue({32}, mostly_zero), Exact()).verdict,
            CompareVerdict::kMistrusted);
  mostly_zero[3] = 1.0;  // 28 of 32: 87.5%
  EXPECT_EQ(CompareValues(FloatValue({32}, mostly_zero), FloatValue({32}, mostly_zero), Exact()).verdict,
            CompareVerdict::kMatch);

  const std::vector<double> few(15, 0.0);  // below min_elements
  EXPECT_EQ(CompareValues(FloatValue({15}, few), FloatValue({15}, few), Exact()).verdict, CompareVerdict::kMatch);

  Tolerance off;
  off.mistrust.enabled = false;
  EXPECT_EQ(CompareValues(FloatValue({32}, zeros), FloatValue({32}, zeros), off).verdict, CompareVerdict::kMatch);

  // A degenerate output that does not even match is a plain mismatch.
  std::vector<double> wrong = zeros;
  wrong[7] = 1;
  EXPECT_EQ(CompareValues(FloatValue({32}, zeros), FloatValue({32}, wrong), Exact()).verdict,
            CompareVerdict::kMismatch);
}

// --- Sequences and optionals.

TEST(CompareTest, SequencesMustHaveEqualLength) {
  const Value one = Value::FromSequence({FloatValue({2}, {1, 2})});
  const Value two = Value::FromSequence({FloatValue({2}, {1, 2}), FloatValue({2}, {3, 4})});
  const OutputComparison c = CompareValues(two, one, Exact());
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.message, "sequence length mismatch: expected 2 elements, got 1");
}

TEST(CompareTest, SequenceMismatchIsLocatedAcrossElements) {
  const Value expected = Value::FromSequence({FloatValue({2}, {1, 2}), FloatValue({3}, {3, 4, 5})});
  const Value actual = Value::FromSequence({FloatValue({2}, {1, 2}), FloatValue({3}, {3, 4, 6})});
  const OutputComparison c = CompareValues(expected, actual, Exact());
  EXPECT_EQ(c.verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(c.stats.elements, 5);
  EXPECT_EQ(c.stats.first_mismatch_index, 4);
  EXPECT_EQ(c.stats.first_mismatch.rfind("sequence element 1: at [2] (flat 2)", 0), 0u) << c.stats.first_mismatch;
  EXPECT_EQ(c.message.rfind("sequence element 1: ", 0), 0u) << c.message;
}

TEST(CompareTest, OptionalsMustAgreeOnPresence) {
  EXPECT_EQ(CompareValues(Value::NoneOptional(), Value::NoneOptional(), Exact()).verdict, CompareVerdict::kMatch);
  const Value some = Value::SomeOptional(FloatValue({1}, {1}));
  EXPECT_EQ(CompareValues(Value::NoneOptional(), some, Exact()).verdict, CompareVerdict::kMismatch);
  EXPECT_EQ(CompareValues(some, some, Exact()).verdict, CompareVerdict::kMatch);
  EXPECT_EQ(CompareValues(some, FloatValue({1}, {1}), Exact()).verdict, CompareVerdict::kMismatch);
}

TEST(CompareTest, StatsToJsonWritesInfinityAsText) {
  ErrorStats stats;
  stats.max_abs_error = std::numeric_limits<double>::infinity();
  stats.max_rel_error = 0.5;
  stats.elements = 3;
  const nlohmann::json j = ToJson(stats);
  EXPECT_EQ(j["max_abs_error"], "inf");
  EXPECT_EQ(j["max_rel_error"], 0.5);
  EXPECT_EQ(j["elements"], 3);
  EXPECT_TRUE(j["first_mismatch"].is_null());
  EXPECT_EQ(j["first_mismatch_index"], -1);
}

// --- The policy.

TEST(TolerancePolicyTest, FamilyDefaultsDtypeEntriesRulesAndAdapters) {
  const TolerancePolicy policy = TestPolicy();
  const Tolerance exp32 = policy.For("Exp", DataType::kFloat, {});
  EXPECT_EQ(exp32.ulp, 4);
  EXPECT_DOUBLE_EQ(exp32.atol, 8 * 5.960464477539063e-08);
  EXPECT_NE(exp32.reason.find("libm"), std::string::npos) << exp32.reason;
  EXPECT_EQ(policy.For("Exp", DataType::kFloat16, {}).ulp, 1);   // dtype entry
  EXPECT_EQ(policy.For("Exp", DataType::kDouble, {}).ulp, 2);    // rule
  const Tolerance gpu = policy.For("Exp", DataType::kFloat, {}, "fastgpu");
  EXPECT_EQ(gpu.ulp, 16);
  EXPECT_NE(gpu.reason.find("adapter fastgpu: __expf"), std::string::npos) << gpu.reason;
  EXPECT_EQ(policy.For("Exp", DataType::kFloat, {}, "other").ulp, 4);
  // Unlisted operators fall to the default family; integers are always exact.
  EXPECT_EQ(policy.FamilyOf("NoSuchOp"), "exact");
  EXPECT_FALSE(policy.IsListed("NoSuchOp"));
  EXPECT_EQ(policy.For("NoSuchOp", DataType::kFloat, {}).ulp, 0);
  const Tolerance ints = policy.For("Exp", DataType::kInt32, {}, "fastgpu");
  EXPECT_EQ(ints.ulp, 0);
  EXPECT_EQ(ints.atol, 0);
  EXPECT_EQ(ints.mistrust.min_elements, 16);
}

TEST(TolerancePolicyTest, MatmulFormulaScalesWithInnerDimension) {
  const TolerancePolicy policy = TestPolicy();
  const double u = 5.960464477539063e-08;
  ShapeFacts facts;
  const Tolerance k1 = policy.For("MatMul", DataType::kFloat, facts);
  EXPECT_DOUBLE_EQ(k1.rtol, u * (2 + 2 * 1.0));
  EXPECT_DOUBLE_EQ(k1.atol, u * 2);
  facts.inner_dim = 100;
  const Tolerance k100 = policy.For("MatMul", DataType::kFloat, facts);
  EXPECT_DOUBLE_EQ(k100.rtol, u * (2 + 2 * 10.0));
  EXPECT_DOUBLE_EQ(k100.atol, u * 200);
  // The same formula in bfloat16 scales with bfloat16's unit roundoff, and
  // in float16 with that of float32, its accumulation type.
  EXPECT_DOUBLE_EQ(policy.For("MatMul", DataType::kBfloat16, facts).atol, 0.00390625 * 200);
  EXPECT_DOUBLE_EQ(policy.For("MatMul", DataType::kFloat16, facts).atol, u * 200);
  // complex64 uses float32's.
  EXPECT_DOUBLE_EQ(policy.For("MatMul", DataType::kComplex64, facts).atol, u * 200);
  facts.reduced_length = 16;
  const Tolerance sum = policy.For("ReduceSum", DataType::kFloat, facts);
  EXPECT_DOUBLE_EQ(sum.atol, 1e-9 + u * 16);
  EXPECT_DOUBLE_EQ(sum.rtol, u * 3 * 4);
}

TEST(TolerancePolicyTest, CaseOverrideNeedsReasonAndNumbers) {
  const Tolerance base = TestPolicy().For("Exp", DataType::kFloat, {});
  StatusOr<Tolerance> no_reason = TolerancePolicy::ApplyOverride(base, nlohmann::json{{"ulp", 8}});
  ASSERT_FALSE(no_reason.ok());
  EXPECT_NE(no_reason.status().message().find("reason"), std::string::npos) << no_reason.status().message();

  StatusOr<Tolerance> empty_reason =
      TolerancePolicy::ApplyOverride(base, nlohmann::json{{"ulp", 8}, {"reason", ""}});
  EXPECT_FALSE(empty_reason.ok());

  StatusOr<Tolerance> ok = TolerancePolicy::ApplyOverride(
      base, nlohmann::json::parse(R"({"ulp": 8, "atol": 1e-3, "signed_zero": true, "mistrust": false,
                                      "reason": "inputs near the pole of tan"})"));
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->ulp, 8);
  EXPECT_EQ(ok->atol, 1e-3);
  EXPECT_EQ(ok->rtol, base.rtol);  // unset keys keep the policy's value
  EXPECT_TRUE(ok->signed_zero);
  EXPECT_FALSE(ok->mistrust.enabled);
  EXPECT_EQ(ok->reason, "case override: inputs near the pole of tan");

  StatusOr<Tolerance> formula = TolerancePolicy::ApplyOverride(
      base, nlohmann::json::parse(R"({"atol": {"u_k": 2}, "reason": "r"})"));
  EXPECT_FALSE(formula.ok());

  StatusOr<Tolerance> accumulation = TolerancePolicy::ApplyOverride(
      base, nlohmann::json::parse(R"({"accumulation_type": "float32", "reason": "r"})"));
  EXPECT_FALSE(accumulation.ok());

  StatusOr<Tolerance> typo =
      TolerancePolicy::ApplyOverride(base, nlohmann::json::parse(R"({"ulps": 2, "reason": "r"})"));
  ASSERT_FALSE(typo.ok());
  EXPECT_NE(typo.status().message().find("\"ulps\""), std::string::npos) << typo.status().message();

  StatusOr<Tolerance> negative =
      TolerancePolicy::ApplyOverride(base, nlohmann::json::parse(R"({"rtol": -1, "reason": "r"})"));
  EXPECT_FALSE(negative.ok());
}

TEST(TolerancePolicyTest, MalformedPolicyIsRejectedNamingTheKey) {
  std::string message = ParseErrorAfterEdit(R"("u_sqrt_k": 2)", R"("u_sqrtk": 2)");
  EXPECT_NE(message.find("families.matmul.default.rtol.u_sqrtk"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("float16": {"value": 0.00048828125, "reason": "2^-11"},)", "");
  EXPECT_NE(message.find("float16"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("MatMul": "matmul")", R"("MatMul": "gemm")");
  EXPECT_NE(message.find("ops.MatMul"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("reason": "__expf is 2 ulp plus range reduction")", R"("note": "x")");
  EXPECT_NE(message.find("adapters.fastgpu.rules[0]"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("ulp": 1, "reason": "computed in float32")", R"("ulp": 1.5, "reason": "x")");
  EXPECT_NE(message.find("families.transcendental.dtypes.float16.ulp"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("dtypes": ["float64"])", R"("dtypes": ["int32"])");
  EXPECT_NE(message.find("int32"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"(, "reason": "__expf is 2 ulp plus range reduction")", "");
  EXPECT_NE(message.find("adapters.fastgpu.rules[0]: missing required key \"reason\""), std::string::npos)
      << message;

  message = ParseErrorAfterEdit(R"("accumulation_type": "float32")", R"("accumulation_type": "float128")");
  EXPECT_NE(message.find("rules[1].accumulation_type"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("schema_version": 1)", R"("schema_version": 2)");
  EXPECT_NE(message.find("schema_version"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("default": {"ulp": 0, "atol": 0, "rtol": 0})", R"("default": {"ulp": 0})");
  EXPECT_NE(message.find("families.exact.default"), std::string::npos) << message;

  message = ParseErrorAfterEdit(R"("zero_fraction": 0.9)", R"("zero_fraction": 1.5)");
  EXPECT_NE(message.find("mistrust.zero_fraction"), std::string::npos) << message;

  StatusOr<TolerancePolicy> not_json = TolerancePolicy::Parse("{\"schema_version\": 1,");
  ASSERT_FALSE(not_json.ok());
  EXPECT_NE(not_json.status().message().find("not valid JSON"), std::string::npos);

  StatusOr<TolerancePolicy> missing = TolerancePolicy::Load("/nonexistent/tolerance.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kIoError);
}

#ifdef PARITY_SOURCE_DIR
TEST(TolerancePolicyTest, ShippedPolicyLoadsAndIsStrictWhereItSaysSo) {
  StatusOr<TolerancePolicy> policy = TolerancePolicy::Load(PARITY_SOURCE_DIR "/spec/tolerance.json");
  ASSERT_TRUE(policy.ok()) << policy.status().ToString();
  for (const char* op : {"Reshape", "Where", "Cast", "Neg", "Abs", "Relu", "Transpose", "Gather"}) {
    const Tolerance tol = policy->For(op, DataType::kFloat, {});
    EXPECT_EQ(tol.ulp, 0) << op;
    EXPECT_EQ(tol.atol, 0) << op;
    EXPECT_EQ(tol.rtol, 0) << op;
  }
  for (const char* op : {"Add", "Mul", "Div", "Sqrt"}) EXPECT_EQ(policy->For(op, DataType::kFloat, {}).ulp, 0) << op;
  EXPECT_GE(policy->For("Exp", DataType::kFloat, {}).ulp, 1);
  EXPECT_EQ(policy->For("Tanh", DataType::kFloat16, {}).ulp, 1);
  ShapeFacts small, large;
  large.inner_dim = 4096;
  EXPECT_GT(policy->For("MatMul", DataType::kFloat, large).rtol, policy->For("MatMul", DataType::kFloat, small).rtol);
  // Narrow outputs of long sums are judged by float32 accumulation, not by
  // their own unit roundoff (which would admit errors of whole units here).
  EXPECT_LT(policy->For("MatMul", DataType::kFloat16, large).atol, 1e-3);
  EXPECT_EQ(policy->For("Add", DataType::kFloat16, {}).atol, 0);
  EXPECT_TRUE(policy->IsListed("Attention"));
  EXPECT_TRUE(policy->IsListed("RMSNormalization"));
}
#endif

}  // namespace
}  // namespace parity
