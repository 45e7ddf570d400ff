// MaxPool, AveragePool, GlobalMaxPool and GlobalAveragePool on oneDNN's
// pooling primitive, 1-D to 3-D. ceil_mode is an end padding made larger so
// that oneDNN's floor count gives ONNX's ceil count (window.h).
//
// Where oneDNN and ONNX part (each refused, with the reason):
// - count_include_pad: oneDNN divides by the kernel's size, ONNX by the
//   positions inside the padded input; they differ only for a ceil_mode
//   window that runs past the end padding;
// - a window with no input element (pads and dilations can leave one):
//   ONNX's maximum is -inf, its average NaN; oneDNN gives its lowest finite
//   value and 0;
// - the Indices output of MaxPool (oneDNN's workspace is not ONNX's index).
// And one mended: oneDNN's maximum drops NaN (over [1, NaN, 3] it gives 3),
// where ONNX's propagates it; a max pool whose input holds a NaN sets the
// outputs whose windows read one to NaN after the primitive ran.
#include <algorithm>
#include <cmath>
#include <limits>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/onednn/window.h"

namespace parity::adapters::onednn {
namespace {

struct PoolPlan {
  dnnl::pooling_forward primitive;
  dnnl::memory::desc src, dst;
  std::vector<int64_t> out_dims;
  WindowGeometry geometry;
  std::vector<int64_t> strides, dilations;
  bool empty = false;
};

// Whether element i of `t` (a float type) is NaN, from its bits.
bool IsNaNAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat: return std::isnan(t.data<float>()[i]);
    case DataType::kFloat16: {
      const uint16_t b = t.data<uint16_t>()[i];
      return (b & 0x7c00) == 0x7c00 && (b & 0x03ff) != 0;
    }
    case DataType::kBfloat16: {
      const uint16_t b = t.data<uint16_t>()[i];
      return (b & 0x7f80) == 0x7f80 && (b & 0x007f) != 0;
    }
    default: return false;  // integers hold no NaN
  }
}

// Sets to NaN every output of a max pool whose window reads a NaN of `x`.
void PropagateNaN(const PoolPlan& plan, const Tensor& x, Tensor& out) {
  const std::vector<int64_t>& input_dims = x.shape();
  const size_t n = input_dims.size() - 2;
  int64_t in_plane = 1, out_plane = 1;
  for (size_t i = 0; i < n; ++i) {
    in_plane *= input_dims[i + 2];
    out_plane *= plan.out_dims[i + 2];
  }
  std::vector<std::vector<int64_t>> hits(n);
  for (int64_t at = 0; at < x.size(); ++at) {
    if (!IsNaNAt(x, at)) continue;
    // The outputs along each axis whose windows have a tap at the position.
    int64_t rest = at % in_plane;
    for (size_t i = n; i-- > 0;) {
      const int64_t pos = rest % input_dims[i + 2];
      rest /= input_dims[i + 2];
      hits[i].clear();
      for (int64_t j = 0; j < plan.geometry.kernel[i]; ++j) {
        const int64_t start = pos + plan.geometry.pad_begin[i] - j * plan.dilations[i];
        if (start < 0 || start % plan.strides[i] != 0) continue;
        const int64_t o = start / plan.strides[i];
        if (o < plan.out_dims[i + 2]) hits[i].push_back(o);
      }
    }
    // Every combination of them.
    std::vector<size_t> pick(n, 0);
    bool any = std::all_of(hits.begin(), hits.end(), [](const auto& h) { return !h.empty(); });
    while (any) {
      int64_t offset = 0;
      for (size_t i = 0; i < n; ++i) offset = offset * plan.out_dims[i + 2] + hits[i][pick[i]];
      out.SetDouble((at / in_plane) * out_plane + offset, std::numeric_limits<double>::quiet_NaN());
      size_t i = n;
      while (i-- > 0 && ++pick[i] == hits[i].size()) pick[i] = 0;
      any = i < n;
    }
  }
}

enum class PoolKind { kMax, kAverage, kGlobalMax, kGlobalAverage };

// Whether some window of `g` along an axis has no tap inside the input.
bool HasEmptyWindow(const WindowGeometry& g, const std::vector<int64_t>& input, const WindowAttrs& attrs) {
  for (size_t i = 0; i < input.size(); ++i) {
    for (int64_t o = 0; o < g.output[i]; ++o) {
      bool any = false;
      for (int64_t j = 0; j < g.kernel[i] && !any; ++j) {
        const int64_t pos = o * attrs.strides[i] - g.pad_begin[i] + j * attrs.dilations[i];
        any = pos >= 0 && pos < input[i];
      }
      if (!any) return true;
    }
  }
  return false;
}

class PoolNode final : public ShapedNode<PoolPlan> {
 public:
  PoolNode(DataType type, PoolKind kind, WindowAttrs attrs, bool include_pad)
      : type_(type), kind_(kind), attrs_(std::move(attrs)), include_pad_(include_pad) {}

 protected:
  StatusOr<PoolPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    if (x.size() < 3 || x.size() > 5) return InvalidArgument("X of rank ", x.size(), ", expected 3 to 5");
    const size_t n = x.size() - 2;
    const std::vector<int64_t> input(x.begin() + 2, x.end());
    WindowAttrs attrs = attrs_;
    const bool global = kind_ == PoolKind::kGlobalMax || kind_ == PoolKind::kGlobalAverage;
    if (global) {
      attrs.kernel = input;
      attrs.strides.assign(n, 1);
      attrs.dilations.assign(n, 1);
      attrs.pads.assign(2 * n, 0);
    }
    PARITY_ASSIGN_OR_RETURN(WindowGeometry g, ResolveGeometry(attrs, input, attrs.kernel, /*pool=*/true));
    PoolPlan plan;
    plan.geometry = g;
    plan.strides = attrs.strides;
    plan.dilations = attrs.dilations;
    plan.out_dims = {x[0], x[1]};
    plan.out_dims.insert(plan.out_dims.end(), g.output.begin(), g.output.end());
    int64_t in_count = 1, out_count = 1;
    for (int64_t d : x) in_count *= d;
    for (int64_t d : plan.out_dims) out_count *= d;
    if (global && in_count == 0 && out_count > 0) return InvalidArgument("a global pool over an empty spatial extent");
    plan.empty = out_count == 0;
    if (plan.empty) return plan;
    if (HasEmptyWindow(g, input, attrs)) {
      return InvalidArgument("a window with no input element (ONNX gives -inf or NaN there, oneDNN a finite value)");
    }
    for (size_t i = 0; i < n && include_pad_; ++i) {
      const int64_t extent = (g.kernel[i] - 1) * attrs.dilations[i] + 1;
      if ((g.output[i] - 1) * attrs.strides[i] + extent > input[i] + g.pad_begin[i] + g.pad_end[i]) {
        return InvalidArgument(
            "a ceil_mode window past the end padding: with count_include_pad ONNX leaves those positions out of the "
            "divisor, oneDNN counts the whole kernel");
      }
    }
    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(x, dt);
    plan.dst = PlainDesc(plan.out_dims, dt);
    dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
    if (kind_ == PoolKind::kAverage || kind_ == PoolKind::kGlobalAverage) {
      algorithm = include_pad_ ? dnnl::algorithm::pooling_avg_include_padding
                               : dnnl::algorithm::pooling_avg_exclude_padding;
    }
    const dnnl_dims strides(attrs.strides.begin(), attrs.strides.end()), kernel(g.kernel.begin(), g.kernel.end());
    const dnnl_dims pad_l(g.pad_begin.begin(), g.pad_begin.end());
    plan.primitive = dnnl::pooling_forward(dnnl::pooling_forward::primitive_desc(
        Engine(), dnnl::prop_kind::forward_inference, algorithm, plan.src, plan.dst, strides, kernel,
        OneDnnDilations(attrs.dilations), pad_l, OneDnnPadEnd(g, input, attrs.strides, attrs.dilations)));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const PoolPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    if (!plan.empty) {
      plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.src)},
                                        {DNNL_ARG_DST, Wrap(out, plan.dst)}});
      Stream().wait();
      if (kind_ == PoolKind::kMax || kind_ == PoolKind::kGlobalMax) PropagateNaN(plan, ctx.tensor(0), out);
    }
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  PoolKind kind_;
  WindowAttrs attrs_;
  bool include_pad_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerPool(const NodeView& view, PoolKind kind) {
  const std::optional<DataType> type = view.input_type(0);
  // int8 and uint8: MaxPool's types only (GlobalMaxPool takes floats).
  if (!(kind == PoolKind::kMax && type && (*type == DataType::kInt8 || *type == DataType::kUint8))) {
    PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  }
  const int64_t rank = view.input_rank(0);
  if (rank < 0) return NotLowered("the rank of X is not known before the run");
  if (rank < 3 || rank > 5) return NotLowered("X of rank ", rank, " (oneDNN pools 1 to 3 spatial dims)");
  if (kind == PoolKind::kMax && view.output_type(1)) {
    return NotLowered("the Indices output is requested (oneDNN's workspace does not hold ONNX's indices)");
  }
  const size_t n = static_cast<size_t>(rank - 2);
  WindowAttrs attrs;
  bool include_pad = false;
  if (kind == PoolKind::kMax || kind == PoolKind::kAverage) {
    PARITY_ASSIGN_OR_RETURN(attrs, ReadWindowAttrs(view, n));
    if (attrs.kernel.empty()) return NotLowered("kernel_shape is missing");
    include_pad = kind == PoolKind::kAverage && view.GetInt("count_include_pad", 0) != 0;
    bool may_differ = include_pad && attrs.ceil_mode;  // a last window past the end padding
    for (size_t i = 0; i < n; ++i) {
      const int64_t extent = (attrs.kernel[i] - 1) * attrs.dilations[i] + 1;
      // oneDNN takes no pad as wide as the window; pads and dilations may
      // leave a window with no input element.
      if (attrs.pads[i] >= extent || attrs.pads[n + i] >= extent) {
        return NotLowered("a pad of ", std::max(attrs.pads[i], attrs.pads[n + i]),
                          " is as wide as the window's extent ", extent, " (oneDNN needs pads narrower)");
      }
      if (attrs.dilations[i] > 1 && (attrs.pads[i] > 0 || attrs.pads[n + i] > 0 || attrs.auto_pad != "NOTSET")) {
        may_differ = true;
      }
    }
    if (may_differ && !view.input_dims(0)) {
      return NotLowered("whether oneDNN computes this window as ONNX does depends on X's dims, not known before the run");
    }
  }
  return Prepared(std::make_unique<PoolNode>(*type, kind, std::move(attrs), include_pad), view);
}

}  // namespace

void AddPoolLowerings(Lowering& lowering) {
  lowering.Add("MaxPool", [](const NodeView& view) { return LowerPool(view, PoolKind::kMax); });
  lowering.Add("AveragePool", [](const NodeView& view) { return LowerPool(view, PoolKind::kAverage); });
  lowering.Add("GlobalMaxPool", [](const NodeView& view) { return LowerPool(view, PoolKind::kGlobalMax); });
  lowering.Add("GlobalAveragePool", [](const NodeView& view) { return LowerPool(view, PoolKind::kGlobalAverage); });
}

}  // namespace parity::adapters::onednn
