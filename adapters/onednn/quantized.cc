// The integer operators (MatMulInteger, ConvInteger, QLinearMatMul,
// QLinearConv) and the QDQ regions (DequantizeLinear of both operands
// feeding MatMul or Conv, optionally followed by QuantizeLinear) on oneDNN's
// int8 matmul and convolution primitives, uint8 and int8.
//
// oneDNN computes the exact int32 sums of (x - x_zero) * (w - w_zero): the
// source zero point is its attribute (per tensor); its x86 int8 kernels take
// signed weights only and, for convolution, no weight zero point. So uint8
// weights run as w - 128 (an exact int8 flip, their zero point less 128),
// and a convolution's weight zero point is taken out afterwards as
// w_zero[m] * (the window sum of x - x_zero), which a second convolution
// with weights of ones gives. The requantization of the QLinear operators
// and of a region's QuantizeLinear, round(sum * scales) + zero point
// rounded half to even and saturated, is done on the int32 sums in double
// as ONNX defines it: oneDNN's own would compute the scale in float32 and
// add the zero point before rounding, which moves a tie to the other
// neighbour when the zero point is odd (round(2.5 + 1) = 4, round(2.5) + 1 = 3).
#include <algorithm>
#include <cmath>

#include "adapters/device/quantized_claims.h"
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/onednn/window.h"

namespace parity::adapters::onednn {
namespace {

// A scale or zero point input: absent, or of `allowed` element counts.
Status RequireCount(const NodeView& view, int i, const char* name, std::vector<int64_t> allowed) {
  if (!view.has_input(i)) return Status::Ok();
  const int64_t n = StaticCount(view, i);
  if (n < 0) return NotLowered("the dims of ", name, " are not known before the run");
  if (std::find(allowed.begin(), allowed.end(), n) == allowed.end()) {
    return NotLowered(name, " has ", n, " elements (oneDNN's int8 ", allowed.size() > 1 ? "kernels take it per tensor or per output channel" : "kernels take it per tensor", ")");
  }
  return Status::Ok();
}

// The values of an optional integer input (zero points), 0 when absent.
std::vector<int64_t> ZeroPoints(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return {0};
  return ctx.tensor(i).ToInt64s();
}

std::vector<double> Doubles(const KernelContext& ctx, size_t i) { return ctx.tensor(i).ToDoubles(); }

// ONNX's requantization: round half to even, add the zero point, saturate.
int64_t Requantize(double real, int64_t zero, DataType type) {
  const double rounded = std::isnan(real) ? 0.0 : std::nearbyint(real);
  const double v = rounded + static_cast<double>(zero);
  const double lo = static_cast<double>(IntegerMin(type)), hi = static_cast<double>(IntegerMax(type));
  return static_cast<int64_t>(std::clamp(v, lo, hi));
}

// uint8 weights as int8: w - 128, each byte's top bit flipped.
Tensor SignedWeights(const Tensor& w) {
  if (w.dtype() == DataType::kInt8) return w;
  Tensor s = *Tensor::Create(DataType::kInt8, w.shape());
  const uint8_t* from = w.raw_bytes();
  uint8_t* to = s.mutable_raw_bytes();
  for (size_t i = 0; i < w.byte_size(); ++i) to[i] = from[i] ^ 0x80;
  return s;
}

dnnl::memory Int32Scalar(int32_t* value) { return dnnl::memory(dnnl::memory::desc({1}, dnnl_dt::s32, {1}), Engine(), value); }

// --- The int32 sums ---------------------------------------------------------

// Which operands an integer kernel reads, by input position.
struct Operands {
  int x = 0, x_zero = -1, w = 1, w_zero = -1;
};

struct MatMulSumPlan {
  dnnl::matmul primitive;
  dnnl::memory::desc src, weights, dst;
  std::vector<int64_t> out_dims;  // ONNX's (1-D operands' dims dropped)
  std::vector<int64_t> a_dims, c_dims;  // A's and the result's, of one rank
  int64_t n = 0;                  // columns of the result
  bool empty = false;
};

// numpy.matmul of 8-bit A and B into int32, both zero points per tensor.
StatusOr<MatMulSumPlan> MakeMatMulSums(std::vector<int64_t> a_dims, std::vector<int64_t> b_dims, DataType a_type) {
  PARITY_ASSIGN_OR_RETURN(const MatMulShapes dims, NumpyMatMulShapes(std::move(a_dims), std::move(b_dims)));
  const std::vector<int64_t>& a = dims.a;
  const std::vector<int64_t>& c = dims.c;
  const size_t rank = c.size();
  MatMulSumPlan plan;
  plan.a_dims = a;
  plan.c_dims = c;
  plan.n = c[rank - 1];
  plan.out_dims = dims.out;
  int64_t count = 1;
  for (int64_t d : c) count *= d;
  plan.empty = count == 0 || a[rank - 1] == 0;
  if (plan.empty) return plan;
  plan.src = PlainDesc(a, *DnnlType(a_type));
  plan.weights = PlainDesc(dims.b, dnnl_dt::s8);
  plan.dst = PlainDesc(c, dnnl_dt::s32);
  dnnl::primitive_attr attr;
  attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  attr.set_zero_points_mask(DNNL_ARG_WEIGHTS, 0);
  plan.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.src, plan.weights, plan.dst, attr));
  return plan;
}

// The sums of each row of A - a_zero, for every row of the result (A's
// batch dims broadcast).
std::vector<int64_t> RowSums(const MatMulSumPlan& plan, const Tensor& a, int64_t a_zero) {
  const size_t rank = plan.c_dims.size();
  const int64_t k = plan.a_dims[rank - 1];
  int64_t rows = 1;
  for (size_t i = 0; i + 1 < rank; ++i) rows *= plan.c_dims[i];
  std::vector<int64_t> sums(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    // r over the result's [batch..., M]; its row of A.
    int64_t rest = r, a_row = 0, a_stride = 1;
    for (size_t i = rank - 1; i-- > 0;) {
      const int64_t idx = rest % plan.c_dims[i];
      rest /= plan.c_dims[i];
      if (plan.a_dims[i] != 1) a_row += idx * a_stride;
      a_stride *= plan.a_dims[i];
    }
    int64_t sum = 0;
    for (int64_t j = 0; j < k; ++j) sum += a.GetInt64(a_row * k + j) - a_zero;
    sums[static_cast<size_t>(r)] = sum;
  }
  return sums;
}

StatusOr<Tensor> RunMatMulSums(const MatMulSumPlan& plan, const KernelContext& ctx, const Operands& ops) {
  PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(DataType::kInt32, plan.out_dims));
  if (plan.empty) {
    std::fill(out.mutable_raw_bytes(), out.mutable_raw_bytes() + out.byte_size(), 0);
    return out;
  }
  const Tensor& w = ctx.tensor(static_cast<size_t>(ops.w));
  const Tensor weights = SignedWeights(w);
  int32_t x_zero = ops.x_zero >= 0 ? static_cast<int32_t>(ZeroPoints(ctx, static_cast<size_t>(ops.x_zero))[0]) : 0;
  std::vector<int64_t> w_zeros = ops.w_zero >= 0 ? ZeroPoints(ctx, static_cast<size_t>(ops.w_zero)) : std::vector<int64_t>{0};
  // oneDNN takes B's first zero point (per tensor); per-column ones add
  // their difference from it times A's row sums afterwards.
  int32_t w_zero = static_cast<int32_t>(w_zeros[0]) - (w.dtype() == DataType::kUint8 ? 128 : 0);
  plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(static_cast<size_t>(ops.x)), plan.src)},
                                    {DNNL_ARG_WEIGHTS, Wrap(weights, plan.weights)},
                                    {DNNL_ARG_DST, Wrap(out, plan.dst)},
                                    {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, Int32Scalar(&x_zero)},
                                    {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, Int32Scalar(&w_zero)}});
  Stream().wait();
  if (std::any_of(w_zeros.begin(), w_zeros.end(), [&](int64_t z) { return z != w_zeros[0]; })) {
    const std::vector<int64_t> rows = RowSums(plan, ctx.tensor(static_cast<size_t>(ops.x)), x_zero);
    int32_t* y = out.mutable_data<int32_t>();
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t shift = (w_zeros[static_cast<size_t>(i % plan.n)] - w_zeros[0]) * rows[static_cast<size_t>(i / plan.n)];
      y[i] = static_cast<int32_t>(static_cast<uint32_t>(y[i]) - static_cast<uint32_t>(shift));  // mod 2^32, as oneDNN's sums
    }
  }
  return out;
}

struct ConvSumPlan {
  dnnl::convolution_forward primitive, window_sums;  // window_sums: weights of ones, one output per group
  dnnl::memory::desc src, weights, dst, ones_weights, sums_dst;
  Tensor ones;
  std::vector<int64_t> out_dims;
  int64_t group = 1, plane = 1;
  bool empty = false;
};

StatusOr<ConvSumPlan> MakeConvSums(const std::vector<int64_t>& x, const std::vector<int64_t>& w, DataType x_type,
                                   const WindowAttrs& attrs, int64_t group) {
  if (x.size() < 3 || x.size() > 5 || w.size() != x.size()) return InvalidArgument("X and W must have rank 3 to 5");
  const std::vector<int64_t> input(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
  if (w[1] * group != x[1] || w[0] % group != 0) return InvalidArgument("W's channels do not match X's in ", group, " groups");
  PARITY_ASSIGN_OR_RETURN(WindowGeometry g, ResolveGeometry(attrs, input, kernel, /*pool=*/false));
  ConvSumPlan plan;
  plan.group = group;
  plan.out_dims = {x[0], w[0]};
  plan.out_dims.insert(plan.out_dims.end(), g.output.begin(), g.output.end());
  int64_t count = 1;
  for (int64_t d : plan.out_dims) count *= d;
  for (int64_t d : g.output) plan.plane *= d;
  int64_t taps = 1;
  for (int64_t d : w) taps *= d;
  plan.empty = count == 0 || taps == 0;
  if (plan.empty) return plan;
  const dnnl_dims strides(attrs.strides.begin(), attrs.strides.end());
  const dnnl_dims pad_l(g.pad_begin.begin(), g.pad_begin.end()), pad_r(g.pad_end.begin(), g.pad_end.end());
  plan.src = PlainDesc(x, *DnnlType(x_type));
  plan.weights = GroupedWeights(w, group, /*transposed=*/false, dnnl_dt::s8);
  plan.dst = PlainDesc(plan.out_dims, dnnl_dt::s32);
  dnnl::primitive_attr attr;
  attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
  plan.primitive = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(
      Engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, plan.src, plan.weights,
      plan.dst, strides, OneDnnDilations(attrs.dilations), pad_l, pad_r, attr));
  // [G, 1, C/G, k...] ones: sum over each group's window of x - x_zero.
  std::vector<int64_t> ones_dims = {group, w[1]};
  ones_dims.insert(ones_dims.end(), kernel.begin(), kernel.end());
  PARITY_ASSIGN_OR_RETURN(plan.ones, NewTensor(DataType::kInt8, ones_dims));
  std::fill(plan.ones.mutable_raw_bytes(), plan.ones.mutable_raw_bytes() + plan.ones.byte_size(), 1);
  plan.ones_weights = GroupedWeights(ones_dims, group, /*transposed=*/false, dnnl_dt::s8);
  std::vector<int64_t> sums_dims = plan.out_dims;
  sums_dims[1] = group;
  plan.sums_dst = PlainDesc(sums_dims, dnnl_dt::s32);
  plan.window_sums = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(
      Engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, plan.src,
      plan.ones_weights, plan.sums_dst, strides, OneDnnDilations(attrs.dilations), pad_l, pad_r, attr));
  return plan;
}

// conv(x - x_zero, w - w_zero) in int32; w_zero per tensor or per output channel.
StatusOr<Tensor> RunConvSums(const ConvSumPlan& plan, const KernelContext& ctx, const Operands& ops) {
  PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(DataType::kInt32, plan.out_dims));
  std::fill(out.mutable_raw_bytes(), out.mutable_raw_bytes() + out.byte_size(), 0);
  if (plan.empty) return out;
  const Tensor& w = ctx.tensor(static_cast<size_t>(ops.w));
  const Tensor weights = SignedWeights(w);
  int32_t x_zero = ops.x_zero >= 0 ? static_cast<int32_t>(ZeroPoints(ctx, static_cast<size_t>(ops.x_zero))[0]) : 0;
  std::vector<int64_t> w_zero = ops.w_zero >= 0 ? ZeroPoints(ctx, static_cast<size_t>(ops.w_zero)) : std::vector<int64_t>{0};
  if (w.dtype() == DataType::kUint8) {
    for (int64_t& z : w_zero) z -= 128;
  }
  const dnnl::memory src = Wrap(ctx.tensor(static_cast<size_t>(ops.x)), plan.src);
  dnnl::memory zero = Int32Scalar(&x_zero);
  plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, src},
                                    {DNNL_ARG_WEIGHTS, Wrap(weights, plan.weights)},
                                    {DNNL_ARG_DST, Wrap(out, plan.dst)},
                                    {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero}});
  const bool shifted = std::any_of(w_zero.begin(), w_zero.end(), [](int64_t z) { return z != 0; });
  if (shifted) {
    const dnnl_dims dims = plan.sums_dst.get_dims();
    PARITY_ASSIGN_OR_RETURN(Tensor sums, NewTensor(DataType::kInt32, std::vector<int64_t>(dims.begin(), dims.end())));
    plan.window_sums.execute(Stream(), {{DNNL_ARG_SRC, src},
                                        {DNNL_ARG_WEIGHTS, Wrap(plan.ones, plan.ones_weights)},
                                        {DNNL_ARG_DST, Wrap(sums, plan.sums_dst)},
                                        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero}});
    Stream().wait();
    // sum (x - xz)(w - wz) = sum (x - xz) w - wz * sum (x - xz), mod 2^32 as oneDNN's int32 sums are.
    const int64_t channels = plan.out_dims[1], per_group = channels / plan.group;
    int32_t* y = out.mutable_data<int32_t>();
    const int32_t* s = sums.data<int32_t>();
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t n = i / (channels * plan.plane), m = (i / plan.plane) % channels, p = i % plan.plane;
      const int64_t z = w_zero[w_zero.size() == 1 ? 0 : static_cast<size_t>(m)];
      const int64_t window = s[(n * plan.group + m / per_group) * plan.plane + p];
      y[i] = static_cast<int32_t>(static_cast<uint32_t>(y[i]) - static_cast<uint32_t>(z * window));
    }
  }
  Stream().wait();
  return out;
}

// --- The operators ----------------------------------------------------------

// How the int32 sums become the node's output.
enum class Finish {
  kInt32,    // MatMulInteger, ConvInteger
  kQLinear,  // QLinearMatMul, QLinearConv, a region ending in QuantizeLinear
  kFloat,    // a region without QuantizeLinear: float32 sum * scales
};

// The inputs that finish the sums, by position in the runner's inputs.
struct Scaling {
  int x_scale = -1, w_scale = -1, y_scale = -1, y_zero = -1, bias = -1;
  DataType out_type = DataType::kInt32;
  bool real_bias = false;  // a region's float bias, added after the scales (QLinearConv's is in sum units)
};

// Scales are per tensor except w's, which may be per output channel
// (`channel_of(i)` is output i's channel).
template <typename ChannelOf>
StatusOr<Tensor> FinishSums(Tensor sums, Finish finish, const Scaling& s, const KernelContext& ctx, ChannelOf channel_of) {
  if (finish == Finish::kInt32) return sums;
  const double xs = Doubles(ctx, static_cast<size_t>(s.x_scale))[0];
  const std::vector<double> ws = Doubles(ctx, static_cast<size_t>(s.w_scale));
  std::vector<double> bias;
  if (s.bias >= 0 && ctx.has_input(static_cast<size_t>(s.bias))) bias = Doubles(ctx, static_cast<size_t>(s.bias));
  PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(s.out_type, sums.shape()));
  const int32_t* acc = sums.data<int32_t>();
  if (finish == Finish::kFloat) {
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t m = channel_of(i);
      double v = static_cast<double>(acc[i]) * xs * ws[ws.size() == 1 ? 0 : static_cast<size_t>(m)];
      if (!bias.empty()) v += bias[static_cast<size_t>(m)];
      out.SetDouble(i, v);  // rounded once to float32
    }
    return out;
  }
  const double ys = Doubles(ctx, static_cast<size_t>(s.y_scale))[0];
  const int64_t yz = s.y_zero >= 0 ? ZeroPoints(ctx, static_cast<size_t>(s.y_zero))[0] : 0;
  for (int64_t i = 0; i < out.size(); ++i) {
    const int64_t m = channel_of(i);
    const double w_scale = ws[ws.size() == 1 ? 0 : static_cast<size_t>(m)];
    double real = 0;
    if (!bias.empty() && s.real_bias) {
      real = (static_cast<double>(acc[i]) * xs * w_scale + bias[static_cast<size_t>(m)]) / ys;
    } else if (!bias.empty()) {
      // QLinearConv: (sum + B) * (x_scale * w_scale / y_scale), the reference's order.
      real = (static_cast<double>(acc[i]) + bias[static_cast<size_t>(m)]) * (xs * w_scale / ys);
    } else {
      real = static_cast<double>(acc[i]) * xs * w_scale / ys;
    }
    out.SetInt64(i, Requantize(real, yz, s.out_type));
  }
  return out;
}

class IntMatMulNode final : public ShapedNode<MatMulSumPlan> {
 public:
  IntMatMulNode(DataType a_type, Operands ops, Finish finish, Scaling scaling)
      : a_type_(a_type), ops_(ops), finish_(finish), scaling_(scaling) {}

 protected:
  StatusOr<MatMulSumPlan> MakePlan(const InputShapes& shapes) override {
    return MakeMatMulSums(shapes[static_cast<size_t>(ops_.x)], shapes[static_cast<size_t>(ops_.w)], a_type_);
  }
  StatusOr<std::vector<Value>> Execute(const MatMulSumPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor sums, RunMatMulSums(plan, ctx, ops_));
    const int64_t n = plan.n;
    PARITY_ASSIGN_OR_RETURN(Tensor out, FinishSums(std::move(sums), finish_, scaling_, ctx,
                                                   [n](int64_t i) { return n > 0 ? i % n : 0; }));
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType a_type_;
  Operands ops_;
  Finish finish_;
  Scaling scaling_;
};

class IntConvNode final : public ShapedNode<ConvSumPlan> {
 public:
  IntConvNode(DataType x_type, WindowAttrs attrs, int64_t group, Operands ops, Finish finish, Scaling scaling)
      : x_type_(x_type), attrs_(std::move(attrs)), group_(group), ops_(ops), finish_(finish), scaling_(scaling) {}

 protected:
  StatusOr<ConvSumPlan> MakePlan(const InputShapes& shapes) override {
    return MakeConvSums(shapes[static_cast<size_t>(ops_.x)], shapes[static_cast<size_t>(ops_.w)], x_type_, attrs_,
                        group_);
  }
  StatusOr<std::vector<Value>> Execute(const ConvSumPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor sums, RunConvSums(plan, ctx, ops_));
    const int64_t plane = plan.plane, channels = plan.out_dims[1];
    PARITY_ASSIGN_OR_RETURN(Tensor out, FinishSums(std::move(sums), finish_, scaling_, ctx, [=](int64_t i) {
                              return plane > 0 ? (i / plane) % channels : 0;
                            }));
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType x_type_;
  WindowAttrs attrs_;
  int64_t group_;
  Operands ops_;
  Finish finish_;
  Scaling scaling_;
};

// Output channels of a MatMul's B (its last dim) or a Conv's W (its first), when static.
int64_t Channels(const NodeView& view, int w, bool conv) {
  const std::vector<int64_t>* dims = view.input_dims(w);
  if (!dims || dims->empty()) return -1;
  return conv ? dims->front() : dims->back();
}

StatusOr<WindowAttrs> ConvAttrs(const NodeView& view, int x, int64_t& group) {
  const int64_t rank = view.input_rank(x);
  if (rank < 3 || rank > 5) return NotLowered("X of rank ", rank, " (known before the run, 3 to 5)");
  group = view.GetInt("group", 1);
  if (group < 1) return NotLowered("group ", group);
  return ReadWindowAttrs(view, static_cast<size_t>(rank - 2));
}

StatusOr<std::unique_ptr<LoweredNode>> LowerMatMulInteger(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireEightBitOperands(view, 0, 2, 1, 3));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 2, "a_zero_point", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 3, "b_zero_point", {1, Channels(view, 1, false)}));
  if (view.has_input(3) && StaticCount(view, 3) > 1 && view.input_rank(3) != 1) {
    return NotLowered("b_zero_point per column with rank ", view.input_rank(3), " (claimed as a 1-D [N] only)");
  }
  return Prepared(std::make_unique<IntMatMulNode>(*view.input_type(0), Operands{0, 2, 1, 3}, Finish::kInt32, Scaling{}),
                  view);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerQLinearMatMul(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireEightBitOperands(view, 0, 2, 3, 5));
  PARITY_RETURN_IF_ERROR(RequireScaleTypes(view, {1, 4, 6}));
  const int64_t n = Channels(view, 3, false);
  PARITY_RETURN_IF_ERROR(RequireCount(view, 1, "a_scale", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 2, "a_zero_point", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 4, "b_scale", {1, n}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 5, "b_zero_point", {1, n}));
  if (view.has_input(5) && StaticCount(view, 5) > 1 && view.input_rank(5) != 1) {
    return NotLowered("b_zero_point per column with rank ", view.input_rank(5), " (claimed as a 1-D [N] only)");
  }
  PARITY_RETURN_IF_ERROR(RequireCount(view, 6, "y_scale", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 7, "y_zero_point", {1}));
  if (view.has_input(4) && StaticCount(view, 4) == n && n != 1 && view.input_rank(4) != 1) {
    return NotLowered("b_scale per column with rank ", view.input_rank(4), " (claimed as a 1-D [N] only)");
  }
  const std::optional<DataType> out_type = view.has_input(7) ? view.input_type(7) : view.input_type(0);
  if (!IsEightBit(out_type)) return NotLowered("the output is not int8 or uint8");
  return Prepared(std::make_unique<IntMatMulNode>(*view.input_type(0), Operands{0, 2, 3, 5}, Finish::kQLinear,
                                                  Scaling{1, 4, 6, 7, -1, *out_type}),
                  view);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerConvInteger(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireEightBitOperands(view, 0, 2, 1, 3));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 2, "x_zero_point", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 3, "w_zero_point", {1, Channels(view, 1, true)}));
  int64_t group = 1;
  PARITY_ASSIGN_OR_RETURN(WindowAttrs attrs, ConvAttrs(view, 0, group));
  return Prepared(std::make_unique<IntConvNode>(*view.input_type(0), std::move(attrs), group, Operands{0, 2, 1, 3},
                                                Finish::kInt32, Scaling{}),
                  view);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerQLinearConv(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireEightBitOperands(view, 0, 2, 3, 5));
  PARITY_RETURN_IF_ERROR(RequireScaleTypes(view, {1, 4, 6}));
  const int64_t m = Channels(view, 3, true);
  PARITY_RETURN_IF_ERROR(RequireCount(view, 1, "x_scale", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 2, "x_zero_point", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 4, "w_scale", {1, m}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 5, "w_zero_point", {1, m}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 6, "y_scale", {1}));
  PARITY_RETURN_IF_ERROR(RequireCount(view, 7, "y_zero_point", {1}));
  if (view.has_input(8) && (view.input_type(8) != DataType::kInt32 || StaticCount(view, 8) != m)) {
    return NotLowered("B is not an int32 [M] known before the run");
  }
  const std::optional<DataType> out_type = view.has_input(7) ? view.input_type(7) : view.input_type(0);
  if (!IsEightBit(out_type)) return NotLowered("the output is not int8 or uint8");
  int64_t group = 1;
  PARITY_ASSIGN_OR_RETURN(WindowAttrs attrs, ConvAttrs(view, 0, group));
  return Prepared(std::make_unique<IntConvNode>(*view.input_type(0), std::move(attrs), group, Operands{0, 2, 3, 5},
                                                Finish::kQLinear, Scaling{1, 4, 6, 7, 8, *out_type}),
                  view);
}


// --- QDQ regions --------------------------------------------------------------
//
// DequantizeLinear(x) and DequantizeLinear(w) feeding MatMul or Conv (its
// bias, if any, a float32 value from outside), optionally followed by
// QuantizeLinear: the int32 sums times the scales in double, rounded once
// (to float32, or as QuantizeLinear rounds). The graph instead rounds each
// dequantized value and the product to float32 and divides by y_scale in
// float32 before rounding to the integer: the two can part by one float32
// ULP, or by one quantization step where the graph's value lands next to a
// tie.

template <typename Node>
StatusOr<std::optional<RegionClaim>> ClaimRegion(const RegionView& region, RegionClaim claim, std::unique_ptr<Node> runner) {
  // The runner's shapes are those of the region's inputs: a node with them as
  // its inputs lets it make its primitive now when they are static.
  onnx::NodeProto inputs;
  for (const std::string& name : claim.inputs) inputs.add_input(name);
  Status prepared = runner->Prepare(NodeView(inputs, 0, region.facts()));
  if (!prepared.ok()) return NotLowered(prepared.message());
  claim.runner = std::move(runner);
  return std::optional<RegionClaim>(std::move(claim));
}

StatusOr<std::optional<RegionClaim>> MatMulRegion(const RegionView& region) {
  const onnx::NodeProto& anchor = region.node(region.anchor());
  const NodeView view = region.view(region.anchor());
  const int64_t rank_b = view.input_rank(1);
  PARITY_ASSIGN_OR_RETURN(std::optional<Dequantized> a, FindDequantize(region, anchor.input(0), 1, -1, false));
  PARITY_ASSIGN_OR_RETURN(std::optional<Dequantized> b, FindDequantize(region, anchor.input(1), Channels(view, 1, false),
                                                                       rank_b >= 2 ? rank_b - 1 : -1, true));
  if (!a || !b) return std::optional<RegionClaim>();
  RegionClaim claim;
  claim.nodes = {a->node, b->node, region.anchor()};
  claim.inputs = {a->data, a->scale, a->zero, b->data, b->scale, b->zero};
  Scaling scaling{1, 4, -1, -1, -1, DataType::kFloat};
  Finish finish = Finish::kFloat;
  const int q = FindQuantize(region, region.anchor());
  if (q >= 0) {
    const onnx::NodeProto& qn = region.node(q);
    claim.nodes.push_back(q);
    claim.inputs.push_back(qn.input(1));
    claim.inputs.push_back(qn.input_size() > 2 ? qn.input(2) : "");
    claim.outputs = {qn.output(0)};
    scaling = Scaling{1, 4, 6, 7, -1, *region.view(q).output_type(0)};
    finish = Finish::kQLinear;
  } else {
    claim.outputs = {anchor.output(0)};
  }
  const DataType a_type = *region.view(a->node).input_type(0);
  return ClaimRegion(region, std::move(claim),
                     std::make_unique<IntMatMulNode>(a_type, Operands{0, 2, 3, 5}, finish, scaling));
}

StatusOr<std::optional<RegionClaim>> ConvRegion(const RegionView& region) {
  const onnx::NodeProto& anchor = region.node(region.anchor());
  const NodeView view = region.view(region.anchor());
  PARITY_ASSIGN_OR_RETURN(std::optional<Dequantized> x, FindDequantize(region, anchor.input(0), 1, -1, false));
  PARITY_ASSIGN_OR_RETURN(std::optional<Dequantized> w, FindDequantize(region, anchor.input(1), Channels(view, 1, true), 0, true));
  if (!x || !w) return std::optional<RegionClaim>();
  if (view.has_input(2)) {
    const int producer = region.producer(anchor.input(2));
    if (view.input_type(2) != DataType::kFloat) return NotLowered("a bias that is not float32");
    if (producer >= 0 && region.node(producer).op_type() == "DequantizeLinear") {
      return NotLowered("a dequantized bias (claimed as a float32 value only)");
    }
  }
  int64_t group = 1;
  PARITY_ASSIGN_OR_RETURN(WindowAttrs attrs, ConvAttrs(view, 0, group));
  RegionClaim claim;
  claim.nodes = {x->node, w->node, region.anchor()};
  claim.inputs = {x->data, x->scale, x->zero, w->data, w->scale, w->zero, view.has_input(2) ? anchor.input(2) : ""};
  Scaling scaling{1, 4, -1, -1, 6, DataType::kFloat, true};
  Finish finish = Finish::kFloat;
  const int q = FindQuantize(region, region.anchor());
  if (q >= 0) {
    const onnx::NodeProto& qn = region.node(q);
    claim.nodes.push_back(q);
    claim.inputs.push_back(qn.input(1));
    claim.inputs.push_back(qn.input_size() > 2 ? qn.input(2) : "");
    claim.outputs = {qn.output(0)};
    scaling = Scaling{1, 4, 7, 8, 6, *region.view(q).output_type(0), true};
    finish = Finish::kQLinear;
  } else {
    claim.outputs = {anchor.output(0)};
  }
  const DataType x_type = *region.view(x->node).input_type(0);
  return ClaimRegion(region, std::move(claim),
                     std::make_unique<IntConvNode>(x_type, std::move(attrs), group, Operands{0, 2, 3, 5}, finish, scaling));
}

}  // namespace

void AddQuantizedLowerings(Lowering& lowering) {
  lowering.AddRegion("MatMul", MatMulRegion);
  lowering.AddRegion("Conv", ConvRegion);
  lowering.Add("MatMulInteger", LowerMatMulInteger);
  lowering.Add("QLinearMatMul", LowerQLinearMatMul);
  lowering.Add("ConvInteger", LowerConvInteger);
  lowering.Add("QLinearConv", LowerQLinearConv);
}

}  // namespace parity::adapters::onednn
