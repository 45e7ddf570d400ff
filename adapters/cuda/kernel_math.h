// The arithmetic and index maps of the CUDA adapter's own kernels, written
// once for the device and the host: kernels.cu runs them on the GPU, and
// kernel_math_test.cc runs the same functions on the CPU against the
// reference's kernels, so that what a kernel computes for each element is
// checked on machines without a GPU (what the GPU adds, the launch and the
// memory traffic, is checked by the corpora on a GPU: ci/cuda_gpu.sh).
//
// Rounding: a float32 kernel computes in double and rounds once to float32,
// as the reference does; a 16-bit kernel computes in float32 and rounds
// once to its type. kernels.cu is compiled with --fmad=false, so that no
// product and sum are contracted into an FMA the host would not make.
#pragma once

#include <cstdint>

#if defined(__CUDACC__)
#define PARITY_HD __host__ __device__
#else
#define PARITY_HD
#include <cmath>
#endif

namespace parity::adapters::cuda {

// The element types the kernels take.
enum class KType : int { kFloat32 = 0, kFloat16 = 1, kBfloat16 = 2 };

// Ranks up to this are taken by the strided kernels; a lowering refuses more.
inline constexpr int kMaxRank = 8;

// A view of `rank` dims walked in row-major order, each step of dims[i]
// moving strides[i] elements through the buffer (0 where it broadcasts).
struct StridedView {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
};

// The buffer offset of element `index` (row-major over view.dims).
PARITY_HD inline int64_t StridedOffset(int64_t index, const StridedView& view) {
  int64_t offset = 0;
  for (int i = view.rank - 1; i >= 0; --i) {
    const int64_t d = view.dims[i];
    offset += (index % d) * view.strides[i];
    index /= d;
  }
  return offset;
}

enum class UnaryOp : int {
  kRelu, kSigmoid, kTanh, kExp, kLog, kNeg, kAbs, kSqrt, kReciprocal, kErf, kSin, kCos, kFloor, kCeil,
  kGelu, kGeluTanh, kLeakyRelu, kElu, kSoftplus, kHardSigmoid, kIdentity,
};

// One element of a unary operator, in the compute type C (double for a
// float32 kernel, float for a 16-bit one). NaN passes through every branch
// as the reference's comparisons let it.
template <typename C>
PARITY_HD inline C ApplyUnary(UnaryOp op, C x, C alpha, C beta) {
  using std::ceil; using std::cos; using std::erf; using std::erfc; using std::exp; using std::expm1; using std::fabs; using std::floor;
  using std::log; using std::log1p; using std::sin; using std::sqrt; using std::tanh;
  switch (op) {
    case UnaryOp::kRelu: return x < C(0) ? C(0) : x;
    case UnaryOp::kSigmoid: return x >= C(0) ? C(1) / (C(1) + exp(-x)) : exp(x) / (C(1) + exp(x));
    case UnaryOp::kTanh: return tanh(x);
    case UnaryOp::kExp: return exp(x);
    case UnaryOp::kLog: return log(x);
    case UnaryOp::kNeg: return -x;
    case UnaryOp::kAbs: return fabs(x);
    case UnaryOp::kSqrt: return sqrt(x);
    case UnaryOp::kReciprocal: return C(1) / x;
    case UnaryOp::kErf: return erf(x);
    case UnaryOp::kSin: return sin(x);
    case UnaryOp::kCos: return cos(x);
    case UnaryOp::kFloor: return floor(x);
    case UnaryOp::kCeil: return ceil(x);
    // 1 + erf(z) as erfc(-z): no cancellation for large negative x, where a
    // float sum would lose every digit.
    case UnaryOp::kGelu: return C(0.5) * x * erfc(-x * C(0.70710678118654752440));
    case UnaryOp::kGeluTanh:
      return C(0.5) * x * (C(1) + tanh(C(0.79788456080286535588) * (x + C(0.044715) * x * x * x)));
    case UnaryOp::kLeakyRelu: return x < C(0) ? alpha * x : x;
    case UnaryOp::kElu: return x < C(0) ? alpha * expm1(x) : x;
    case UnaryOp::kSoftplus: return x > C(0) ? x + log1p(exp(-x)) : log1p(exp(x));
    case UnaryOp::kHardSigmoid: {
      const C y = alpha * x + beta;
      return y != y ? y : (y < C(0) ? C(0) : (y > C(1) ? C(1) : y));
    }
    case UnaryOp::kIdentity: return x;
  }
  return x;
}

enum class BinaryOp : int { kAdd, kSub, kMul, kDiv, kPow, kMax, kMin };

template <typename C>
PARITY_HD inline C ApplyBinary(BinaryOp op, C a, C b) {
  using std::pow;
  switch (op) {
    case BinaryOp::kAdd: return a + b;
    case BinaryOp::kSub: return a - b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kPow: return pow(a, b);
    // NaN in either operand gives NaN (a != a is true only for NaN).
    case BinaryOp::kMax: return a != a ? a : (b != b ? b : (a < b ? b : a));
    case BinaryOp::kMin: return a != a ? a : (b != b ? b : (b < a ? b : a));
  }
  return a;
}

// RotaryEmbedding-23 over its two layouts: 4-D x is [batch, heads, seq,
// head_size], 3-D x is [batch, seq, heads * head_size].
struct RotaryShape {
  int64_t batch = 0, heads = 0, seq = 0, head_size = 0;
  int64_t rotary_dim = 0;  // even, at most head_size
  bool four_d = true;
  bool interleaved = false;
  PARITY_HD int64_t Elements() const { return batch * heads * seq * head_size; }
};

// Where element `index` of x (in x's own order) sits: its (b, s) row of the
// caches' positions, its feature d, and for a rotated feature the offset of
// its partner and whether it is the pair's first. Returns the pair's k
// (0 <= k < rotary_dim / 2), or -1 for a feature past rotary_dim.
struct RotaryPlace {
  int64_t bs = 0;       // b * seq + s
  int64_t partner = 0;  // x offset of the pair's other element
  bool first = false;
};
PARITY_HD inline int64_t RotaryLocate(int64_t index, const RotaryShape& r, RotaryPlace* place) {
  const int64_t d = index % r.head_size;
  const int64_t rest = index / r.head_size;
  int64_t b, s;
  if (r.four_d) {  // rest = (b * heads + h) * seq + s
    s = rest % r.seq;
    b = rest / r.seq / r.heads;
  } else {  // rest = (b * seq + s) * heads + h
    s = (rest / r.heads) % r.seq;
    b = rest / r.heads / r.seq;
  }
  place->bs = b * r.seq + s;
  if (d >= r.rotary_dim) return -1;
  const int64_t half = r.rotary_dim / 2;
  const int64_t base = index - d;
  if (r.interleaved) {
    place->first = d % 2 == 0;
    place->partner = base + (place->first ? d + 1 : d - 1);
    return d / 2;
  }
  place->first = d < half;
  place->partner = base + (place->first ? d + half : d - half);
  return place->first ? d : d - half;
}

// One rotated element: x1 * cos - x2 * sin for the pair's first, x1 * sin +
// x2 * cos for its second, where x1 is the first's value.
template <typename C>
PARITY_HD inline C Rotate(bool first, C self, C partner, C c, C s) {
  return first ? self * c - partner * s : partner * s + self * c;
}

// One softmax row of `length` values, read by load(j) and written by
// store(j, value) in the compute type C. A row holding NaN or +inf is NaN
// throughout: its maximum is NaN or +inf, and x - max is NaN somewhere.
template <typename C, typename Load, typename Store>
PARITY_HD inline void SoftmaxRow(bool log_softmax, int64_t length, Load load, Store store) {
  using std::exp; using std::log;
  C top = load(0);
  for (int64_t j = 1; j < length && top == top; ++j) {
    const C v = load(j);
    if (v != v || v > top) top = v;  // NaN, once met, stays
  }
  C sum = 0;
  for (int64_t j = 0; j < length; ++j) sum += exp(load(j) - top);
  for (int64_t j = 0; j < length; ++j) {
    const C shifted = load(j) - top;
    store(j, log_softmax ? shifted - log(sum) : exp(shifted) / sum);
  }
}

// One RMSNormalization row of `cols` values: x / sqrt(mean(x^2) + epsilon)
// * scale, in double for every type (as the reference computes it),
// written by store(j, value) to be rounded once.
template <typename Load, typename Scale, typename Store>
PARITY_HD inline void RmsNormRow(int64_t cols, double epsilon, Load load, Scale scale, Store store) {
  using std::sqrt;
  double squares = 0;
  for (int64_t j = 0; j < cols; ++j) {
    const double v = load(j);
    squares += v * v;
  }
  const double inverse = 1.0 / sqrt(squares / static_cast<double>(cols) + epsilon);
  for (int64_t j = 0; j < cols; ++j) store(j, load(j) * inverse * scale(j));
}

// --- Attention ---------------------------------------------------------

// What one query row of Attention needs besides its data: the keys
// [lo, hi) the causal mask, the windows and nonpad_kv_seqlen leave to it
// (every other key has -inf added), the scale and the soft cap.
struct AttentionRow {
  int64_t total = 0, head_size = 0, v_size = 0;
  int64_t lo = 0, hi = 0;
  double scale = 1, softcap = 0;
};

// a + b, or the int64 bound it passes (the reference's SaturatingAdd):
// window sizes and key lengths are free int64 values.
PARITY_HD inline int64_t SaturatingAdd(int64_t a, int64_t b) {
  constexpr int64_t kMax = 0x7fffffffffffffff, kMin = -kMax - 1;
  if (b > 0 && a > kMax - b) return kMax;
  if (b < 0 && a < kMin - b) return kMin;
  return a + b;
}

// Keys [lo, hi) of query row i of batch entry b (the reference's
// AttentionProblem::AllowedKeys): `offset` is the position of query 0 among
// the keys, `limit` nonpad_kv_seqlen[b] when `has_limit`, windows -1 when
// unbounded.
PARITY_HD inline void AllowedKeys(int64_t i, int64_t offset, int64_t total, bool causal, int64_t left_window,
                                  int64_t right_window, bool has_limit, int64_t limit, int64_t* lo_out,
                                  int64_t* hi_out) {
  const int64_t pos = SaturatingAdd(i, offset);
  int64_t lo = 0, hi = total;
  if (causal && SaturatingAdd(pos, 1) < hi) hi = SaturatingAdd(pos, 1);
  if (left_window >= 0 && SaturatingAdd(pos, -left_window) > lo) lo = SaturatingAdd(pos, -left_window);
  if (right_window >= 0) {
    const int64_t end = SaturatingAdd(SaturatingAdd(pos, right_window), 1);
    if (end < hi) hi = end;
  }
  if (has_limit && limit < hi) hi = limit;
  if (lo > total) lo = total;
  *lo_out = lo;
  *hi_out = hi > lo ? hi : lo;
}

// One query row, every step of the operator's function body in double and
// in its order (as the reference's exact path): scores = q·k * scale,
// capped = softcap * tanh(scores / softcap), biased = capped + bias,
// P = softmax(biased) with a fully masked row (its bias -inf everywhere)
// giving zeros, y = P·V. q(d), k(j, d), v(j, d) read the data, bias(j) the
// mask's additive bias (0 without a mask); store(d, value) writes y. `acc`
// holds v_size doubles. Scores are computed again in each of the three
// passes, so that nothing of total's length is kept.
template <typename Q, typename K, typename V, typename Bias, typename Store>
PARITY_HD inline void AttendRow(const AttentionRow& a, Q q, K k, V v, Bias bias, Store store, double* acc) {
  using std::exp; using std::tanh;
  const double neg_inf = -HUGE_VAL;
  auto biased = [&](int64_t j, double* add) {
    double dot = 0;
    for (int64_t d = 0; d < a.head_size; ++d) dot += q(d) * k(j, d);
    const double score = dot * a.scale;
    const double capped = a.softcap != 0 ? a.softcap * tanh(score / a.softcap) : score;
    *add = bias(j);
    if (j < a.lo || j >= a.hi) *add += neg_inf;
    return capped + *add;
  };
  double row_bias_max = neg_inf, top = neg_inf;
  for (int64_t j = 0; j < a.total; ++j) {
    double add = 0;
    const double s = biased(j, &add);
    // A NaN bias is the maximum (the body's ReduceMax), so the row is not fully masked.
    row_bias_max = (add != add || row_bias_max != row_bias_max) ? add + row_bias_max : (add > row_bias_max ? add : row_bias_max);
    top = (s != s || top != top) ? s + top : (s > top ? s : top);
  }
  const bool fully_masked = a.total == 0 || row_bias_max == neg_inf;
  if (top == neg_inf) top = 0;
  double sum = 0;
  for (int64_t j = 0; j < a.total; ++j) {
    double add = 0;
    sum += exp(biased(j, &add) - top);
  }
  if (sum == 0) sum = 1;
  for (int64_t d = 0; d < a.v_size; ++d) acc[d] = 0;
  for (int64_t j = 0; j < a.total; ++j) {
    double add = 0;
    const double p = fully_masked ? 0.0 : exp(biased(j, &add) - top) / sum;
    for (int64_t d = 0; d < a.v_size; ++d) acc[d] += p * v(j, d);
  }
  for (int64_t d = 0; d < a.v_size; ++d) store(d, acc[d]);
}

// --- Reductions ------------------------------------------------------

enum class ReduceOp : int { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// One group of `count` values, read by load(j), reduced in double as the
// reference does: the identity for an empty group (sum 0, prod 1, max -inf,
// min +inf, log-sum -inf, a mean NaN); NaN wins max and min; LogSumExp
// shifts by the group's maximum, and an infinite maximum decides alone.
template <typename Load>
PARITY_HD inline double ReduceGroup(ReduceOp op, int64_t count, Load load) {
  using std::exp; using std::fabs; using std::log; using std::sqrt;
  const double inf = HUGE_VAL;
  double a = op == ReduceOp::kProd ? 1.0 : op == ReduceOp::kMax ? -inf : op == ReduceOp::kMin ? inf : 0.0;
  double top = -inf;
  if (op == ReduceOp::kLogSumExp) {
    for (int64_t j = 0; j < count; ++j) {
      const double v = load(j);
      if (v != v || v > top) top = v;
    }
  }
  for (int64_t j = 0; j < count; ++j) {
    const double v = load(j);
    switch (op) {
      case ReduceOp::kSum: case ReduceOp::kMean: case ReduceOp::kLogSum: a += v; break;
      case ReduceOp::kL1: a += fabs(v); break;
      case ReduceOp::kL2: case ReduceOp::kSumSquare: a += v * v; break;
      case ReduceOp::kProd: a *= v; break;
      case ReduceOp::kMax: if (v != v || v > a) a = v; break;
      case ReduceOp::kMin: if (v != v || v < a) a = v; break;
      case ReduceOp::kLogSumExp: a += (top == inf || top == -inf) ? (v == top ? 1.0 : 0.0) : exp(v - top); break;
    }
  }
  switch (op) {
    case ReduceOp::kMean: return count == 0 ? inf - inf : a / static_cast<double>(count);
    case ReduceOp::kL2: return sqrt(a);
    case ReduceOp::kLogSum: return log(a);
    case ReduceOp::kLogSumExp:
      if (count == 0) return -inf;
      return top != top ? top : ((top == inf || top == -inf) ? top : top + log(a));
    default: return a;
  }
}

// One element of BatchNormalization in inference mode, in double and in
// the reference's order: scale * (x - mean) / sqrt(var + epsilon) + bias.
PARITY_HD inline double BatchNormValue(double x, double scale, double bias, double mean, double var, double epsilon) {
  using std::sqrt;
  return scale * (x - mean) / sqrt(var + epsilon) + bias;
}

// cuDNN's batch-norm node takes the inverse standard deviation: 1 / sqrt(var
// + epsilon) in double, which the parameters' kernel rounds once to float32.
PARITY_HD inline double InverseStdDev(double var, double epsilon) {
  using std::sqrt;
  return 1.0 / sqrt(var + epsilon);
}

// --- 8-bit matrix products (cuBLASLt's int32 sums, finished here) -----------
//
// cuBLASLt multiplies signed bytes. An operand is packed first: a uint8
// byte flipped to int8 (b ^ 0x80 is b - 128, so its zero point is 128 less),
// rows padded with zeros to a multiple of 4 (zeros add nothing to a sum).
// cuBLASLt's raw sum S = sum_k a_k * b_k of the packed bytes becomes the
// operator's sum_k (a_k - za) * (b_k - zb) = S - zb * sum(a) - za * sum(b) +
// K * za * zb, with the line sums of the packed operands (in int64: exact).

PARITY_HD inline int8_t PackedInt8(uint8_t byte, bool flip) {
  return static_cast<int8_t>(flip ? static_cast<uint8_t>(byte ^ 0x80u) : byte);
}

// How an operand is packed: row-major [rows_pad, cols_pad] int8 matrices,
// whose element (r, c) of matrix b is the source's byte at b * src_matrix +
// r * row_step + c * col_step for r < rows and c < cols, else 0.
struct Int8Pack {
  int64_t src_matrix = 0, rows = 0, cols = 0, row_step = 0, col_step = 0, rows_pad = 0, cols_pad = 0;
  bool flip = false;  // a uint8 operand
};

// The source offset of packed element i, or -1 where it is padding.
PARITY_HD inline int64_t PackSource(const Int8Pack& p, int64_t i) {
  const int64_t c = i % p.cols_pad, r = (i / p.cols_pad) % p.rows_pad, b = i / (p.cols_pad * p.rows_pad);
  return r < p.rows && c < p.cols ? b * p.src_matrix + r * p.row_step + c * p.col_step : -1;
}

PARITY_HD inline int64_t CenteredSum(int64_t raw, int64_t a_sum, int64_t b_sum, int64_t k, int64_t a_zero,
                                     int64_t b_zero) {
  return raw - b_zero * a_sum - a_zero * b_sum + k * a_zero * b_zero;
}

// How a centered sum becomes an output element.
enum class IntFinish : int {
  kInt32,     // MatMulInteger: the sum
  kQuantize,  // QLinearMatMul, or a QDQ region's QuantizeLinear: round(sum * xs * ws / ys) + y_zero, saturated
  kFloat,     // a QDQ region without QuantizeLinear: sum * xs * ws, rounded once to float32
};

// Round half to even, add the zero point, saturate to [lo, hi]; NaN is 0
// (the reference's QLinearMatMul).
PARITY_HD inline int64_t QuantizedValue(double real, double zero, double lo, double hi) {
  using std::rint;
  const double rounded = real != real ? 0.0 : rint(real);
  const double v = rounded + zero;
  return static_cast<int64_t>(v <= lo ? lo : (v >= hi ? hi : v));
}

// The real value of a centered sum: the reference's order of operations.
PARITY_HD inline double ScaledSum(int64_t sum, double x_scale, double w_scale) {
  return static_cast<double>(sum) * x_scale * w_scale;
}

// One 8-bit product's finishing, for the output's row-major [batch, m, n]
// elements; cuBLASLt's sums are [batch, m, n_pad], the packed operands'
// line sums a_sums[batch of A][m] and b_sums[batch of B][n_pad].
struct Int8Finish {
  IntFinish finish = IntFinish::kInt32;
  int64_t batch = 1, m = 0, n = 0, k = 0, n_pad = 0;
  int64_t a_sums_stride = 0, b_sums_stride = 0;  // per batch entry: 0 (one matrix) or m, n_pad
  int64_t a_zero = 0;                            // of the packed A
  const int64_t* b_zero = nullptr;               // of the packed B: 1 or n values
  int64_t b_zero_count = 1;
  double x_scale = 1, y_scale = 1, y_zero = 0, lo = 0, hi = 0;  // lo, hi: the 8-bit output's range
  const double* w_scale = nullptr;  // 1 or n values
  int64_t w_scale_count = 1;
};

// Output element o: the centered sum, or its quantized or real value.
PARITY_HD inline double Int8OutputValue(const Int8Finish& f, int64_t o, int64_t raw, const int64_t* a_sums,
                                        const int64_t* b_sums) {
  const int64_t j = o % f.n, row = o / f.n, i = row % f.m, b = row / f.m;
  const int64_t b_zero = f.b_zero[f.b_zero_count == 1 ? 0 : j];
  const int64_t sum = CenteredSum(raw, a_sums[b * f.a_sums_stride + i], b_sums[b * f.b_sums_stride + j], f.k,
                                  f.a_zero, b_zero);
  if (f.finish == IntFinish::kInt32) return static_cast<double>(sum);
  const double w_scale = f.w_scale[f.w_scale_count == 1 ? 0 : j];
  const double real = ScaledSum(sum, f.x_scale, w_scale);
  if (f.finish == IntFinish::kFloat) return real;
  return static_cast<double>(QuantizedValue(real / f.y_scale, f.y_zero, f.lo, f.hi));
}

// The offset of output element o's raw sum in cuBLASLt's [batch, m, n_pad] output.
PARITY_HD inline int64_t Int8RawOffset(const Int8Finish& f, int64_t o) { return (o / f.n) * f.n_pad + o % f.n; }

}  // namespace parity::adapters::cuda
