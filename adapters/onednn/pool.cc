// The oneDNN lowering of MaxPool, AveragePool, GlobalAveragePool and
// GlobalMaxPool on oneDNN's pooling primitive (1 to 3 spatial dims).
//
// ONNX's window rules, and where oneDNN's differ:
// - ceil_mode adds a last window when the strides do not tile the input,
//   unless it would start past the input and its begin pad; oneDNN takes
//   that window as more right padding (padding_r grown to reach it).
// - An average with count_include_pad divides by the positions inside
//   [-pad_begin, size + pad_end), while oneDNN's include-padding average
//   divides by the whole kernel: they differ exactly when a ceil_mode window
//   reaches past the end pad, which is refused.
// - A window with no input element (pads or dilations wider than the
//   kernel reach) has no maximum and no average in ONNX; refused.
// The edge windows depend on the input's dims, so a pool is claimed only
// when they are known at creation.
#include <algorithm>
#include <string>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

enum class PoolKind { kMax, kAverage };

struct PoolAttrs {
  PoolKind kind = PoolKind::kMax;
  bool global = false;
  bool ceil_mode = false;
  bool include_pad = false;
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> kernel, strides, dilations, pads;  // empty strides, dilations, pads: defaults
};

// ONNX's pooling geometry, in oneDNN's terms (dilates = ONNX - 1).
struct PoolGeometry {
  std::vector<int64_t> out_dims;
  dnnl_dims kernel, strides, dilates, pad_l, pad_r;
  std::vector<int64_t> onnx_pad_r;  // the ONNX end pads, before ceil_mode's growth
};

StatusOr<PoolGeometry> Resolve(const PoolAttrs& a, const std::vector<int64_t>& x) {
  if (x.size() < 3 || x.size() > 5) return InvalidArgument("a pool of a rank-", x.size(), " X (oneDNN takes 3 to 5)");
  const size_t n = x.size() - 2;
  PoolGeometry g;
  g.out_dims = {x[0], x[1]};
  const std::vector<int64_t> kernel = a.global ? std::vector<int64_t>(x.begin() + 2, x.end()) : a.kernel;
  if (kernel.size() != n) return InvalidArgument("kernel_shape has ", kernel.size(), " values for ", n, " spatial dims");
  const std::vector<int64_t> strides = a.strides.empty() ? std::vector<int64_t>(n, 1) : a.strides;
  const std::vector<int64_t> dilations = a.dilations.empty() ? std::vector<int64_t>(n, 1) : a.dilations;
  const std::vector<int64_t> pads = a.pads.empty() ? std::vector<int64_t>(2 * n, 0) : a.pads;
  if (strides.size() != n || dilations.size() != n || pads.size() != 2 * n) {
    return InvalidArgument("strides, dilations or pads do not have one value per spatial axis");
  }
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = x[i + 2], extent = (kernel[i] - 1) * dilations[i] + 1;
    if (in <= 0) return InvalidArgument("an empty spatial dim");
    int64_t begin = pads[i], end = pads[n + i], out = 0;
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] + extent - in);
      begin = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else {
      if (a.auto_pad == "VALID") begin = end = 0;
      const int64_t span = in + begin + end - extent;
      if (span < 0) return InvalidArgument("the window does not fit spatial axis ", i);
      out = span / strides[i] + 1;
      if (a.ceil_mode && span % strides[i] != 0) {
        ++out;
        if ((out - 1) * strides[i] >= in + begin) --out;  // it would start in the end pad
      }
    }
    // Every window must hold an input element.
    for (int64_t o = 0; o < out; ++o) {
      bool real = false;
      for (int64_t j = 0; j < kernel[i] && !real; ++j) {
        const int64_t pos = o * strides[i] - begin + j * dilations[i];
        real = pos >= 0 && pos < in;
      }
      if (!real) return InvalidArgument("window ", o, " of spatial axis ", i, " holds no input element");
    }
    g.out_dims.push_back(out);
    g.kernel.push_back(kernel[i]);
    g.strides.push_back(strides[i]);
    g.dilates.push_back(dilations[i] - 1);
    g.pad_l.push_back(begin);
    g.pad_r.push_back(std::max(end, (out - 1) * strides[i] + extent - in - begin));
    g.onnx_pad_r.push_back(end);
  }
  return g;
}

struct PoolPlan {
  dnnl::pooling_forward primitive;
  dnnl::memory::desc src, dst;
  std::vector<int64_t> out_dims;
  DataType type = DataType::kFloat;
};

class PoolNode final : public ShapedNode<PoolPlan> {
 public:
  PoolNode(DataType type, PoolAttrs attrs) : type_(type), attrs_(std::move(attrs)) {}

 protected:
  StatusOr<PoolPlan> MakePlan(const InputShapes& shapes) override {
    PARITY_ASSIGN_OR_RETURN(PoolGeometry g, Resolve(attrs_, shapes[0]));
    PoolPlan plan;
    plan.type = type_;
    plan.out_dims = g.out_dims;
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(shapes[0], dt);
    plan.dst = PlainDesc(g.out_dims, dt);
    const dnnl::algorithm algorithm = attrs_.kind == PoolKind::kMax ? dnnl::algorithm::pooling_max
                                      : attrs_.include_pad          ? dnnl::algorithm::pooling_avg_include_padding
                                                                    : dnnl::algorithm::pooling_avg_exclude_padding;
    plan.primitive = dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(
        Engine(), dnnl::prop_kind::forward_inference, algorithm, plan.src, plan.dst, g.strides, g.kernel, g.dilates,
        g.pad_l, g.pad_r));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const PoolPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(plan.type, plan.out_dims));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)}, {DNNL_ARG_DST, Wrap(out, plan.dst)}});
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  PoolAttrs attrs_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerPool(const NodeView& view, PoolKind kind, bool global) {
  const std::optional<DataType> type = view.input_type(0);
  const bool integer = type && (*type == DataType::kInt8 || *type == DataType::kUint8);
  if (kind == PoolKind::kMax && !global && integer) {
    // oneDNN's max of int8 and uint8 is exact, as ONNX's is.
  } else {
    PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  }
  if (view.node().output_size() > 1 && !view.node().output(1).empty()) {
    return NotLowered("the Indices output (oneDNN's pooling keeps its workspace in its own layout)");
  }
  const int64_t rank = view.input_rank(0);
  if (rank < 0) return NotLowered("the rank of X is not known before the run");
  if (rank < 3 || rank > 5) return NotLowered("X of rank ", rank, " (oneDNN pools 1 to 3 spatial dims)");
  PoolAttrs a;
  a.kind = kind;
  a.global = global;
  if (!global) {
    a.ceil_mode = view.GetInt("ceil_mode", 0) != 0;
    a.include_pad = kind == PoolKind::kAverage && view.GetInt("count_include_pad", 0) != 0;
    a.auto_pad = view.GetString("auto_pad", "NOTSET");
    if (a.auto_pad != "NOTSET" && a.auto_pad != "VALID" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER") {
      return NotLowered("auto_pad '", a.auto_pad, "'");
    }
    const std::optional<std::vector<int64_t>> kernel = view.GetInts("kernel_shape");
    if (!kernel) return NotLowered("no kernel_shape");
    a.kernel = *kernel;
    a.strides = view.GetInts("strides").value_or(std::vector<int64_t>{});
    a.dilations = view.GetInts("dilations").value_or(std::vector<int64_t>{});
    a.pads = view.GetInts("pads").value_or(std::vector<int64_t>{});
    for (int64_t v : a.kernel) {
      if (v < 1) return NotLowered("a kernel dim of ", v);
    }
    for (int64_t v : a.strides) {
      if (v < 1) return NotLowered("a stride of ", v);
    }
    for (int64_t v : a.dilations) {
      if (v < 1) return NotLowered("a dilation of ", v);
    }
    for (int64_t v : a.pads) {
      if (v < 0) return NotLowered("a negative pad");
    }
    const std::vector<int64_t>* x = view.input_dims(0);
    if (!x) return NotLowered("X's dims are not known before the run (the edge windows depend on them)");
    StatusOr<PoolGeometry> g = Resolve(a, *x);
    if (!g.ok()) return NotLowered(g.status().message());
    for (size_t i = 0; i < g->pad_r.size(); ++i) {
      if (a.include_pad && g->pad_r[i] > g->onnx_pad_r[i]) {
        return NotLowered("count_include_pad with a ceil_mode window past the end pad (ONNX counts only the "
                          "padded input, oneDNN the whole kernel)");
      }
    }
  }
  return Prepared(std::make_unique<PoolNode>(*type, std::move(a)), view);
}

}  // namespace

void AddPoolLowerings(Lowering& lowering) {
  lowering.Add("MaxPool", [](const NodeView& v) { return LowerPool(v, PoolKind::kMax, false); });
  lowering.Add("AveragePool", [](const NodeView& v) { return LowerPool(v, PoolKind::kAverage, false); });
  lowering.Add("GlobalMaxPool", [](const NodeView& v) { return LowerPool(v, PoolKind::kMax, true); });
  lowering.Add("GlobalAveragePool", [](const NodeView& v) { return LowerPool(v, PoolKind::kAverage, true); });
}

}  // namespace parity::adapters::onednn
