// Conv and ConvTranspose on oneDNN's convolution and deconvolution
// primitives (algorithm direct: Winograd would change the numbers), 1-D to
// 3-D, float32 and the 16-bit floats this CPU computes, accumulating in
// float32 and rounding once. Tensors stay in ONNX's plain layouts (NCHW and
// the weight's own order, groups as an outer dim of the same buffer).
#include <algorithm>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/onednn/window.h"

namespace parity::adapters::onednn {
namespace {

// A tensor the primitive reads or writes in the layout it chose (blocked,
// for its fast kernels) where that is not the plain one: a reorder on the
// way in (src, weights) or out (dst).
struct Relayout {
  dnnl::memory::desc inner;
  dnnl::reorder reorder;
  bool needed = false;
};

struct ConvPlan {
  dnnl::primitive primitive;
  dnnl::memory::desc src, weights, bias, dst;  // plain: the tensors' own layouts
  Relayout src_in, weights_in, dst_out;
  std::vector<int64_t> out_dims;
  // ConvTranspose: the block of the output that products reach (`dst`,
  // dense, computed apart) and where it lies in the output (`block`: its
  // dims with the output's strides, at `block_offset` elements); positions
  // outside it hold the bias. oneDNN's deconvolution does not write a
  // strided destination, a reorder does.
  dnnl::memory::desc block;
  dnnl::reorder place;
  int64_t block_offset = 0;
  bool partial = false;
  bool empty = false;  // no output element, or no product (a dim of 0)
};

Relayout MakeRelayout(const dnnl::memory::desc& plain, const dnnl::memory::desc& inner, bool in) {
  Relayout r;
  r.inner = inner;
  r.needed = inner != plain;
  if (r.needed) {
    r.reorder = in ? dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plain, Engine(), inner))
                   : dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), inner, Engine(), plain));
  }
  return r;
}

// `plain` in the primitive's layout: itself, or a reordered copy.
dnnl::memory In(const Relayout& r, dnnl::memory plain) {
  if (!r.needed) return plain;
  dnnl::memory inner(r.inner, Engine());
  r.reorder.execute(Stream(), plain, inner);
  return inner;
}

class ConvNode final : public ShapedNode<ConvPlan> {
 public:
  ConvNode(DataType type, WindowAttrs attrs, int64_t group, bool transposed, bool has_bias,
           std::vector<int64_t> output_padding, std::vector<int64_t> output_shape)
      : type_(type), attrs_(std::move(attrs)), group_(group), transposed_(transposed), has_bias_(has_bias),
        output_padding_(std::move(output_padding)), output_shape_(std::move(output_shape)) {}

 protected:
  StatusOr<ConvPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    const std::vector<int64_t>& w = shapes[1];
    if (x.size() < 3 || w.size() != x.size()) {
      return InvalidArgument("X has rank ", x.size(), " and W rank ", w.size(), ": both must be the same, 3 to 5");
    }
    const size_t n = x.size() - 2;
    const std::vector<int64_t> input(x.begin() + 2, x.end()), kernel(w.begin() + 2, w.end());
    const int64_t channels = x[1];
    const int64_t out_channels = transposed_ ? w[1] * group_ : w[0];
    if (transposed_ ? w[0] != channels : w[1] * group_ != channels) {
      return InvalidArgument("W's channels do not match X's ", channels, " in ", group_, " groups");
    }
    if (out_channels % group_ != 0 || channels % group_ != 0) {
      return InvalidArgument("channels not divisible by group ", group_);
    }
    if (has_bias_ && (shapes[2].size() != 1 || shapes[2][0] != out_channels)) {
      return InvalidArgument("B must have shape [", out_channels, "]");
    }
    ConvPlan plan;
    dnnl_dims pad_l(n), pad_r(n);
    std::vector<int64_t> output(n);
    if (!transposed_) {
      PARITY_ASSIGN_OR_RETURN(WindowGeometry g, ResolveGeometry(attrs_, input, kernel, /*pool=*/false));
      output = g.output;
      for (size_t i = 0; i < n; ++i) {
        pad_l[i] = g.pad_begin[i];
        pad_r[i] = g.pad_end[i];
      }
    } else {
      PARITY_RETURN_IF_ERROR(TransposedGeometry(input, kernel, output, pad_l, pad_r));
    }
    plan.out_dims = {x[0], out_channels};
    plan.out_dims.insert(plan.out_dims.end(), output.begin(), output.end());
    int64_t elements = 1;
    for (int64_t d : plan.out_dims) elements *= d;
    int64_t products = 1;
    for (int64_t d : x) products *= d;
    for (int64_t d : w) products *= d;
    plan.empty = elements == 0 || products == 0;
    if (plan.empty) return plan;

    const dnnl_dt dt = *DnnlType(type_);
    plan.src = PlainDesc(x, dt);
    plan.weights = GroupedWeights(w, group_, transposed_, dt);
    if (has_bias_) plan.bias = PlainDesc({out_channels}, dt);
    const dnnl::memory::desc full = PlainDesc(plan.out_dims, dt);
    plan.dst = full;
    // A negative pad (ConvTranspose only) is a block of output no product
    // reaches: oneDNN writes the rest, with that pad as 0.
    dnnl_dims sub_dims(full.get_dims()), offsets(plan.out_dims.size(), 0);
    for (size_t i = 0; i < n; ++i) {
      if (pad_l[i] < 0) {
        offsets[i + 2] = -pad_l[i];
        sub_dims[i + 2] += pad_l[i];
        pad_l[i] = 0;
        plan.partial = true;
      }
      if (pad_r[i] < 0) {
        sub_dims[i + 2] += pad_r[i];
        pad_r[i] = 0;
        plan.partial = true;
      }
    }
    if (plan.partial) {
      for (int64_t d : sub_dims) {
        if (d <= 0) return InvalidArgument("an output_shape or output_padding no product of ConvTranspose reaches");
      }
      plan.dst = PlainDesc(std::vector<int64_t>(sub_dims.begin(), sub_dims.end()), dt);
      plan.block = dnnl::memory::desc(sub_dims, dt, full.get_strides());
      const dnnl_dims strides = full.get_strides();
      for (size_t i = 0; i < offsets.size(); ++i) plan.block_offset += offsets[i] * strides[i];
      plan.place = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.dst, Engine(), plan.block));
    }
    const dnnl_dims strides(attrs_.strides.begin(), attrs_.strides.end());
    const dnnl_dims dilations = OneDnnDilations(attrs_.dilations);
    // The primitive picks its layouts ("any"): on plain NCHW oneDNN has
    // only its slow reference and im2col kernels.
    auto any = [](const dnnl::memory::desc& d) {
      return dnnl::memory::desc(d.get_dims(), d.get_data_type(), dnnl::memory::format_tag::any);
    };
    dnnl::memory::desc src_inner, weights_inner, dst_inner;
    if (transposed_) {
      dnnl::deconvolution_forward::primitive_desc pd(
          Engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::deconvolution_direct, any(plan.src),
          any(plan.weights), plan.bias, any(plan.dst), strides, dilations, pad_l, pad_r);
      plan.primitive = dnnl::deconvolution_forward(pd);
      src_inner = pd.src_desc(), weights_inner = pd.weights_desc(), dst_inner = pd.dst_desc();
    } else {
      dnnl::convolution_forward::primitive_desc pd(
          Engine(), dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(plan.src),
          any(plan.weights), plan.bias, any(plan.dst), strides, dilations, pad_l, pad_r);
      plan.primitive = dnnl::convolution_forward(pd);
      src_inner = pd.src_desc(), weights_inner = pd.weights_desc(), dst_inner = pd.dst_desc();
    }
    plan.src_in = MakeRelayout(plan.src, src_inner, true);
    plan.weights_in = MakeRelayout(plan.weights, weights_inner, true);
    plan.dst_out = MakeRelayout(plan.dst, dst_inner, false);
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ConvPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims));
    if (plan.empty || plan.partial) FillBias(ctx, out);
    if (plan.empty) return std::vector<Value>{Value::FromTensor(std::move(out))};
    Tensor block;
    if (plan.partial) {
      const dnnl_dims dims = plan.dst.get_dims();
      PARITY_ASSIGN_OR_RETURN(block, NewTensor(type_, std::vector<int64_t>(dims.begin(), dims.end())));
    }
    dnnl::memory dst = Wrap(plan.partial ? block : out, plan.dst);
    std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, In(plan.src_in, Wrap(ctx.tensor(0), plan.src))},
                                                  {DNNL_ARG_WEIGHTS, In(plan.weights_in, Wrap(ctx.tensor(1), plan.weights))},
                                                  {DNNL_ARG_DST, plan.dst_out.needed ? dnnl::memory(plan.dst_out.inner, Engine()) : dst}};
    if (has_bias_) args[DNNL_ARG_BIAS] = Wrap(ctx.tensor(2), plan.bias);
    plan.primitive.execute(Stream(), args);
    if (plan.dst_out.needed) plan.dst_out.reorder.execute(Stream(), args[DNNL_ARG_DST], dst);
    if (plan.partial) {
      uint8_t* at = out.mutable_raw_bytes() + plan.block_offset * static_cast<int64_t>(StorageSize(type_));
      dnnl::memory from = Wrap(block, plan.dst), to(plan.block, Engine(), at);
      plan.place.execute(Stream(), from, to);
    }
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  // ConvTranspose's output extents and pads (the spec's formulas, with the
  // total padding's half taken as floor division as the reference does);
  // output_padding is oneDNN's end pad made smaller.
  Status TransposedGeometry(const std::vector<int64_t>& input, const std::vector<int64_t>& kernel,
                            std::vector<int64_t>& output, dnnl_dims& pad_l, dnnl_dims& pad_r) const {
    const size_t n = input.size();
    if (!attrs_.kernel.empty() && attrs_.kernel != kernel) {
      return InvalidArgument("kernel_shape does not match the weight's spatial dims");
    }
    const bool same = attrs_.auto_pad == "SAME_UPPER" || attrs_.auto_pad == "SAME_LOWER";
    for (size_t i = 0; i < n; ++i) {
      const int64_t natural =
          attrs_.strides[i] * (input[i] - 1) + output_padding_[i] + (kernel[i] - 1) * attrs_.dilations[i] + 1;
      int64_t begin = attrs_.pads[i], end = attrs_.pads[n + i];
      if (!output_shape_.empty() || same) {
        output[i] = output_shape_.empty() ? input[i] * attrs_.strides[i] : output_shape_[i];
        const int64_t total = natural - output[i];
        const int64_t half = total >= 0 || total % 2 == 0 ? total / 2 : total / 2 - 1;  // floor
        begin = attrs_.auto_pad == "SAME_UPPER" ? half : total - half;
        end = total - begin;
      } else {
        if (attrs_.auto_pad == "VALID") begin = end = 0;
        output[i] = natural - begin - end;
        if (output[i] < 0) return InvalidArgument("pads leave a negative output extent on spatial axis ", i);
      }
      pad_l[i] = begin;
      pad_r[i] = end - output_padding_[i];
    }
    return Status::Ok();
  }

  // Every element as its channel's bias (0 without one): what an output
  // position no product reaches holds.
  void FillBias(const KernelContext& ctx, Tensor& out) const {
    std::fill(out.mutable_raw_bytes(), out.mutable_raw_bytes() + out.byte_size(), 0);
    if (!has_bias_ || out.size() == 0) return;
    const Tensor& b = ctx.tensor(2);
    int64_t inner = 1;
    for (int64_t i = 2; i < out.rank(); ++i) inner *= out.dim(i);
    const int64_t channels = out.dim(1);
    for (int64_t i = 0; i < out.size(); ++i) out.SetDouble(i, b.GetDouble((i / inner) % channels));
  }

  DataType type_;
  WindowAttrs attrs_;
  int64_t group_;
  bool transposed_, has_bias_;
  std::vector<int64_t> output_padding_, output_shape_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerConvFamily(const NodeView& view, bool transposed) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2}));
  const int64_t rank = view.input_rank(0);
  if (rank < 0) return NotLowered("the rank of X is not known before the run");
  if (rank < 3 || rank > 5) return NotLowered("X of rank ", rank, " (oneDNN convolves 1 to 3 spatial dims)");
  const size_t n = static_cast<size_t>(rank - 2);
  PARITY_ASSIGN_OR_RETURN(WindowAttrs attrs, ReadWindowAttrs(view, n));
  const int64_t group = view.GetInt("group", 1);
  if (group < 1) return NotLowered("group ", group, " is not positive");
  std::vector<int64_t> output_padding(n, 0), output_shape;
  if (transposed) {
    output_padding = view.GetInts("output_padding").value_or(output_padding);
    if (output_padding.size() != n) return NotLowered("output_padding has ", output_padding.size(), " values");
    for (int64_t p : output_padding) {
      if (p < 0) return NotLowered("a negative output_padding");
    }
    output_shape = view.GetInts("output_shape").value_or(std::vector<int64_t>{});
    if (output_shape.size() == n + 2) output_shape.erase(output_shape.begin(), output_shape.begin() + 2);
    if (!output_shape.empty() && output_shape.size() != n) return NotLowered("output_shape has ", output_shape.size(), " values");
    for (int64_t d : output_shape) {
      if (d < 0) return NotLowered("a negative output_shape");
    }
  }
  return Prepared(std::make_unique<ConvNode>(*view.input_type(0), std::move(attrs), group, transposed,
                                             view.has_input(2), std::move(output_padding), std::move(output_shape)),
                  view);
}

}  // namespace

void AddConvLowerings(Lowering& lowering) {
  lowering.Add("Conv", [](const NodeView& view) { return LowerConvFamily(view, /*transposed=*/false); });
  lowering.Add("ConvTranspose", [](const NodeView& view) { return LowerConvFamily(view, /*transposed=*/true); });
}

}  // namespace parity::adapters::onednn
