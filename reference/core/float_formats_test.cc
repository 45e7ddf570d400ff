// Tests for float_formats: exhaustive round trips and tie rounding over every
// bit pattern, the ONNX Cast overflow/NaN/zero rules per format, float8e8m0
// rounding modes, and a table of values taken from ml_dtypes / onnx.
#include "reference/core/float_formats.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace parity {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

struct Format {
  DataType type;
  int bits;             // width of the pattern, sign included
  uint32_t max_finite;  // pattern of the largest finite (positive)
  double max_value;     // its value, from the ONNX / OCP tables
  double min_subnormal; // value of pattern 1
};

// Limits as the onnx docs (technical/float8.md, float4.md) and the OCP MX
// spec tabulate them; the 16-bit ones are IEEE binary16 and bfloat16.
const std::vector<Format>& AllFormatsButE8M0() {
  static const std::vector<Format> formats = {
      {DataType::kFloat16, 16, 0x7BFF, 65504.0, 0x1p-24},
      {DataType::kBfloat16, 16, 0x7F7F, 0x1.FEp127, 0x1p-133},
      {DataType::kFloat8E4M3FN, 8, 0x7E, 448.0, 0x1p-9},
      {DataType::kFloat8E4M3FNUZ, 8, 0x7F, 240.0, 0x1p-10},
      {DataType::kFloat8E5M2, 8, 0x7B, 57344.0, 0x1p-16},
      {DataType::kFloat8E5M2FNUZ, 8, 0x7F, 57344.0, 0x1p-17},
      {DataType::kFloat6E2M3, 6, 0x1F, 7.5, 0.125},
      {DataType::kFloat6E3M2, 6, 0x1F, 28.0, 0.0625},
      {DataType::kFloat4E2M1, 4, 0x7, 6.0, 0.5},
  };
  return formats;
}

std::string Name(DataType type) { return std::string(DataTypeName(type)); }
uint32_t SignBit(const Format& f) { return uint32_t{1} << (f.bits - 1); }
bool IsFnuz(DataType t) { return t == DataType::kFloat8E4M3FNUZ || t == DataType::kFloat8E5M2FNUZ; }
uint64_t DoubleBits(double v) { return std::bit_cast<uint64_t>(v); }

TEST(FloatFormatsTest, DecodesTheTabulatedLimits) {
  for (const Format& f : AllFormatsButE8M0()) {
    SCOPED_TRACE(Name(f.type));
    EXPECT_EQ(DecodeSmallFloat(f.type, f.max_finite), f.max_value);
    EXPECT_EQ(DecodeSmallFloat(f.type, f.max_finite | SignBit(f)), -f.max_value);
    EXPECT_EQ(DecodeSmallFloat(f.type, 1), f.min_subnormal);
    EXPECT_EQ(DecodeSmallFloat(f.type, 0), 0.0);
    EXPECT_FALSE(std::signbit(DecodeSmallFloat(f.type, 0)));
  }
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E8M0, 0x00), 0x1p-127);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E8M0, 0x7F), 1.0);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E8M0, 0xFE), 0x1p127);
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(DataType::kFloat8E8M0, 0xFF)));
}

TEST(FloatFormatsTest, DecodesSpecialPatterns) {
  // Signed zeros where the format has -0; FNUZ's 0x80 is its only NaN.
  EXPECT_TRUE(std::signbit(DecodeSmallFloat(DataType::kFloat8E4M3FN, 0x80)));
  EXPECT_TRUE(std::signbit(DecodeSmallFloat(DataType::kFloat4E2M1, 0x8)));
  EXPECT_TRUE(std::signbit(DecodeSmallFloat(DataType::kFloat6E3M2, 0x20)));
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(DataType::kFloat8E4M3FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(DataType::kFloat8E5M2FNUZ, 0x80)));
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(DataType::kFloat8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::isnan(DecodeSmallFloat(DataType::kFloat8E4M3FN, 0xFF)));
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E5M2, 0x7C), kInf);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E5M2, 0xFC), -kInf);
  for (uint32_t b : {0x7Du, 0x7Eu, 0x7Fu, 0xFDu}) {
    EXPECT_TRUE(std::isnan(DecodeSmallFloat(DataType::kFloat8E5M2, b))) << b;
  }
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat16, 0x7C00), kInf);
  EXPECT_EQ(DecodeSmallFloat(DataType::kBfloat16, 0xFF80), -kInf);
  // No NaN and no inf in float6 / float4: the all-ones patterns are finite.
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat6E2M3, 0x3F), -7.5);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat4E2M1, 0xF), -6.0);
}

TEST(FloatFormatsTest, DecodeIgnoresBitsAboveTheFormat) {
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat4E2M1, 0xF2), 1.0);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat6E2M3, 0xC8), 1.0);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E4M3FN, 0x138), 1.0);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat16, 0xABCD3C00), 1.0);
  EXPECT_EQ(DecodeSmallFloat(DataType::kFloat8E8M0, 0x17F), 1.0);
}

// Positive finite patterns 0..max_finite decode to strictly increasing
// values, and the sign bit only negates: the layout is sign-magnitude.
TEST(FloatFormatsTest, DecodeIsMonotonicAndSignSymmetric) {
  for (const Format& f : AllFormatsButE8M0()) {
    SCOPED_TRACE(Name(f.type));
    for (uint32_t b = 0; b < f.max_finite; ++b) {
      ASSERT_LT(DecodeSmallFloat(f.type, b), DecodeSmallFloat(f.type, b + 1)) << b;
      if (b == 0 && IsFnuz(f.type)) continue;  // 0x80 is NaN, not -0
      ASSERT_EQ(DecodeSmallFloat(f.type, b | SignBit(f)), -DecodeSmallFloat(f.type, b)) << b;
    }
  }
}

// decode -> encode over every bit pattern. Finite values come back
// unchanged under both saturate settings; NaN patterns stay NaN.
TEST(FloatFormatsTest, EveryPatternRoundTrips) {
  for (const Format& f : AllFormatsButE8M0()) {
    SCOPED_TRACE(Name(f.type));
    int patterns = 0;
    for (uint32_t b = 0; b < (uint32_t{1} << f.bits); ++b, ++patterns) {
      const double v = DecodeSmallFloat(f.type, b);
      for (bool saturate : {false, true}) {
        const uint32_t back = EncodeSmallFloat(f.type, v, saturate);
        if (std::isnan(v)) {
          ASSERT_TRUE(std::isnan(DecodeSmallFloat(f.type, back))) << b;
        } else if (std::isinf(v) && saturate && f.type == DataType::kFloat8E5M2) {
          ASSERT_EQ(back, f.max_finite | (b & SignBit(f))) << b;  // Inf -> FLT_MAX
        } else {
          ASSERT_EQ(back, b) << b << " saturate=" << saturate;
        }
      }
    }
    EXPECT_EQ(patterns, 1 << f.bits);
  }
  for (uint32_t b = 0; b < 256; ++b) {
    const double v = DecodeSmallFloat(DataType::kFloat8E8M0, b);
    for (bool saturate : {false, true}) {
      for (E8M0Rounding r : {E8M0Rounding::kUp, E8M0Rounding::kDown, E8M0Rounding::kNearest}) {
        ASSERT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, v, saturate, r), b) << b;
      }
    }
  }
}

// numpy keeps float16 NaN payloads; so do we, which makes the round trip
// exact for NaN patterns too (signalling ones included).
TEST(FloatFormatsTest, Float16NanPayloadRoundTripsExactly) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    ASSERT_EQ(EncodeSmallFloat(DataType::kFloat16, DecodeSmallFloat(DataType::kFloat16, b)), b) << b;
  }
  // A payload only in the low double bits still gives a NaN, not inf.
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat16, std::bit_cast<double>(uint64_t{0x7FF0000000000001})),
            0x7C01u);
}

// Between two neighbouring finite values: the midpoint goes to the even
// pattern, anything off it to the nearer one. Every pair, both signs.
TEST(FloatFormatsTest, RoundsToNearestEvenBetweenEveryPairOfNeighbours) {
  for (const Format& f : AllFormatsButE8M0()) {
    SCOPED_TRACE(Name(f.type));
    for (uint32_t lo = 0; lo < f.max_finite; ++lo) {
      const double a = DecodeSmallFloat(f.type, lo);
      const double b = DecodeSmallFloat(f.type, lo + 1);
      const double mid = (a + b) / 2;  // exact: both have few significant bits
      const uint32_t even = (lo % 2 == 0) ? lo : lo + 1;
      for (double sign : {1.0, -1.0}) {
        // FNUZ: a negative value that rounds to zero is +0, not the NaN 0x80.
        const auto signed_bits = [&](uint32_t m) {
          return (sign < 0 && !(m == 0 && IsFnuz(f.type))) ? m | SignBit(f) : m;
        };
        ASSERT_EQ(EncodeSmallFloat(f.type, sign * mid), signed_bits(even)) << lo;
        ASSERT_EQ(EncodeSmallFloat(f.type, sign * std::nextafter(mid, 0.0)), signed_bits(lo)) << lo;
        ASSERT_EQ(EncodeSmallFloat(f.type, sign * std::nextafter(mid, kInf)), signed_bits(lo + 1)) << lo;
      }
    }
  }
}

// One rounding straight from double: via float32 these would land on a tie
// and round to even, the wrong way. (ml_dtypes rounds via float32 and gets
// the first pattern in each pair.)
TEST(FloatFormatsTest, RoundsOnceFromDouble) {
  const double above_tie = 0x1p-40;
  EXPECT_EQ(EncodeSmallFloat(DataType::kBfloat16, 1.0 + 0x1p-8), 0x3F80u);
  EXPECT_EQ(EncodeSmallFloat(DataType::kBfloat16, 1.0 + 0x1p-8 + above_tie), 0x3F81u);
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat16, 1.0 + 0x1p-11 + above_tie), 0x3C01u);
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat8E4M3FN, 0x1p-10 + 0x1p-60), 0x01u);
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat4E2M1, 0.25 + 0x1p-50), 0x1u);
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat6E3M2, 0.03125 + 0x1p-50), 0x01u);
  // The same near overflow: just past the e4m3fn tie 464 is out of range.
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat8E4M3FN, 464.0 + 0x1p-40), 0x7Fu);
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat8E4M3FN, 464.0), 0x7Eu);
}

TEST(FloatFormatsTest, UnderflowsToSignedZero) {
  for (const Format& f : AllFormatsButE8M0()) {
    SCOPED_TRACE(Name(f.type));
    const uint32_t negative_zero = IsFnuz(f.type) ? 0 : SignBit(f);
    for (bool saturate : {false, true}) {
      EXPECT_EQ(EncodeSmallFloat(f.type, 0.0, saturate), 0u);
      EXPECT_EQ(EncodeSmallFloat(f.type, -0.0, saturate), negative_zero);
      // Half the smallest subnormal is a tie with zero, which is even.
      EXPECT_EQ(EncodeSmallFloat(f.type, f.min_subnormal / 2, saturate), 0u);
      EXPECT_EQ(EncodeSmallFloat(f.type, -f.min_subnormal / 2, saturate), negative_zero);
      EXPECT_EQ(EncodeSmallFloat(f.type, f.min_subnormal * 0.5000001, saturate), 1u);
      EXPECT_EQ(EncodeSmallFloat(f.type, 1e-300, saturate), 0u);
      EXPECT_EQ(EncodeSmallFloat(f.type, -std::numeric_limits<double>::denorm_min(), saturate),
                negative_zero);
    }
  }
}

// Overflow and inf per Operators.md, Cast: with saturate, +-FLT_MAX in every
// float8 (e5m2's inf included); without, inf (e5m2) or NaN. float16 and
// bfloat16 ignore saturate; float6 / float4 always clamp.
TEST(FloatFormatsTest, OverflowFollowsTheCastTables) {
  struct Expected {
    DataType type;
    bool saturate;
    uint32_t positive, negative;
  };
  const Expected table[] = {
      {DataType::kFloat16, false, 0x7C00, 0xFC00},      {DataType::kFloat16, true, 0x7C00, 0xFC00},
      {DataType::kBfloat16, false, 0x7F80, 0xFF80},     {DataType::kBfloat16, true, 0x7F80, 0xFF80},
      {DataType::kFloat8E4M3FN, false, 0x7F, 0xFF},     {DataType::kFloat8E4M3FN, true, 0x7E, 0xFE},
      {DataType::kFloat8E4M3FNUZ, false, 0x80, 0x80},   {DataType::kFloat8E4M3FNUZ, true, 0x7F, 0xFF},
      {DataType::kFloat8E5M2, false, 0x7C, 0xFC},       {DataType::kFloat8E5M2, true, 0x7B, 0xFB},
      {DataType::kFloat8E5M2FNUZ, false, 0x80, 0x80},   {DataType::kFloat8E5M2FNUZ, true, 0x7F, 0xFF},
      {DataType::kFloat6E2M3, false, 0x1F, 0x3F},       {DataType::kFloat6E2M3, true, 0x1F, 0x3F},
      {DataType::kFloat6E3M2, false, 0x1F, 0x3F},       {DataType::kFloat6E3M2, true, 0x1F, 0x3F},
      {DataType::kFloat4E2M1, false, 0x7, 0xF},         {DataType::kFloat4E2M1, true, 0x7, 0xF},
  };
  for (const Expected& e : table) {
    SCOPED_TRACE(Name(e.type) + (e.saturate ? " saturate" : " no saturate"));
    double twice_max = 0;
    for (const Format& f : AllFormatsButE8M0()) {
      if (f.type == e.type) twice_max = 2 * f.max_value;
    }
    for (double big : {twice_max, 1e300, std::numeric_limits<double>::max(), kInf}) {
      EXPECT_EQ(EncodeSmallFloat(e.type, big, e.saturate), e.positive) << big;
      EXPECT_EQ(EncodeSmallFloat(e.type, -big, e.saturate), e.negative) << big;
    }
  }
  // Just past the largest finite: the tie above it rounds out of range
  // unless max's pattern is even (only e4m3fn's 0x7E is), and whatever lies
  // out of range clamps when saturating (float8) or always (float6/4).
  for (const Format& f : AllFormatsButE8M0()) {
    SCOPED_TRACE(Name(f.type));
    const double ulp = f.max_value - DecodeSmallFloat(f.type, f.max_finite - 1);
    const double tie = f.max_value + ulp / 2;
    const bool always_clamps = f.bits <= 6;
    const bool ignores_saturate = f.bits == 16;
    const bool tie_stays = f.max_finite % 2 == 0;
    EXPECT_EQ(tie_stays, f.type == DataType::kFloat8E4M3FN);
    EXPECT_EQ(EncodeSmallFloat(f.type, std::nextafter(tie, 0.0)), f.max_finite);
    const double first_out = tie_stays ? std::nextafter(tie, kInf) : tie;
    const uint32_t out = EncodeSmallFloat(f.type, first_out);
    EXPECT_EQ(out == f.max_finite, always_clamps);
    EXPECT_EQ(EncodeSmallFloat(f.type, tie), tie_stays ? f.max_finite : out);
    EXPECT_EQ(EncodeSmallFloat(f.type, first_out, /*saturate=*/true), ignores_saturate ? out : f.max_finite);
  }
}

// NaN: signed NaN where the format has one, the single 0x80 in FNUZ, and
// ml_dtypes' choice (sign-flipped -0) in the formats without NaN.
TEST(FloatFormatsTest, EncodesNan) {
  struct Expected {
    DataType type;
    uint32_t positive, negative;
  };
  const Expected table[] = {
      {DataType::kFloat16, 0x7E00, 0xFE00},    {DataType::kBfloat16, 0x7FC0, 0xFFC0},
      {DataType::kFloat8E4M3FN, 0x7F, 0xFF},   {DataType::kFloat8E4M3FNUZ, 0x80, 0x80},
      {DataType::kFloat8E5M2, 0x7E, 0xFE},     {DataType::kFloat8E5M2FNUZ, 0x80, 0x80},
      {DataType::kFloat6E2M3, 0x20, 0x00},     {DataType::kFloat6E3M2, 0x20, 0x00},
      {DataType::kFloat4E2M1, 0x8, 0x0},       {DataType::kFloat8E8M0, 0xFF, 0xFF},
  };
  for (const Expected& e : table) {
    SCOPED_TRACE(Name(e.type));
    for (bool saturate : {false, true}) {
      EXPECT_EQ(EncodeSmallFloat(e.type, kNan, saturate), e.positive);
      EXPECT_EQ(EncodeSmallFloat(e.type, -kNan, saturate), e.negative);
    }
  }
  // bfloat16 and e5m2 give the canonical quiet NaN whatever the payload.
  const double odd_nan = std::bit_cast<double>(uint64_t{0x7FF4000000000001});
  EXPECT_EQ(EncodeSmallFloat(DataType::kBfloat16, odd_nan), 0x7FC0u);
  EXPECT_EQ(EncodeSmallFloat(DataType::kFloat8E5M2, odd_nan), 0x7Eu);
  EXPECT_FALSE(std::signbit(DecodeSmallFloat(DataType::kFloat8E4M3FN, 0x7F)));
  EXPECT_TRUE(std::signbit(DecodeSmallFloat(DataType::kFloat8E4M3FN, 0xFF)));
  EXPECT_EQ(DoubleBits(DecodeSmallFloat(DataType::kBfloat16, 0xFFC0)) >> 63, 1u);
}

// float8e8m0: rounding modes, range limits and specials (Operators.md, Cast,
// the E8M0 table and round_mode; our reading is in float_formats.cc).
TEST(FloatFormatsTest, E8M0RoundingModesAndLimits) {
  constexpr auto kUp = E8M0Rounding::kUp;
  constexpr auto kDown = E8M0Rounding::kDown;
  constexpr auto kNearest = E8M0Rounding::kNearest;
  struct Case {
    double value;
    E8M0Rounding rounding;
    uint32_t saturated, unsaturated;
  };
  const Case cases[] = {
      {1.0, kUp, 0x7F, 0x7F},          {1.0, kDown, 0x7F, 0x7F},       {1.0, kNearest, 0x7F, 0x7F},
      {1.5, kUp, 0x80, 0x80},          {1.5, kDown, 0x7F, 0x7F},       {1.5, kNearest, 0x80, 0x80},
      {1.4999, kNearest, 0x7F, 0x7F},  {3.0, kNearest, 0x81, 0x81},    {5.0, kUp, 0x82, 0x82},
      {5.0, kDown, 0x81, 0x81},        {5.0, kNearest, 0x81, 0x81},    {0.375, kNearest, 0x7E, 0x7E},
      // Rounded once from the double: float32 would make this 1.0 exactly.
      {1.0 + 0x1p-40, kUp, 0x80, 0x80},
      // The sign is ignored (negative input is unspecified; the ONNX
      // reference reads only the exponent bits).
      {-4.0, kUp, 0x81, 0x81},         {-5.0, kDown, 0x81, 0x81},
      // Top of the range: 2^127 is E8M0_MAX; past it after rounding is out.
      {0x1p127, kUp, 0xFE, 0xFE},      {0x1.8p127, kUp, 0xFE, 0xFF},   {0x1.8p127, kDown, 0xFE, 0xFE},
      {0x1.7p127, kNearest, 0xFE, 0xFE}, {0x1.8p127, kNearest, 0xFE, 0xFF},
      {1e300, kNearest, 0xFE, 0xFF},   {kInf, kUp, 0xFE, 0xFF},        {kInf, kNearest, 0xFE, 0xFF},
      {kInf, kDown, 0xFE, 0xFF},
      // Rounding down never overflows: 2^127 is the largest value <= x.
      {0x1p128, kDown, 0xFE, 0xFE},    {1e300, kDown, 0xFE, 0xFE},
      // Bottom: 2^-127 is E8M0_MIN. Rounding up never underflows (2^-127 is
      // the smallest value >= x, zero included); down and nearest do. Zero
      // gives E8M0_MIN saturating, NaN otherwise (the table, for nearest).
      {0x1p-127, kDown, 0x00, 0x00},   {0x1p-128, kUp, 0x00, 0x00},    {0x1p-128, kDown, 0x00, 0xFF},
      {0x1.8p-128, kNearest, 0x00, 0x00}, {0x1.7p-128, kNearest, 0x00, 0xFF},
      {0x1p-126, kNearest, 0x01, 0x01}, {1e-300, kUp, 0x00, 0x00},     {1e-300, kNearest, 0x00, 0xFF},
      {0.0, kUp, 0x00, 0x00},          {0.0, kDown, 0x00, 0xFF},       {0.0, kNearest, 0x00, 0xFF},
      {-0.0, kNearest, 0x00, 0xFF},    {std::numeric_limits<double>::denorm_min(), kUp, 0x00, 0x00},
      {std::numeric_limits<double>::denorm_min(), kDown, 0x00, 0xFF},
      {kNan, kUp, 0xFF, 0xFF},         {kNan, kNearest, 0xFF, 0xFF},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "value " << c.value << " rounding " << static_cast<int>(c.rounding));
    EXPECT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, c.value, true, c.rounding), c.saturated);
    EXPECT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, c.value, false, c.rounding), c.unsaturated);
  }
  // Every power of two in range maps to its exponent, whatever the mode,
  // and the values just above and below it move as the mode says.
  for (int e = -126; e <= 126; ++e) {
    const double p = std::ldexp(1.0, e);
    const uint32_t code = static_cast<uint32_t>(e + 127);
    ASSERT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, std::nextafter(p, kInf), false, kUp), code + 1);
    ASSERT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, std::nextafter(p, 0.0), false, kDown), code - 1);
    ASSERT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, std::nextafter(p, 0.0), false, kNearest), code);
    ASSERT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, 1.5 * p, false, kNearest), code + 1);
    ASSERT_EQ(EncodeSmallFloat(DataType::kFloat8E8M0, std::nextafter(1.5 * p, 0.0), false, kNearest), code);
  }
}

// Values checked against ml_dtypes 0.5.4 and onnx 1.23.2 with a throwaway
// script: saturate=false is ml_dtypes' astype, saturate=true for float8 is
// onnx.numpy_helper.saturate_cast, e8m0 is onnx.numpy_helper.to_float8e8m0
// (saturate=True). Inputs are float32 values (an `f` literal), or doubles
// float32 holds exactly, so the two libraries' rounding through float32
// does not matter. Most inputs are from onnx's own Cast tests.
TEST(FloatFormatsTest, MatchesMlDtypesAndOnnxOnKnownValues) {
  struct Known {
    DataType type;
    double value;
    bool saturate;
    E8M0Rounding rounding;
    uint32_t bits;
  };
  constexpr auto kUp = E8M0Rounding::kUp;
  const Known known[] = {
      {DataType::kFloat16, 0.47892547f, false, kUp, 0x37AA},
      {DataType::kFloat16, 0.7229038f, false, kUp, 0x39C9},
      {DataType::kFloat16, -1e6, false, kUp, 0xFC00},
      {DataType::kFloat16, -1e-7f, false, kUp, 0x8002},
      {DataType::kBfloat16, 0.47892547f, false, kUp, 0x3EF5},
      {DataType::kBfloat16, -1e6, false, kUp, 0xC974},
      {DataType::kBfloat16, 1e-7f, false, kUp, 0x33D7},
      {DataType::kFloat8E4M3FN, 0.47892547f, false, kUp, 0x2F},
      {DataType::kFloat8E4M3FN, 0.7229038f, true, kUp, 0x34},
      {DataType::kFloat8E4M3FN, 1e6, false, kUp, 0x7F},
      {DataType::kFloat8E4M3FN, -1e6, true, kUp, 0xFE},
      {DataType::kFloat8E4M3FN, -1e-7f, false, kUp, 0x80},
      {DataType::kFloat8E4M3FN, 465.0, false, kUp, 0x7F},
      {DataType::kFloat8E4M3FN, -464.0, false, kUp, 0xFE},
      {DataType::kFloat8E4M3FNUZ, 0.47892547f, false, kUp, 0x37},
      {DataType::kFloat8E4M3FNUZ, 1e6, false, kUp, 0x80},
      {DataType::kFloat8E4M3FNUZ, -1e6, true, kUp, 0xFF},
      {DataType::kFloat8E4M3FNUZ, -1e-7f, false, kUp, 0x00},
      {DataType::kFloat8E4M3FNUZ, 464.0, true, kUp, 0x7F},
      {DataType::kFloat8E5M2, 0.47892547f, true, kUp, 0x38},
      {DataType::kFloat8E5M2, 0.7229038f, false, kUp, 0x3A},
      {DataType::kFloat8E5M2, -1e6, false, kUp, 0xFC},
      {DataType::kFloat8E5M2, -1e6, true, kUp, 0xFB},
      {DataType::kFloat8E5M2, 61440.0, false, kUp, 0x7C},
      {DataType::kFloat8E5M2, -1e-7f, true, kUp, 0x80},
      {DataType::kFloat8E5M2FNUZ, 0.7229038f, false, kUp, 0x3E},
      {DataType::kFloat8E5M2FNUZ, 61440.0, false, kUp, 0x80},
      {DataType::kFloat8E5M2FNUZ, 61440.0, true, kUp, 0x7F},
      {DataType::kFloat8E5M2FNUZ, -1e6, true, kUp, 0xFF},
      {DataType::kFloat4E2M1, 0.48f, false, kUp, 0x1},
      {DataType::kFloat4E2M1, 0.25, false, kUp, 0x0},
      {DataType::kFloat4E2M1, 1.05f, false, kUp, 0x2},
      {DataType::kFloat4E2M1, -3.5, false, kUp, 0xE},
      {DataType::kFloat4E2M1, 9.0, false, kUp, 0x7},
      {DataType::kFloat6E2M3, 0.48f, false, kUp, 0x04},
      {DataType::kFloat6E2M3, 1.05f, false, kUp, 0x08},
      {DataType::kFloat6E2M3, -3.5, false, kUp, 0x36},
      {DataType::kFloat6E2M3, 7.74f, false, kUp, 0x1F},
      {DataType::kFloat6E3M2, 0.48f, false, kUp, 0x08},
      {DataType::kFloat6E3M2, -3.5, false, kUp, 0x33},
      {DataType::kFloat6E3M2, 9.0, false, kUp, 0x18},
      {DataType::kFloat6E3M2, 29.9f, false, kUp, 0x1F},
      {DataType::kFloat8E8M0, 0.124f, true, kUp, 0x7C},
      {DataType::kFloat8E8M0, 0.124f, true, E8M0Rounding::kDown, 0x7B},
      {DataType::kFloat8E8M0, 1.1f, true, kUp, 0x80},
      {DataType::kFloat8E8M0, 1.1f, true, E8M0Rounding::kDown, 0x7F},
      {DataType::kFloat8E8M0, 5.0, true, E8M0Rounding::kNearest, 0x81},
      {DataType::kFloat8E8M0, 6.0, true, E8M0Rounding::kNearest, 0x82},
      {DataType::kFloat8E8M0, 8.0, true, kUp, 0x82},
  };
  for (const Known& k : known) {
    EXPECT_EQ(EncodeSmallFloat(k.type, k.value, k.saturate, k.rounding), k.bits)
        << Name(k.type) << " " << k.value << " saturate=" << k.saturate;
  }
}

}  // namespace
}  // namespace parity
