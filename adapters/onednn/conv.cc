// The oneDNN lowering of Conv and ConvTranspose on oneDNN's convolution and
// deconvolution primitives: 1-D, 2-D and 3-D, float32 and the 16-bit floats
// this CPU computes (accumulated in float32), with groups, strides,
// dilations (oneDNN counts the gaps: ONNX dilation - 1), asymmetric pads as
// padding_l / padding_r, and auto_pad resolved from the input's dims when the
// plan is made. The primitive picks its own layouts (format_tag::any); the
// plain ONNX tensors are reordered into them and back around each run.
#include <algorithm>
#include <string>

#include "adapters/onednn/conv_geometry.h"
#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

std::vector<int64_t> Or(const std::vector<int64_t>& given, size_t n, int64_t fallback) {
  return given.empty() ? std::vector<int64_t>(n, fallback) : given;
}

}  // namespace

StatusOr<ConvGeometry> ResolveConvGeometry(const ConvAttrs& a, const std::vector<int64_t>& x,
                                           const std::vector<int64_t>& w) {
  const std::string op = a.transpose ? "ConvTranspose" : "Conv";
  if (x.size() < 3 || x.size() > 5) return InvalidArgument(op, " of a rank-", x.size(), " X (oneDNN takes 3 to 5)");
  if (w.size() != x.size()) return InvalidArgument(op, ": W has rank ", w.size(), ", X has rank ", x.size());
  const size_t n = x.size() - 2;
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (!a.kernel.empty() && a.kernel != kernel) return InvalidArgument(op, ": kernel_shape differs from W's dims");
  const std::vector<int64_t> strides = Or(a.strides, n, 1), dilations = Or(a.dilations, n, 1);
  const std::vector<int64_t> output_padding = Or(a.output_padding, n, 0);
  std::vector<int64_t> pads = Or(a.pads, 2 * n, 0);
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n || output_padding.size() != n) {
    return InvalidArgument(op, ": strides, dilations, pads or output_padding do not have one value per spatial axis");
  }
  // Channels: Conv's W is [M, C/group, k...], ConvTranspose's [C, M/group, k...].
  const int64_t in_channels = x[1];
  if (a.transpose ? w[0] != in_channels : w[1] * a.group != in_channels) {
    return InvalidArgument(op, ": W's channels do not match X's ", in_channels, " with group ", a.group);
  }
  const int64_t out_channels = a.transpose ? w[1] * a.group : w[0];
  if (!a.transpose && out_channels % a.group != 0) return InvalidArgument(op, ": M is not a multiple of group");
  ConvGeometry g;
  g.out_dims = {x[0], out_channels};
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x[i + 2], extent = (kernel[i] - 1) * dilations[i] + 1;
    if (in <= 0 || kernel[i] <= 0) return InvalidArgument(op, ": an empty spatial or kernel dim");
    int64_t begin = pads[i], end = pads[n + i], out = 0;
    if (!a.transpose) {
      if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
        out = (in + strides[i] - 1) / strides[i];
        const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + extent - in);
        begin = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
        end = total - begin;
      } else {
        if (a.auto_pad == "VALID") begin = end = 0;
        const int64_t span = in + begin + end - extent;
        if (span < 0) return InvalidArgument(op, ": the kernel does not fit spatial axis ", i);
        out = span / strides[i] + 1;
      }
      g.pad_r.push_back(end);
    } else {
      // natural: the extent with no padding; oneDNN's excludes output_padding,
      // which it expresses as less padding on the right.
      const int64_t natural = strides[i] * (in - 1) + output_padding[i] + extent;
      const bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
      if (!a.output_shape.empty() || same) {
        out = a.output_shape.empty() ? in * strides[i] : a.output_shape[i];
        const int64_t total = natural - out;
        const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor
        begin = a.auto_pad == "SAME_UPPER" ? half : total - half;
        end = total - begin;
      } else {
        if (a.auto_pad == "VALID") begin = end = 0;
        out = natural - begin - end;
      }
      if (out <= 0) return InvalidArgument(op, ": an output extent of ", out, " on spatial axis ", i);
      g.pad_r.push_back(end - output_padding[i]);
    }
    g.out_dims.push_back(out);
    g.strides.push_back(strides[i]);
    g.dilates.push_back(dilations[i] - 1);
    g.pad_l.push_back(begin);
  }
  return g;
}

namespace {

struct ConvPlan {
  dnnl::primitive primitive;
  // The primitive's layouts and the plain ONNX ones of the same tensors.
  dnnl::memory::desc src, weights, bias, dst;
  dnnl::memory::desc plain_src, plain_weights, plain_dst;
  std::vector<int64_t> out_dims;
  DataType type = DataType::kFloat;
};

// `m` in layout `want`: itself when the layouts agree, else a reordered copy.
dnnl::memory InLayout(const dnnl::memory& m, const dnnl::memory::desc& want) {
  if (m.get_desc() == want) return m;
  dnnl::memory out(want, Engine());
  dnnl::reorder(m, out).execute(Stream(), const_cast<dnnl::memory&>(m), out);
  return out;
}

class ConvNode final : public ShapedNode<ConvPlan> {
 public:
  ConvNode(DataType type, ConvAttrs attrs, bool has_bias) : type_(type), attrs_(std::move(attrs)), has_bias_(has_bias) {}

 protected:
  StatusOr<ConvPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    const std::vector<int64_t>& w = shapes[1];
    PARITY_ASSIGN_OR_RETURN(ConvGeometry g, ResolveConvGeometry(attrs_, x, w));
    const int64_t out_channels = g.out_dims[1];
    if (has_bias_ && shapes[2] != std::vector<int64_t>{out_channels}) {
      return InvalidArgument("B is not of shape [", out_channels, "]");
    }
    ConvPlan plan;
    plan.type = type_;
    plan.out_dims = g.out_dims;
    const dnnl_dt dt = *DnnlType(type_);
    plan.plain_src = PlainDesc(x, dt);
    plan.plain_dst = PlainDesc(g.out_dims, dt);
    // oneDNN's weights are [G, O/G, I/G, k...] (or [O, I, k...] with one group).
    const int64_t group = attrs_.group;
    const std::vector<int64_t> kernel(w.begin() + 2, w.end());
    int64_t k_count = 1;
    for (int64_t k : kernel) k_count *= k;
    dnnl_dims wdims, wstrides;
    if (!attrs_.transpose) {
      // ONNX [M, C/G, k...] is [G, M/G, C/G, k...] in row-major order already.
      std::vector<int64_t> d = kernel;
      d.insert(d.begin(), w[1]);
      d.insert(d.begin(), w[0] / group);
      if (group > 1) d.insert(d.begin(), group);
      plan.plain_weights = PlainDesc(d, dt);
    } else {
      // ONNX [C, M/G, k...] = [G, C/G, M/G, k...]: oneDNN's I and O swapped.
      const int64_t icg = w[0] / group, ocg = w[1];
      if (group > 1) {
        wdims = {group, ocg, icg};
        wstrides = {icg * ocg * k_count, k_count, ocg * k_count};
      } else {
        wdims = {ocg, icg};
        wstrides = {k_count, ocg * k_count};
      }
      dnnl_dims kstrides(kernel.size(), 1);
      for (size_t i = kernel.size() - 1; i-- > 0;) kstrides[i] = kstrides[i + 1] * kernel[i + 1];
      wdims.insert(wdims.end(), kernel.begin(), kernel.end());
      wstrides.insert(wstrides.end(), kstrides.begin(), kstrides.end());
      plan.plain_weights = dnnl::memory::desc(wdims, dt, wstrides);
    }
    const auto any = dnnl::memory::format_tag::any;
    const dnnl::memory::desc src_any(plan.plain_src.get_dims(), dt, any);
    const dnnl::memory::desc w_any(plan.plain_weights.get_dims(), dt, any);
    const dnnl::memory::desc dst_any(plan.plain_dst.get_dims(), dt, any);
    if (has_bias_) plan.bias = PlainDesc({out_channels}, dt);
    const auto fwd = dnnl::prop_kind::forward_inference;
    if (!attrs_.transpose) {
      auto pd = has_bias_ ? dnnl::convolution_forward::primitive_desc(
                                Engine(), fwd, dnnl::algorithm::convolution_direct, src_any, w_any, plan.bias,
                                dst_any, g.strides, g.dilates, g.pad_l, g.pad_r)
                          : dnnl::convolution_forward::primitive_desc(
                                Engine(), fwd, dnnl::algorithm::convolution_direct, src_any, w_any, dst_any,
                                g.strides, g.dilates, g.pad_l, g.pad_r);
      plan.src = pd.src_desc();
      plan.weights = pd.weights_desc();
      plan.dst = pd.dst_desc();
      plan.primitive = dnnl::convolution_forward(pd);
    } else {
      auto pd = has_bias_ ? dnnl::deconvolution_forward::primitive_desc(
                                Engine(), fwd, dnnl::algorithm::deconvolution_direct, src_any, w_any, plan.bias,
                                dst_any, g.strides, g.dilates, g.pad_l, g.pad_r)
                          : dnnl::deconvolution_forward::primitive_desc(
                                Engine(), fwd, dnnl::algorithm::deconvolution_direct, src_any, w_any, dst_any,
                                g.strides, g.dilates, g.pad_l, g.pad_r);
      plan.src = pd.src_desc();
      plan.weights = pd.weights_desc();
      plan.dst = pd.dst_desc();
      plan.primitive = dnnl::deconvolution_forward(pd);
    }
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ConvPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.type, plan.out_dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    const dnnl::memory plain_dst = Wrap(out, plan.plain_dst);
    const dnnl::memory dst = plan.dst == plan.plain_dst ? plain_dst : dnnl::memory(plan.dst, Engine());
    std::unordered_map<int, dnnl::memory> args = {
        {DNNL_ARG_SRC, InLayout(Wrap(ctx.tensor(0), plan.plain_src), plan.src)},
        {DNNL_ARG_WEIGHTS, InLayout(Wrap(ctx.tensor(1), plan.plain_weights), plan.weights)},
        {DNNL_ARG_DST, dst}};
    if (has_bias_) args[DNNL_ARG_BIAS] = Wrap(ctx.tensor(2), plan.bias);
    plan.primitive.execute(Stream(), args);
    if (plan.dst != plan.plain_dst) {
      dnnl::reorder(dst, plain_dst).execute(Stream(), const_cast<dnnl::memory&>(dst),
                                             const_cast<dnnl::memory&>(plain_dst));
    }
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  ConvAttrs attrs_;
  bool has_bias_;
};

}  // namespace

StatusOr<ConvAttrs> ReadConvAttrs(const NodeView& view, bool transpose) {
  const int64_t rank = view.input_rank(0);
  if (rank < 0) return NotLowered("the rank of X is not known before the run");
  if (rank < 3 || rank > 5) return NotLowered("X of rank ", rank, " (oneDNN convolves 1 to 3 spatial dims)");
  ConvAttrs a;
  a.transpose = transpose;
  a.group = view.GetInt("group", 1);
  if (a.group < 1) return NotLowered("group ", a.group);
  a.auto_pad = view.GetString("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER") {
    return NotLowered("auto_pad '", a.auto_pad, "'");
  }
  a.kernel = view.GetInts("kernel_shape").value_or(std::vector<int64_t>{});
  a.strides = view.GetInts("strides").value_or(std::vector<int64_t>{});
  a.dilations = view.GetInts("dilations").value_or(std::vector<int64_t>{});
  a.pads = view.GetInts("pads").value_or(std::vector<int64_t>{});
  const size_t n = static_cast<size_t>(rank - 2);
  for (int64_t s : a.strides) {
    if (s < 1) return NotLowered("a stride of ", s);
  }
  for (int64_t d : a.dilations) {
    if (d < 1) return NotLowered("a dilation of ", d);
  }
  for (int64_t p : a.pads) {
    if (p < 0) return NotLowered("a negative pad");
  }
  if (transpose) {
    a.output_padding = view.GetInts("output_padding").value_or(std::vector<int64_t>{});
    a.output_shape = view.GetInts("output_shape").value_or(std::vector<int64_t>{});
    if (a.output_shape.size() == n + 2) a.output_shape.erase(a.output_shape.begin(), a.output_shape.begin() + 2);
    if (!a.output_shape.empty() && a.output_shape.size() != n) return NotLowered("output_shape of the wrong length");
  }
  return a;
}

namespace {

StatusOr<std::unique_ptr<LoweredNode>> LowerConvLike(const NodeView& view, bool transpose) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2}));
  PARITY_ASSIGN_OR_RETURN(ConvAttrs a, ReadConvAttrs(view, transpose));
  const size_t n = static_cast<size_t>(view.input_rank(0) - 2);
  if (transpose) {
    const bool derived = !a.output_shape.empty() || a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
    // The pads ConvTranspose derives from output_shape (or SAME) depend on
    // X's dims, and oneDNN's deconvolution takes no negative begin pad (an
    // output larger than the input reaches); a negative end pad (an
    // output_padding past the end pad) it decides on when the plan is made,
    // which with unknown dims would be at the run: refused then.
    if (derived && !view.input_dims(0)) {
      return NotLowered("output_shape or SAME auto_pad with X's dims not known before the run");
    }
    const std::vector<int64_t>* x = view.input_dims(0);
    const std::vector<int64_t>* w = view.input_dims(1);
    if (x && w) {
      StatusOr<ConvGeometry> g = ResolveConvGeometry(a, *x, *w);
      if (!g.ok()) return NotLowered(g.status().message());
      for (size_t i = 0; i < n; ++i) {
        if (g->pad_l[i] < 0) {
          return NotLowered("an output_shape beyond what the input reaches (a negative begin pad on spatial axis ", i,
                            "), which oneDNN's deconvolution does not take");
        }
      }
    } else if (!derived) {
      const std::vector<int64_t> pads = Or(a.pads, 2 * n, 0), op = Or(a.output_padding, n, 0);
      if (op.size() != n || pads.size() != 2 * n) return NotLowered("pads or output_padding of the wrong length");
      for (size_t i = 0; i < n; ++i) {
        if (a.auto_pad != "VALID" ? pads[n + i] < op[i] : op[i] > 0) {
          return NotLowered("output_padding larger than the end pad, which oneDNN's deconvolution does not take");
        }
      }
    } else {
      return NotLowered("W's dims are not known before the run");
    }
  }
  return Prepared(std::make_unique<ConvNode>(*view.input_type(0), std::move(a), view.has_input(2)), view);
}

}  // namespace

void AddConvLowerings(Lowering& lowering) {
  lowering.Add("Conv", [](const NodeView& view) { return LowerConvLike(view, false); });
  lowering.Add("ConvTranspose", [](const NodeView& view) { return LowerConvLike(view, true); });
}

}  // namespace parity::adapters::onednn
