// The oneDNN lowering of MatMulInteger and QLinearMatMul on oneDNN's int8
// matmul: int32 accumulation of (A - a_zero_point)(B - b_zero_point), exact;
// QLinearMatMul then scales by a_scale * b_scale / y_scale in float32 and
// rounds half to even and saturates into y's type with y_zero_point added
// (oneDNN's quantized output, as QuantizeLinear's formula is).
//
// oneDNN's int8 matmul takes int8 weights only: a uint8 B is read as the
// int8 B - 128 with its zero point moved by -128 (the differences, and so
// the products, are unchanged). Zero points are per tensor (oneDNN's
// "common" zero points); b_scale may be per column of B (a scales mask on
// B's last dim).
//
// ConvInteger and QLinearConv run oneDNN's int8 convolution with x's zero
// point as its source zero point. oneDNN 3.2's convolution has no weights
// zero point, so w's (per tensor or per output channel, and the -128 of a
// uint8 W read as int8) is applied after it, exactly, in int32:
//   conv(x - xz, w - wz) = conv(x - xz, w) - wz[m] * conv(x - xz, 1)
// where the second convolution (weights of ones, one output per group)
// sums each window of x - xz. QLinearConv's requantization,
// saturate(round_half_even((acc + B) * x_scale * w_scale[m] / y_scale) + yz),
// is then done on the host in double, as ONNX's formula reads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "adapters/onednn/conv_geometry.h"

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

bool IsInt8(std::optional<DataType> t) { return t && (*t == DataType::kInt8 || *t == DataType::kUint8); }

// Where each operand sits among the node's inputs; -1: the operator has none.
struct QuantInputs {
  int a = 0, a_scale = -1, a_zero = 2, b = 1, b_scale = -1, b_zero = 3, y_scale = -1, y_zero = -1;
};
constexpr QuantInputs kMatMulInteger{};
constexpr QuantInputs kQLinearMatMul{0, 1, 2, 3, 4, 5, 6, 7};

struct IntMatMulPlan {
  dnnl::matmul primitive;
  dnnl::memory::desc a, b, y;
  std::vector<int64_t> out_dims;
  DataType out_type = DataType::kInt32;
  bool per_column_scale = false;
};

// One element of a zero-point tensor as an int32; 0 when absent.
int32_t ZeroPoint(const KernelContext& ctx, int input) {
  if (input < 0 || !ctx.has_input(static_cast<size_t>(input))) return 0;
  return static_cast<int32_t>(ctx.tensor(static_cast<size_t>(input)).GetInt64(0));
}

std::vector<float> Scales(const Tensor& t) {
  const std::vector<double> d = t.ToDoubles();
  return std::vector<float>(d.begin(), d.end());  // float32, float16 or bfloat16 scales: exact in float
}

dnnl::memory HostMemory(const dnnl::memory::desc& desc, void* data) { return dnnl::memory(desc, Engine(), data); }

class IntMatMulNode final : public ShapedNode<IntMatMulPlan> {
 public:
  IntMatMulNode(QuantInputs in, DataType a_type, DataType b_type, DataType out_type)
      : in_(in), a_type_(a_type), b_type_(b_type), out_type_(out_type) {}

 protected:
  StatusOr<IntMatMulPlan> MakePlan(const InputShapes& shapes) override {
    std::vector<int64_t> a = shapes[static_cast<size_t>(in_.a)], b = shapes[static_cast<size_t>(in_.b)];
    if (a.size() < 2 || b.size() < 2) return InvalidArgument("a 1-D or scalar operand");
    const size_t rank = std::max(a.size(), b.size());
    a = LeftPad(a, rank);
    b = LeftPad(b, rank);
    if (a[rank - 1] != b[rank - 2]) return InvalidArgument("inner dims ", a[rank - 1], " and ", b[rank - 2], " differ");
    std::vector<int64_t> c(rank);
    for (size_t i = 0; i + 2 < rank; ++i) {
      if (a[i] != b[i] && a[i] != 1 && b[i] != 1) return InvalidArgument("batch dims do not broadcast");
      c[i] = (a[i] == 0 || b[i] == 0) ? 0 : std::max(a[i], b[i]);
    }
    c[rank - 2] = a[rank - 2];
    c[rank - 1] = b[rank - 1];
    IntMatMulPlan plan;
    plan.out_type = out_type_;
    plan.out_dims = c;
    plan.a = PlainDesc(a, *DnnlType(a_type_));
    plan.b = PlainDesc(b, dnnl_dt::s8);  // uint8 B is shifted into int8 at run
    plan.y = PlainDesc(c, *DnnlType(out_type_));
    dnnl::primitive_attr attr;
    attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
    attr.set_zero_points_mask(DNNL_ARG_WEIGHTS, 0);
    if (in_.a_scale >= 0) {
      const std::vector<int64_t>& bs = shapes[static_cast<size_t>(in_.b_scale)];
      int64_t count = 1;
      for (int64_t d : bs) count *= d;
      plan.per_column_scale = count != 1;
      if (plan.per_column_scale && count != c[rank - 1]) {
        return InvalidArgument("b_scale has ", count, " values for ", c[rank - 1], " columns");
      }
      attr.set_scales_mask(DNNL_ARG_SRC, 0);
      attr.set_scales_mask(DNNL_ARG_WEIGHTS, plan.per_column_scale ? 1 << (rank - 1) : 0);
    }
    if (in_.y_scale >= 0) {
      attr.set_scales_mask(DNNL_ARG_DST, 0);
      attr.set_zero_points_mask(DNNL_ARG_DST, 0);
    }
    plan.primitive = dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), plan.a, plan.b, plan.y, attr));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const IntMatMulPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.out_type, plan.out_dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    const Tensor& a = ctx.tensor(static_cast<size_t>(in_.a));
    const Tensor& b = ctx.tensor(static_cast<size_t>(in_.b));
    int32_t a_zero = ZeroPoint(ctx, in_.a_zero), b_zero = ZeroPoint(ctx, in_.b_zero), y_zero = ZeroPoint(ctx, in_.y_zero);
    std::vector<uint8_t> shifted;  // a uint8 B as int8: b - 128, its zero point moved with it
    const void* b_data = b.raw_bytes();
    if (b_type_ == DataType::kUint8) {
      shifted.resize(b.byte_size());
      for (size_t i = 0; i < shifted.size(); ++i) shifted[i] = b.raw_bytes()[i] ^ 0x80;
      b_data = shifted.data();
      b_zero -= 128;
    }
    const dnnl::memory::desc one_s32({1}, dnnl_dt::s32, {1});
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, Wrap(a, plan.a)},
        {DNNL_ARG_WEIGHTS, HostMemory(plan.b, const_cast<void*>(b_data))},
        {DNNL_ARG_DST, Wrap(out, plan.y)},
        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, HostMemory(one_s32, &a_zero)},
        {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_WEIGHTS, HostMemory(one_s32, &b_zero)}};
    std::vector<float> a_scale, b_scale, y_scale;
    const dnnl::memory::desc one_f32({1}, dnnl_dt::f32, {1});
    if (in_.a_scale >= 0) {
      a_scale = Scales(ctx.tensor(static_cast<size_t>(in_.a_scale)));
      b_scale = Scales(ctx.tensor(static_cast<size_t>(in_.b_scale)));
      const int64_t nb = static_cast<int64_t>(b_scale.size());
      args[DNNL_ARG_ATTR_SCALES | DNNL_ARG_SRC] = HostMemory(one_f32, a_scale.data());
      args[DNNL_ARG_ATTR_SCALES | DNNL_ARG_WEIGHTS] =
          HostMemory(dnnl::memory::desc({nb}, dnnl_dt::f32, {1}), b_scale.data());
    }
    if (in_.y_scale >= 0) {
      y_scale = Scales(ctx.tensor(static_cast<size_t>(in_.y_scale)));
      args[DNNL_ARG_ATTR_SCALES | DNNL_ARG_DST] = HostMemory(one_f32, y_scale.data());
      args[DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_DST] = HostMemory(one_s32, &y_zero);
    }
    if (a.size() == 0 || b.size() == 0) {
      // K = 0: sums of nothing. MatMulInteger's are 0; QLinearMatMul's are y_zero_point.
      const int64_t fill = in_.y_scale >= 0 ? y_zero : 0;
      for (int64_t i = 0; i < out.size(); ++i) {
        if (fill == 0) {
          std::fill(out.mutable_raw_bytes(), out.mutable_raw_bytes() + out.byte_size(), 0);  // 0 of any type
          break;
        }
        if (plan.out_type == DataType::kInt32) {
          const int32_t v = static_cast<int32_t>(fill);
          std::memcpy(out.mutable_raw_bytes() + 4 * i, &v, 4);
        } else {
          out.mutable_raw_bytes()[i] = static_cast<uint8_t>(fill);
        }
      }
      return std::vector<Value>{Value::FromTensor(std::move(out))};
    }
    plan.primitive.execute(Stream(), args);
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  QuantInputs in_;
  DataType a_type_, b_type_, out_type_;
};

// A zero point or scale oneDNN takes for the whole tensor: one element.
Status RequireOneValue(const NodeView& view, int input, const char* name) {
  if (input < 0 || !view.has_input(input)) return Status::Ok();
  const std::vector<int64_t>* dims = view.input_dims(input);
  if (!dims) return NotLowered(name, "'s dims are not known before the run");
  int64_t count = 1;
  for (int64_t d : *dims) count *= d;
  if (count != 1) return NotLowered(name, " with ", count, " values (oneDNN's zero points and these scales are per tensor)");
  return Status::Ok();
}

StatusOr<std::unique_ptr<LoweredNode>> LowerIntMatMul(const NodeView& view, const QuantInputs& in) {
  const std::optional<DataType> a = view.input_type(in.a), b = view.input_type(in.b);
  if (!IsInt8(a) || !IsInt8(b)) return NotLowered("A and B must be int8 or uint8 (oneDNN's int8 matmul)");
  if (view.input_rank(in.a) < 2 || view.input_rank(in.b) < 2) {
    return NotLowered("a 1-D operand or one of unknown rank");
  }
  if (in.a_zero >= 0 && view.has_input(in.a_zero) && view.input_type(in.a_zero) != a) {
    return NotLowered("a_zero_point's type differs from A's");
  }
  if (in.b_zero >= 0 && view.has_input(in.b_zero) && view.input_type(in.b_zero) != b) {
    return NotLowered("b_zero_point's type differs from B's");
  }
  PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.a_zero, "a_zero_point"));
  PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.b_zero, "b_zero_point"));
  DataType out_type = DataType::kInt32;
  if (in.y_scale >= 0) {
    const std::optional<DataType> y = view.input_type(in.y_zero);
    if (!view.has_input(in.y_zero) || !IsInt8(y)) return NotLowered("y_zero_point absent or not int8 or uint8");
    out_type = *y;
    for (int s : {in.a_scale, in.b_scale, in.y_scale}) {
      const std::optional<DataType> t = view.input_type(s);
      if (!t || (*t != DataType::kFloat && *t != DataType::kFloat16 && *t != DataType::kBfloat16)) {
        return NotLowered("a scale that is not float32, float16 or bfloat16");
      }
    }
    PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.a_scale, "a_scale"));
    PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.y_scale, "y_scale"));
    PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.y_zero, "y_zero_point"));
    if (!view.input_dims(in.b_scale) || view.input_dims(in.b_scale)->size() > 1) {
      return NotLowered("b_scale that is not a scalar or 1-D of known size");
    }
  }
  return Prepared(std::make_unique<IntMatMulNode>(in, *a, *b, out_type), view);
}


// The QDQ form of a quantized MatMul, as one region:
//   DequantizeLinear(aq) and DequantizeLinear(wq) feeding MatMul, and
//   optionally a QuantizeLinear reading only the MatMul's output.
// The graph computes in float: each dequantized value rounded to float32,
// then a float32 MatMul (and QuantizeLinear rounding that). The region
// computes what those nodes stand for: oneDNN's exact int32 sums of
// (aq - az) wq, less wz[n] times the row sums of aq - az (w's zero point
// may be per column, which oneDNN's matmul does not take), scaled once in
// double by as * ws[n] (and / ys, rounded half to even and saturated, with
// the QuantizeLinear). Its float output is closer to the exact value than
// the graph's; a quantized output may differ from the graph's by one step
// where the graph's float result lies within its own rounding of a tie.
// Inputs: aq, as, az, wq, ws, wz, [ys, yz]; W is 2-D (a weight matrix).
class QdqMatMulNode final : public LoweredNode {
 public:
  QdqMatMulNode(DataType a_type, DataType w_type, DataType out_type, bool quantize)
      : sums_(QuantInputs{0, -1, 2, 3, -1, -1, -1, -1}, a_type, w_type, DataType::kInt32),
        out_type_(out_type), quantize_(quantize) {}

  Status Prepare(const NodeView& view) { return sums_.Prepare(view); }
  bool deferred() const override { return sums_.deferred(); }

  StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(std::vector<Value> acc_value, sums_.Run(ctx));
    const Tensor& acc = acc_value[0].tensor();
    const Tensor& a = ctx.tensor(0);
    const int64_t n_cols = ctx.tensor(3).shape()[1], k = ctx.tensor(3).shape()[0];
    const Tensor& ws = ctx.tensor(4);
    if (ws.size() != 1 && ws.size() != n_cols) return ctx.Error("w's scale has ", ws.size(), " values for ", n_cols, " columns");
    std::vector<int64_t> wz(static_cast<size_t>(n_cols), 0);
    if (ctx.has_input(5)) {
      const Tensor& z = ctx.tensor(5);
      if (z.size() != ws.size()) return ctx.Error("w's zero point and scale differ in size");
      for (int64_t n = 0; n < n_cols; ++n) wz[static_cast<size_t>(n)] = z.GetInt64(z.size() == 1 ? 0 : n);
    }
    const int64_t az = ZeroPoint(ctx, 2);
    const double as = ctx.tensor(1).GetDouble(0);
    double ys = 1;
    int64_t yz = 0;
    if (quantize_) {
      ys = ctx.tensor(6).GetDouble(0);
      yz = ZeroPoint(ctx, 7);
    }
    // Row sums of aq - az, for the per-column zero point of w.
    const int64_t rows = k > 0 ? a.size() / k : acc.size() / std::max<int64_t>(n_cols, 1);
    std::vector<int64_t> row_sums(static_cast<size_t>(rows), 0);
    for (int64_t r = 0; r < rows && k > 0; ++r) {
      for (int64_t j = 0; j < k; ++j) row_sums[static_cast<size_t>(r)] += a.GetInt64(r * k + j) - az;
    }
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(out_type_, acc.shape()));
    const int32_t* sums = reinterpret_cast<const int32_t*>(acc.raw_bytes());
    const double lo = out_type_ == DataType::kUint8 ? 0 : -128, hi = out_type_ == DataType::kUint8 ? 255 : 127;
    for (int64_t i = 0; i < out.size(); ++i) {
      const int64_t n = i % n_cols, r = i / n_cols;
      const int64_t exact = sums[i] - wz[static_cast<size_t>(n)] * row_sums[static_cast<size_t>(r)];
      const double real = static_cast<double>(exact) * as * ws.GetDouble(ws.size() == 1 ? 0 : n);
      if (!quantize_) {
        const float v = static_cast<float>(real);
        std::memcpy(out.mutable_raw_bytes() + 4 * i, &v, 4);
        continue;
      }
      const double scaled = real / ys;
      const double q = std::clamp((std::isnan(scaled) ? 0.0 : std::nearbyint(scaled)) + static_cast<double>(yz), lo, hi);
      if (out_type_ == DataType::kUint8) {
        out.mutable_raw_bytes()[i] = static_cast<uint8_t>(q);
      } else {
        const int8_t v = static_cast<int8_t>(q);
        std::memcpy(out.mutable_raw_bytes() + i, &v, 1);
      }
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  IntMatMulNode sums_;
  DataType out_type_;
  bool quantize_;
};

bool IsDequantize(const RegionView& v, int node, int reader) {
  return node >= 0 && !v.taken(node) && v.node(node).op_type() == "DequantizeLinear" &&
         CanonicalDomain(v.node(node).domain()).empty() && v.sole_consumer(node) == reader;
}

// A DequantizeLinear (or QuantizeLinear) with a float32 scale and an 8-bit
// quantized side, per tensor unless `per_axis` >= 0 names the one axis its
// scale and zero point may run along.
Status RequireQdqParams(const NodeView& n, int q_input, int64_t per_axis, const std::string& what) {
  if (n.GetInt("block_size", 0) != 0) return NotLowered(what, ": blocked quantization");
  if (n.GetInt("output_dtype", 0) != 0) return NotLowered(what, ": an output_dtype attribute");
  if (n.input_type(1) != DataType::kFloat) return NotLowered(what, ": a scale that is not float32");
  const std::optional<DataType> q = n.input_type(q_input);
  if (!IsInt8(q)) return NotLowered(what, ": not int8 or uint8");
  if (n.has_input(2) && n.input_type(2) != q) return NotLowered(what, ": a zero point of another type");
  const std::vector<int64_t>* scale = n.input_dims(1);
  if (!scale) return NotLowered(what, ": a scale of unknown dims");
  int64_t count = 1;
  for (int64_t d : *scale) count *= d;
  if (per_axis >= 0 && scale->size() == 1 && count != 1) {
    int64_t axis = n.GetInt("axis", 1);
    if (axis < 0) axis += n.input_rank(0);
    if (axis != per_axis) return NotLowered(what, ": a scale along axis ", axis, " (the region scales W per column)");
    return Status::Ok();
  }
  PARITY_RETURN_IF_ERROR(RequireOneValue(n, 2, (what + "'s zero point").c_str()));
  return RequireOneValue(n, 1, (what + "'s scale").c_str());
}

StatusOr<std::optional<RegionClaim>> QdqMatMulRegion(const RegionView& v) {
  const onnx::NodeProto& mm = v.node(v.anchor());
  if (mm.input_size() != 2) return std::optional<RegionClaim>();
  const int dx = v.producer(mm.input(0)), dw = v.producer(mm.input(1));
  if (dx == dw || !IsDequantize(v, dx, v.anchor()) || !IsDequantize(v, dw, v.anchor())) {
    return std::optional<RegionClaim>();
  }
  const NodeView x = v.view(dx), w = v.view(dw);
  if (x.input_rank(0) < 2 || w.input_rank(0) != 2) return NotLowered("QDQ MatMul: A of rank < 2 or W not 2-D");
  PARITY_RETURN_IF_ERROR(RequireQdqParams(x, 0, -1, "QDQ MatMul's A"));
  PARITY_RETURN_IF_ERROR(RequireQdqParams(w, 0, 1, "QDQ MatMul's W"));
  RegionClaim claim;
  claim.nodes = {dx, dw, v.anchor()};
  claim.inputs = {x.node().input(0), x.node().input(1), x.has_input(2) ? x.node().input(2) : "",
                  w.node().input(0), w.node().input(1), w.has_input(2) ? w.node().input(2) : ""};
  DataType out_type = DataType::kFloat;
  const int q = v.sole_consumer(v.anchor());
  if (q >= 0 && v.node(q).op_type() == "QuantizeLinear" && CanonicalDomain(v.node(q).domain()).empty()) {
    const NodeView qv = v.view(q);
    // Without a zero point QuantizeLinear makes uint8 (or its output_dtype): left to its own lowering.
    if (qv.has_input(2) && RequireQdqParams(qv, 2, -1, "QDQ MatMul's Y").ok()) {
      claim.nodes.push_back(q);
      claim.inputs.push_back(qv.node().input(1));
      claim.inputs.push_back(qv.node().input(2));
      out_type = *qv.input_type(2);
    }
  }
  claim.outputs = {v.node(claim.nodes.back()).output(0)};
  // A node of the region's own inputs, for the plan's shapes at creation.
  onnx::NodeProto inputs_node;
  for (const std::string& name : claim.inputs) inputs_node.add_input(name);
  const NodeView inputs_view(inputs_node, 0, v.facts());
  auto runner = std::make_unique<QdqMatMulNode>(*x.input_type(0), *w.input_type(0), out_type, claim.nodes.size() == 4);
  Status prepared = runner->Prepare(inputs_view);
  if (!prepared.ok()) return NotLowered("QDQ MatMul: ", prepared.message());
  claim.runner = std::move(runner);
  return std::optional<RegionClaim>(std::move(claim));
}

// Where each operand of a quantized convolution sits; -1: none.
struct QConvInputs {
  int x = 0, x_scale = -1, x_zero = 2, w = 1, w_scale = -1, w_zero = 3, y_scale = -1, y_zero = -1, bias = -1;
};
constexpr QConvInputs kConvInteger{};
constexpr QConvInputs kQLinearConv{0, 1, 2, 3, 4, 5, 6, 7, 8};

struct QConvPlan {
  dnnl::convolution_forward conv, window_sums;  // window_sums: weights of ones, one output per group
  dnnl::memory::desc x, w, acc, ones_w, sums;
  std::vector<int8_t> ones;
  std::vector<int64_t> out_dims;
  int64_t out_channels = 0, group = 1, plane = 1;  // plane: output positions per channel
};

class QConvNode final : public ShapedNode<QConvPlan> {
 public:
  QConvNode(QConvInputs in, ConvAttrs attrs, DataType x_type, DataType w_type, DataType out_type)
      : in_(in), attrs_(std::move(attrs)), x_type_(x_type), w_type_(w_type), out_type_(out_type) {}

 protected:
  StatusOr<QConvPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[static_cast<size_t>(in_.x)];
    const std::vector<int64_t>& w = shapes[static_cast<size_t>(in_.w)];
    PARITY_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConvGeometry(attrs_, x, w));
    QConvPlan plan;
    plan.out_dims = g.out_dims;
    plan.out_channels = g.out_dims[1];
    plan.group = attrs_.group;
    for (size_t i = 2; i < g.out_dims.size(); ++i) plan.plane *= g.out_dims[i];
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    std::vector<int64_t> wd = kernel, ones_d = kernel;
    wd.insert(wd.begin(), {plan.out_channels / plan.group, w[1]});
    ones_d.insert(ones_d.begin(), {1, w[1]});
    if (plan.group > 1) {
      wd.insert(wd.begin(), plan.group);
      ones_d.insert(ones_d.begin(), plan.group);
    }
    plan.x = PlainDesc(x, *DnnlType(x_type_));
    plan.w = PlainDesc(wd, dnnl_dt::s8);  // a uint8 W is shifted into int8 at run
    plan.acc = PlainDesc(g.out_dims, dnnl_dt::s32);
    plan.ones_w = PlainDesc(ones_d, dnnl_dt::s8);
    std::vector<int64_t> sums_dims = g.out_dims;
    sums_dims[1] = plan.group;
    plan.sums = PlainDesc(sums_dims, dnnl_dt::s32);
    int64_t ones_count = 1;
    for (int64_t d : ones_d) ones_count *= d;
    plan.ones.assign(static_cast<size_t>(ones_count), 1);
    dnnl::primitive_attr attr;
    attr.set_zero_points_mask(DNNL_ARG_SRC, 0);
    const auto fwd = dnnl::prop_kind::forward_inference;
    const auto direct = dnnl::algorithm::convolution_direct;
    plan.conv = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(
        Engine(), fwd, direct, plan.x, plan.w, plan.acc, g.strides, g.dilates, g.pad_l, g.pad_r, attr));
    plan.window_sums = dnnl::convolution_forward(dnnl::convolution_forward::primitive_desc(
        Engine(), fwd, direct, plan.x, plan.ones_w, plan.sums, g.strides, g.dilates, g.pad_l, g.pad_r, attr));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const QConvPlan& plan, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(static_cast<size_t>(in_.x));
    const Tensor& w = ctx.tensor(static_cast<size_t>(in_.w));
    int32_t x_zero = ZeroPoint(ctx, in_.x_zero);
    // w's zero point per output channel, moved by -128 with a uint8 W.
    std::vector<int64_t> w_zero(static_cast<size_t>(plan.out_channels), 0);
    if (ctx.has_input(static_cast<size_t>(in_.w_zero))) {
      const Tensor& z = ctx.tensor(static_cast<size_t>(in_.w_zero));
      if (z.size() != 1 && z.size() != plan.out_channels) {
        return ctx.Error("w_zero_point has ", z.size(), " values for ", plan.out_channels, " output channels");
      }
      for (int64_t m = 0; m < plan.out_channels; ++m) w_zero[static_cast<size_t>(m)] = z.GetInt64(z.size() == 1 ? 0 : m);
    }
    std::vector<uint8_t> shifted;
    const void* w_data = w.raw_bytes();
    if (w_type_ == DataType::kUint8) {
      shifted.resize(w.byte_size());
      for (size_t i = 0; i < shifted.size(); ++i) shifted[i] = w.raw_bytes()[i] ^ 0x80;
      w_data = shifted.data();
      for (int64_t& z : w_zero) z -= 128;
    }
    const bool any_w_zero = std::any_of(w_zero.begin(), w_zero.end(), [](int64_t z) { return z != 0; });
    PARITY_ASSIGN_OR_RETURN(Tensor acc, NewTensor(DataType::kInt32, plan.out_dims));
    std::vector<int32_t> sums;
    if (acc.size() > 0) {
      const dnnl::memory zero_mem(dnnl::memory::desc({1}, dnnl_dt::s32, {1}), Engine(), &x_zero);
      const dnnl::memory x_mem = Wrap(x, plan.x);
      plan.conv.execute(Stream(), {{DNNL_ARG_SRC, x_mem},
                                   {DNNL_ARG_WEIGHTS, HostMemory(plan.w, const_cast<void*>(w_data))},
                                   {DNNL_ARG_DST, Wrap(acc, plan.acc)},
                                   {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_mem}});
      if (any_w_zero) {
        sums.resize(static_cast<size_t>(acc.size() / plan.out_channels * plan.group));
        plan.window_sums.execute(Stream(), {{DNNL_ARG_SRC, x_mem},
                                            {DNNL_ARG_WEIGHTS, HostMemory(plan.ones_w, const_cast<int8_t*>(plan.ones.data()))},
                                            {DNNL_ARG_DST, HostMemory(plan.sums, sums.data())},
                                            {DNNL_ARG_ATTR_ZERO_POINTS | DNNL_ARG_SRC, zero_mem}});
      }
      Stream().wait();
    }
    int32_t* a = reinterpret_cast<int32_t*>(acc.mutable_raw_bytes());
    const int64_t per_group = plan.out_channels / plan.group;
    if (any_w_zero) {
      for (int64_t i = 0; i < acc.size(); ++i) {
        const int64_t m = (i / plan.plane) % plan.out_channels, n = i / plan.plane / plan.out_channels;
        const int64_t s = sums[static_cast<size_t>((n * plan.group + m / per_group) * plan.plane + i % plan.plane)];
        a[i] = static_cast<int32_t>(a[i] - w_zero[static_cast<size_t>(m)] * s);
      }
    }
    if (in_.y_scale < 0) return std::vector<Value>{Value::FromTensor(std::move(acc))};
    return Requantize(plan, ctx, acc);
  }

 private:
  StatusOr<std::vector<Value>> Requantize(const QConvPlan& plan, const KernelContext& ctx, const Tensor& acc) {
    const Tensor& ws = ctx.tensor(static_cast<size_t>(in_.w_scale));
    if (ws.size() != 1 && ws.size() != plan.out_channels) {
      return ctx.Error("w_scale has ", ws.size(), " values for ", plan.out_channels, " output channels");
    }
    const double xs = ctx.tensor(static_cast<size_t>(in_.x_scale)).GetDouble(0);
    const double ys = ctx.tensor(static_cast<size_t>(in_.y_scale)).GetDouble(0);
    const int64_t y_zero = ZeroPoint(ctx, in_.y_zero);
    std::vector<int64_t> bias(static_cast<size_t>(plan.out_channels), 0);
    if (in_.bias >= 0 && ctx.has_input(static_cast<size_t>(in_.bias))) {
      const Tensor& b = ctx.tensor(static_cast<size_t>(in_.bias));
      if (b.size() != plan.out_channels) return ctx.Error("B has ", b.size(), " values for ", plan.out_channels, " channels");
      bias = b.ToInt64s();
    }
    const double lo = out_type_ == DataType::kUint8 ? 0 : -128, hi = out_type_ == DataType::kUint8 ? 255 : 127;
    PARITY_ASSIGN_OR_RETURN(Tensor y, NewTensor(out_type_, plan.out_dims));
    const int32_t* a = reinterpret_cast<const int32_t*>(acc.raw_bytes());
    uint8_t* out = y.mutable_raw_bytes();
    for (int64_t i = 0; i < y.size(); ++i) {
      const int64_t m = (i / plan.plane) % plan.out_channels;
      const double scale = xs * ws.GetDouble(ws.size() == 1 ? 0 : m) / ys;
      const double real = static_cast<double>(a[i] + bias[static_cast<size_t>(m)]) * scale;
      const double q = std::clamp((std::isnan(real) ? 0.0 : std::nearbyint(real)) + static_cast<double>(y_zero), lo, hi);
      if (out_type_ == DataType::kUint8) {
        out[i] = static_cast<uint8_t>(q);
      } else {
        const int8_t v = static_cast<int8_t>(q);
        std::memcpy(out + i, &v, 1);
      }
    }
    return std::vector<Value>{Value::FromTensor(std::move(y))};
  }

  QConvInputs in_;
  ConvAttrs attrs_;
  DataType x_type_, w_type_, out_type_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerQConv(const NodeView& view, const QConvInputs& in) {
  const std::optional<DataType> x = view.input_type(in.x), w = view.input_type(in.w);
  if (!IsInt8(x) || !IsInt8(w)) return NotLowered("x and w must be int8 or uint8 (oneDNN's int8 convolution)");
  if (view.has_input(in.x_zero) && view.input_type(in.x_zero) != x) return NotLowered("x_zero_point's type differs from x's");
  if (view.has_input(in.w_zero) && view.input_type(in.w_zero) != w) return NotLowered("w_zero_point's type differs from w's");
  PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.x_zero, "x_zero_point"));
  PARITY_ASSIGN_OR_RETURN(ConvAttrs attrs, ReadConvAttrs(view, false));
  DataType out_type = DataType::kInt32;
  if (in.y_scale >= 0) {
    const std::optional<DataType> y = view.input_type(in.y_zero);
    out_type = view.has_input(in.y_zero) ? y.value_or(DataType::kUndefined) : *x;
    if (!IsInt8(out_type)) return NotLowered("y_zero_point is not int8 or uint8");
    PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.x_scale, "x_scale"));
    PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.y_scale, "y_scale"));
    PARITY_RETURN_IF_ERROR(RequireOneValue(view, in.y_zero, "y_zero_point"));
    if (view.has_input(in.bias) && view.input_type(in.bias) != DataType::kInt32) return NotLowered("B that is not int32");
  }
  return Prepared(std::make_unique<QConvNode>(in, std::move(attrs), *x, *w, out_type), view);
}

}  // namespace

void AddQuantizedLowerings(Lowering& lowering) {
  lowering.Add("MatMulInteger", [](const NodeView& v) { return LowerIntMatMul(v, kMatMulInteger); });
  lowering.Add("QLinearMatMul", [](const NodeView& v) { return LowerIntMatMul(v, kQLinearMatMul); });
  lowering.AddRegion("MatMul", QdqMatMulRegion);
  lowering.Add("ConvInteger", [](const NodeView& v) { return LowerQConv(v, kConvInteger); });
  lowering.Add("QLinearConv", [](const NodeView& v) { return LowerQConv(v, kQLinearConv); });
}

}  // namespace parity::adapters::onednn
