// LayerNormalization, BatchNormalization (inference), RMSNormalization and
// the contrib SimplifiedLayerNormalization, SkipLayerNormalization and
// SkipSimplifiedLayerNormalization (org.onnxparity.contrib, version 1) on
// oneDNN: the layer and batch normalization primitives, and for the root
// mean square (oneDNN 3.2 has no RMS flag) a reduction with eltwise
// post-ops and a binary multiply. Float32 and the 16-bit floats this CPU
// computes. oneDNN keeps every statistic in float32 and takes scale and
// shift in float32 (16-bit parameters are widened first by a reorder,
// which is exact), so only stash_type = 1 (float32) is claimed.
#include <algorithm>
#include <cmath>
#include <limits>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

using dnnl::algorithm;
using dnnl::normalization_flags;
using dnnl::prop_kind;

constexpr DataType kF32 = DataType::kFloat;
constexpr int kContribVersion = 1;
constexpr const char* kContribDomain = "org.onnxparity.contrib";

int64_t Product(const std::vector<int64_t>& dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end; ++i) p *= dims[i];
  return p;
}

// A reorder that widens a parameter of `count` elements to float32 (a
// no-op plan for a float32 one).
struct Widen {
  dnnl::reorder primitive;
  dnnl::memory::desc from, to;

  static Widen Make(DataType type, int64_t count) {
    Widen w;
    if (type == kF32 || count == 0) return w;
    w.from = PlainDesc({count}, *DnnlType(type));
    w.to = PlainDesc({count}, dnnl_dt::f32);
    w.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), w.from, Engine(), w.to));
    return w;
  }
  // `t` itself when it is float32, else its widened copy.
  StatusOr<Tensor> Run(const Tensor& t) const {
    if (t.dtype() == kF32) return t;
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(kF32, {t.size()}));
    if (t.size() > 0) {
      primitive.execute(Stream(), {{DNNL_ARG_FROM, Wrap(t, from)}, {DNNL_ARG_TO, Wrap(out, to)}});
      Stream().wait();
    }
    return out;
  }
};

// Whether `param` (its dims padded on the left to `x`'s rank) holds one
// value per element of x's trailing block [axis, rank): 1 before the axis,
// x's dims from it on. That is the form oneDNN's per-channel scale takes.
bool CoversBlock(const std::vector<int64_t>& param, const std::vector<int64_t>& x, size_t axis) {
  if (param.size() > x.size()) return false;
  const std::vector<int64_t> p = LeftPad(param, x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    if (p[d] != (d < axis ? 1 : x[d])) return false;
  }
  return true;
}

// The same check at claim time, on the static facts: true when every
// valid input the facts admit has the covering form, and when the facts
// say too little, false with `why` set.
bool ClaimCoversBlock(const NodeView& view, int param, int64_t axis_attr, std::string* why) {
  if (!view.has_input(param)) return true;
  const std::vector<int64_t>* p = view.input_dims(param);
  const ValueFacts* xf = view.input_facts(0);
  if (!p || !xf || !xf->dims) {
    *why = StrCat("the shapes of X and input ", param, " are not known before the run");
    return false;
  }
  const std::vector<int64_t>& x = *xf->dims;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (axis_attr < -rank || axis_attr >= rank) {
    *why = StrCat("axis ", axis_attr, " is out of range for rank ", rank);
    return false;
  }
  const size_t axis = static_cast<size_t>(axis_attr < 0 ? axis_attr + rank : axis_attr);
  if (p->size() > x.size()) {
    *why = StrCat("input ", param, " has a higher rank than X");
    return false;
  }
  const std::vector<int64_t> padded = LeftPad(*p, x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    // An unknown dim of X under a parameter dim of 1 may broadcast that
    // parameter inside the block; a known one must match.
    const bool ok = d < axis ? padded[d] == 1 : (x[d] == kUnknownDim ? padded[d] != 1 : padded[d] == x[d]);
    if (!ok) {
      *why = StrCat("input ", param, " does not hold one value per normalised element (oneDNN's layer normalization "
                    "takes one scale and shift per element of the normalised block)");
      return false;
    }
  }
  return true;
}

// oneDNN's memory descriptors hold at most DNNL_MAX_NDIMS dims.
Status RequireRankForOneDnn(const NodeView& view, int input) {
  if (view.input_rank(input) > DNNL_MAX_NDIMS) {
    return NotLowered("rank ", view.input_rank(input), " over oneDNN's ", DNNL_MAX_NDIMS);
  }
  return Status::Ok();
}

// stash_type must be float32: oneDNN computes the statistics in float32.
Status RequireFloat32Stash(const NodeView& view) {
  const int64_t stash = view.GetInt("stash_type", 1);
  if (stash != static_cast<int64_t>(kF32)) {
    return NotLowered("stash_type ", stash, " (oneDNN computes the statistics in float32 only)");
  }
  return Status::Ok();
}

// --- Layer normalization (LayerNormalization, SkipLayerNormalization) -----

// oneDNN normalises over the last dim, so x is seen as [blocks, block].
struct LayerNormPlan {
  dnnl::layer_normalization_forward primitive;  // empty when x has no element
  dnnl::memory::desc src, dst, stat;
  Widen scale, shift;
  dnnl::eltwise_forward inv_std;  // variance -> 1 / sqrt(variance + epsilon), when asked
  int64_t blocks = 0, block = 0;
};

StatusOr<LayerNormPlan> MakeLayerNormPlan(int64_t blocks, int64_t block, DataType src_type, DataType dst_type,
                                          DataType param_type, float epsilon, bool has_shift, bool statistics) {
  LayerNormPlan plan;
  plan.blocks = blocks;
  plan.block = block;
  if (blocks == 0 || block == 0) return plan;
  plan.src = PlainDesc({blocks, block}, *DnnlType(src_type));
  plan.dst = PlainDesc({blocks, block}, *DnnlType(dst_type));
  plan.stat = PlainDesc({blocks}, dnnl_dt::f32);
  plan.scale = Widen::Make(param_type, block);
  if (has_shift) plan.shift = Widen::Make(param_type, block);
  normalization_flags flags = normalization_flags::use_scale;
  if (has_shift) flags |= normalization_flags::use_shift;
  // forward_training is the kind whose mean and variance are outputs.
  plan.primitive = dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(
      Engine(), statistics ? prop_kind::forward_training : prop_kind::forward_inference, plan.src, plan.dst,
      plan.stat, epsilon, flags));
  if (statistics) {
    dnnl::post_ops ops;
    ops.append_eltwise(algorithm::eltwise_pow, 1.0f, -0.5f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(ops);
    plan.inv_std = dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
        Engine(), prop_kind::forward_inference, algorithm::eltwise_linear, plan.stat, plan.stat, 1.0f, epsilon, attr));
  }
  return plan;
}

// Runs the plan on memory over x and y; `mean` and `inv_std` (float32,
// `blocks` elements each) are written when not null.
Status RunLayerNorm(const LayerNormPlan& plan, const dnnl::memory& x, const dnnl::memory& y, const Tensor& scale,
                    const Tensor* shift, Tensor* mean, Tensor* inv_std) {
  if (plan.blocks == 0) return Status::Ok();
  if (plan.block == 0) {
    // Statistics of no element: 0/0, as the reference's mean and variance.
    for (Tensor* t : {mean, inv_std}) {
      if (t) std::fill_n(t->mutable_data<float>(), t->size(), std::numeric_limits<float>::quiet_NaN());
    }
    return Status::Ok();
  }
  PARITY_ASSIGN_OR_RETURN(Tensor scale32, plan.scale.Run(scale));
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, x}, {DNNL_ARG_DST, y}, {DNNL_ARG_SCALE, Wrap(scale32, PlainDesc({plan.block}, dnnl_dt::f32))}};
  Tensor shift32;
  if (shift) {
    PARITY_ASSIGN_OR_RETURN(shift32, plan.shift.Run(*shift));
    args[DNNL_ARG_SHIFT] = Wrap(shift32, PlainDesc({plan.block}, dnnl_dt::f32));
  }
  Tensor variance;
  if (mean) {
    PARITY_ASSIGN_OR_RETURN(variance, NewTensor(kF32, {plan.blocks}));
    args[DNNL_ARG_MEAN] = Wrap(*mean, plan.stat);
    args[DNNL_ARG_VARIANCE] = Wrap(variance, plan.stat);
  }
  plan.primitive.execute(Stream(), args);
  if (inv_std) {
    plan.inv_std.execute(Stream(),
                         {{DNNL_ARG_SRC, Wrap(variance, plan.stat)}, {DNNL_ARG_DST, Wrap(*inv_std, plan.stat)}});
  }
  Stream().wait();
  return Status::Ok();
}

// The shape of the statistics: x's with the dims from `axis` on set to 1.
std::vector<int64_t> StatisticsDims(std::vector<int64_t> dims, size_t axis) {
  for (size_t d = axis; d < dims.size(); ++d) dims[d] = 1;
  return dims;
}

struct LayerNormNodePlan {
  LayerNormPlan norm;
  std::vector<int64_t> x_dims, stat_dims;
};

// LayerNormalization-17: Y, and Mean and InvStdDev (float32) when asked.
class LayerNormNode final : public ShapedNode<LayerNormNodePlan> {
 public:
  LayerNormNode(DataType type, int64_t axis, float epsilon, bool has_bias, size_t outputs)
      : type_(type), axis_(axis), epsilon_(epsilon), has_bias_(has_bias), outputs_(outputs) {}

 protected:
  StatusOr<LayerNormNodePlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    const int64_t rank = static_cast<int64_t>(x.size());
    if (axis_ < -rank || axis_ >= rank) return InvalidArgument("axis ", axis_, " is out of range for rank ", rank);
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + rank : axis_);
    for (int param : {1, 2}) {
      if (param == 2 && !has_bias_) continue;
      if (!CoversBlock(shapes[static_cast<size_t>(param)], x, axis)) {
        return InvalidArgument("input ", param, " ", ShapeToString(shapes[static_cast<size_t>(param)]),
                               " is not one value per element of X's dims from axis ", axis);
      }
    }
    LayerNormNodePlan plan;
    plan.x_dims = x;
    plan.stat_dims = StatisticsDims(x, axis);
    PARITY_ASSIGN_OR_RETURN(plan.norm, MakeLayerNormPlan(Product(x, 0, axis), Product(x, axis, x.size()), type_,
                                                         type_, type_, epsilon_, has_bias_, outputs_ > 1));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const LayerNormNodePlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor y, NewTensor(type_, plan.x_dims));
    Tensor mean, inv_std;
    if (outputs_ > 1) {
      PARITY_ASSIGN_OR_RETURN(mean, NewTensor(kF32, plan.stat_dims));
      PARITY_ASSIGN_OR_RETURN(inv_std, NewTensor(kF32, plan.stat_dims));
    }
    const dnnl::memory x_mem = plan.norm.primitive ? Wrap(ctx.tensor(0), plan.norm.src) : dnnl::memory();
    const dnnl::memory y_mem = plan.norm.primitive ? Wrap(y, plan.norm.dst) : dnnl::memory();
    PARITY_RETURN_IF_ERROR(RunLayerNorm(plan.norm, x_mem, y_mem, ctx.tensor(1), has_bias_ ? &ctx.tensor(2) : nullptr,
                                        outputs_ > 1 ? &mean : nullptr, outputs_ > 2 ? &inv_std : nullptr));
    std::vector<Value> out{Value::FromTensor(std::move(y))};
    if (outputs_ > 1) out.push_back(Value::FromTensor(std::move(mean)));
    if (outputs_ > 2) out.push_back(Value::FromTensor(std::move(inv_std)));
    return out;
  }

 private:
  DataType type_;
  int64_t axis_;
  float epsilon_;
  bool has_bias_;
  size_t outputs_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerLayerNormalization(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2}));
  PARITY_RETURN_IF_ERROR(RequireFloat32Stash(view));
  const int64_t axis = view.GetInt("axis", -1);
  std::string why;
  if (!ClaimCoversBlock(view, 1, axis, &why) || !ClaimCoversBlock(view, 2, axis, &why)) return NotLowered(why);
  const size_t outputs = static_cast<size_t>(view.node().output_size());
  return Prepared(std::make_unique<LayerNormNode>(*view.input_type(0), axis, view.GetFloat("epsilon", 1e-5f),
                                                  view.has_input(2), outputs),
                  view);
}

// --- BatchNormalization (inference) ----------------------------------------

struct BatchNormPlan {
  dnnl::batch_normalization_forward primitive;  // empty when x has no element
  dnnl::memory::desc data, param;
  Widen widen[4];  // scale, B, mean, var
  std::vector<int64_t> x_dims;
};

// x [N, C, D1, ...] is seen as [N, C, D1 * ... * Dn, 1]: the statistics are
// per channel, so the spatial dims may be merged.
class BatchNormNode final : public ShapedNode<BatchNormPlan> {
 public:
  BatchNormNode(DataType type, std::vector<DataType> param_types, float epsilon)
      : type_(type), param_types_(std::move(param_types)), epsilon_(epsilon) {}

 protected:
  StatusOr<BatchNormPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    if (x.size() < 2) return InvalidArgument("X must have rank >= 2, got ", ShapeToString(x));
    const int64_t channels = x[1];
    for (size_t p = 1; p <= 4; ++p) {
      if (shapes[p] != std::vector<int64_t>{channels}) {
        return InvalidArgument("input ", p, " must have shape [", channels, "], got ", ShapeToString(shapes[p]));
      }
    }
    BatchNormPlan plan;
    plan.x_dims = x;
    if (Product(x, 0, x.size()) == 0) return plan;
    plan.data = PlainDesc({x[0], channels, Product(x, 2, x.size()), 1}, *DnnlType(type_));
    plan.param = PlainDesc({channels}, dnnl_dt::f32);
    for (size_t p = 0; p < 4; ++p) plan.widen[p] = Widen::Make(param_types_[p], channels);
    plan.primitive = dnnl::batch_normalization_forward(dnnl::batch_normalization_forward::primitive_desc(
        Engine(), prop_kind::forward_inference, plan.data, plan.data, epsilon_,
        normalization_flags::use_global_stats | normalization_flags::use_scale | normalization_flags::use_shift));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const BatchNormPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor y, NewTensor(type_, plan.x_dims));
    if (plan.primitive) {
      Tensor params[4];
      for (size_t p = 0; p < 4; ++p) {
        PARITY_ASSIGN_OR_RETURN(params[p], plan.widen[p].Run(ctx.tensor(p + 1)));
      }
      plan.primitive.execute(Stream(), {{DNNL_ARG_SRC, Wrap(ctx.tensor(0), plan.data)},
                                        {DNNL_ARG_DST, Wrap(y, plan.data)},
                                        {DNNL_ARG_SCALE, Wrap(params[0], plan.param)},
                                        {DNNL_ARG_SHIFT, Wrap(params[1], plan.param)},
                                        {DNNL_ARG_MEAN, Wrap(params[2], plan.param)},
                                        {DNNL_ARG_VARIANCE, Wrap(params[3], plan.param)}});
      Stream().wait();
    }
    return std::vector<Value>{Value::FromTensor(std::move(y))};
  }

 private:
  DataType type_;
  std::vector<DataType> param_types_;
  float epsilon_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerBatchNormalization(const NodeView& view) {
  const int64_t opset = view.opset();
  if (opset < 7) return NotLowered("opset ", opset, " (is_test and consumed_inputs are not lowered)");
  if (opset < 9 && view.GetInt("spatial", 1) == 0) {
    return NotLowered("spatial = 0 (statistics per activation; oneDNN's are per channel)");
  }
  if (opset >= 14 && view.GetInt("training_mode", 0) != 0) {
    return NotLowered("training_mode = 1 (only inference with the given mean and variance is lowered)");
  }
  if (view.node().output_size() > 1) {
    return NotLowered("outputs of training (running mean and variance) are asked for");
  }
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  std::vector<DataType> param_types;
  for (int p = 1; p <= 4; ++p) {
    const std::optional<DataType> t = view.input_type(p);
    if (!t) return NotLowered("the type of input ", p, " is not known before the run");
    if (t != kF32 && t != DataType::kBfloat16 && t != DataType::kFloat16) {
      return NotLowered("input ", p, " is ", DataTypeName(*t), " (oneDNN takes parameters widened to float32)");
    }
    param_types.push_back(*t);
  }
  return Prepared(std::make_unique<BatchNormNode>(*view.input_type(0), std::move(param_types),
                                                  view.GetFloat("epsilon", 1e-5f)),
                  view);
}

// --- Root mean square (RMSNormalization, SimplifiedLayerNormalization) ----

// y = x * scale / rms with rms = sqrt(mean of x^2 over [axis, rank) +
// epsilon): the sums of squares (a batched matmul of x by itself, or a
// binary and a reduction) with the mean, epsilon and the square root as
// eltwise post-ops, all in float32, then one binary
// multiply of x by scale with the division by rms as a binary post-op,
// which rounds y once to its type. inv_rms = 1 / rms (one binary divide)
// is made only when an output asks for it. Not the power -1/2 as a
// post-op: oneDNN 3.2's JIT calls the C library's powf for it, element by
// element, which took a twentieth of a small decoder's step.
struct RmsPlan {
  // rms from x: a batched matmul of x by itself with the post-ops
  // (stats_reads_x); where oneDNN has none, x * x into float32 squares,
  // then their mean with the post-ops; a block of one element has the
  // post-ops on the product x * x itself (stats_reads_x; oneDNN reduces no
  // identity). Not norm_lp_power_p_sum: oneDNN 3.2 runs it, with post-ops,
  // on its reference implementation only, which took most of a small
  // decoder's step. Each with its arguments bound (BoundPrimitive): square
  // (x, x, squares), stats (squares, rms; or x, x, rms when
  // stats_reads_x), apply (x, scale, y, rms), invert (ones, rms, inv; only
  // when the plan is made for inv_rms).
  BoundPrimitive square, stats, apply, invert;
  bool stats_reads_x = false;
  dnnl::memory::desc x, squares, inv, scale, y;
  std::vector<int64_t> x_dims, inv_dims;
  bool empty = false;
  size_t rms_count = 0;      // elements of rms (and of inv_rms)
  std::vector<float> ones;  // invert's dividend
  // The squares and rms of one run, kept for the next (a node runs on one thread at a time).
  mutable std::vector<float> squares_buffer, rms_buffer;
};

// Post-ops from a mean (or a sum, scaled by `scale` into its mean) to
// sqrt(mean + epsilon).
dnnl::primitive_attr RootOfMeanPlus(float epsilon, float scale) {
  dnnl::post_ops ops;
  ops.append_eltwise(algorithm::eltwise_linear, scale, epsilon);
  ops.append_eltwise(algorithm::eltwise_sqrt, 0.0f, 0.0f);
  dnnl::primitive_attr attr;
  attr.set_post_ops(ops);
  return attr;
}

// with_inv: the node outputs inv_rms.
StatusOr<RmsPlan> MakeRmsPlan(const std::vector<int64_t>& x, DataType x_type, const std::vector<int64_t>& scale,
                              DataType scale_type, DataType y_type, int64_t axis_attr, float epsilon, bool with_inv) {
  const int64_t rank = static_cast<int64_t>(x.size());
  if (rank == 0) return InvalidArgument("X is a scalar");
  if (rank > DNNL_MAX_NDIMS) return InvalidArgument("rank ", rank, " over oneDNN's ", DNNL_MAX_NDIMS);
  if (axis_attr < -rank || axis_attr >= rank) {
    return InvalidArgument("axis ", axis_attr, " is out of range for rank ", rank);
  }
  const size_t axis = static_cast<size_t>(axis_attr < 0 ? axis_attr + rank : axis_attr);
  if (scale.size() > x.size()) return InvalidArgument("scale has a higher rank than X");
  const std::vector<int64_t> padded = LeftPad(scale, x.size());
  for (size_t d = 0; d < x.size(); ++d) {
    if (padded[d] != 1 && padded[d] != x[d]) {
      return InvalidArgument("scale ", ShapeToString(scale), " does not broadcast to X ", ShapeToString(x));
    }
  }
  RmsPlan plan;
  plan.x_dims = x;
  plan.inv_dims = StatisticsDims(x, axis);
  const int64_t block = Product(x, axis, x.size());
  if (Product(x, 0, x.size()) == 0) {
    plan.empty = true;
    return plan;
  }
  plan.x = PlainDesc(x, *DnnlType(x_type));
  plan.inv = PlainDesc(plan.inv_dims, dnnl_dt::f32);
  plan.scale = PlainDesc(padded, *DnnlType(scale_type));
  plan.y = PlainDesc(x, *DnnlType(y_type));
  if (block > 1) {
    // The sums of squares as one batched matmul of x by itself: each row
    // of the block [1, block] by itself as [block, 1], summed in float32,
    // with the mean, epsilon and the root as post-ops: one primitive where
    // the square and the reduction are two (2.1 against 3.0 us for 8 rows
    // of 64 here).
    const int64_t rows = Product(x, 0, x.size()) / block;
    const dnnl_dt dt = *DnnlType(x_type);
    const dnnl::memory::desc row({rows, 1, block}, dt, {block, block, 1});
    const dnnl::memory::desc column({rows, block, 1}, dt, {block, 1, 1});
    const dnnl::memory::desc sums({rows, 1, 1}, dnnl_dt::f32, {1, 1, 1});
    try {
      plan.stats = BoundPrimitive(
          dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), row, column, sums,
                                                    RootOfMeanPlus(epsilon, 1.0f / static_cast<float>(block)))),
          {{DNNL_ARG_SRC, row}, {DNNL_ARG_WEIGHTS, column}, {DNNL_ARG_DST, sums}});
      plan.stats_reads_x = true;
    } catch (const dnnl::error&) {
      // No such matmul for this type: x * x as a binary (an eltwise keeps
      // its source's type; this one writes float32 from a 16-bit x,
      // exactly), then the mean.
      plan.squares = PlainDesc(x, dnnl_dt::f32);
      plan.square = BoundPrimitive(
          dnnl::binary(dnnl::binary::primitive_desc(Engine(), algorithm::binary_mul, plan.x, plan.x, plan.squares)),
          {{DNNL_ARG_SRC_0, plan.x}, {DNNL_ARG_SRC_1, plan.x}, {DNNL_ARG_DST, plan.squares}});
      plan.stats = BoundPrimitive(dnnl::reduction(dnnl::reduction::primitive_desc(
                                      Engine(), algorithm::reduction_mean, plan.squares, plan.inv, 0.0f, 0.0f,
                                      RootOfMeanPlus(epsilon, 1.0f))),
                                  {{DNNL_ARG_SRC, plan.squares}, {DNNL_ARG_DST, plan.inv}});
    }
  } else {
    plan.stats_reads_x = true;
    plan.stats = BoundPrimitive(dnnl::binary(dnnl::binary::primitive_desc(Engine(), algorithm::binary_mul, plan.x,
                                                                          plan.x, plan.inv,
                                                                          RootOfMeanPlus(epsilon, 1.0f))),
                                {{DNNL_ARG_SRC_0, plan.x}, {DNNL_ARG_SRC_1, plan.x}, {DNNL_ARG_DST, plan.inv}});
  }
  dnnl::post_ops over_rms;
  over_rms.append_binary(algorithm::binary_div, plan.inv);
  dnnl::primitive_attr apply_attr;
  apply_attr.set_post_ops(over_rms);
  plan.apply = BoundPrimitive(
      dnnl::binary(dnnl::binary::primitive_desc(Engine(), algorithm::binary_mul, plan.x, plan.scale, plan.y, apply_attr)),
      {{DNNL_ARG_SRC_0, plan.x}, {DNNL_ARG_SRC_1, plan.scale}, {DNNL_ARG_DST, plan.y},
       {DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, plan.inv}});
  plan.rms_count = plan.inv.get_size() / sizeof(float);
  if (with_inv) {
    plan.ones.assign(plan.rms_count, 1.0f);
    plan.invert = BoundPrimitive(
        dnnl::binary(dnnl::binary::primitive_desc(Engine(), algorithm::binary_div, plan.inv, plan.inv, plan.inv)),
        {{DNNL_ARG_SRC_0, plan.inv}, {DNNL_ARG_SRC_1, plan.inv}, {DNNL_ARG_DST, plan.inv}});
  }
  return plan;
}

// Writes y from x (plan.x's layout), and inv_rms (float32, plan.inv_dims)
// into `inv` when it is not null (the plan made with_inv).
void RunRms(const RmsPlan& plan, const void* x, const Tensor& scale, Tensor& y, Tensor* inv) {
  if (plan.empty) return;
  plan.rms_buffer.resize(plan.rms_count);
  float* rms = plan.rms_buffer.data();
  if (plan.stats_reads_x) {
    plan.stats.Run({x, x, rms});
  } else {
    plan.squares_buffer.resize(plan.squares.get_size() / sizeof(float));
    plan.square.Run({x, x, plan.squares_buffer.data()});
    plan.stats.Run({plan.squares_buffer.data(), rms});
  }
  plan.apply.Run({x, scale.raw_bytes(), y.mutable_raw_bytes(), rms});
  if (inv) plan.invert.Run({plan.ones.data(), rms, inv->mutable_raw_bytes()});
}

// RMSNormalization-23 (Y of X's type, which the claim makes scale's too)
// and SimplifiedLayerNormalization (Y of scale's type; output 1 is inv_rms).
class RmsNode final : public ShapedNode<RmsPlan> {
 public:
  RmsNode(DataType x_type, DataType scale_type, int64_t axis, float epsilon, size_t outputs)
      : x_type_(x_type), scale_type_(scale_type), axis_(axis), epsilon_(epsilon), outputs_(outputs) {}

 protected:
  StatusOr<RmsPlan> MakePlan(const InputShapes& shapes) override {
    return MakeRmsPlan(shapes[0], x_type_, shapes[1], scale_type_, scale_type_, axis_, epsilon_, outputs_ > 1);
  }

  StatusOr<std::vector<Value>> Execute(const RmsPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor y, NewTensor(scale_type_, plan.x_dims));
    Tensor inv;
    if (outputs_ > 1) {
      PARITY_ASSIGN_OR_RETURN(inv, NewTensor(kF32, plan.inv_dims));
    }
    if (!plan.empty) RunRms(plan, ctx.tensor(0).raw_bytes(), ctx.tensor(1), y, outputs_ > 1 ? &inv : nullptr);
    std::vector<Value> out{Value::FromTensor(std::move(y))};
    if (outputs_ > 1) out.push_back(Value::FromTensor(std::move(inv)));
    return out;
  }

 private:
  DataType x_type_, scale_type_;
  int64_t axis_;
  float epsilon_;
  size_t outputs_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerRMSNormalization(const NodeView& view) {
  // ONNX lets Y (scale's type V) differ from X's type T; the claim keeps them one.
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1}));
  PARITY_RETURN_IF_ERROR(RequireFloat32Stash(view));
  PARITY_RETURN_IF_ERROR(RequireRankForOneDnn(view, 0));
  return Prepared(std::make_unique<RmsNode>(*view.input_type(0), *view.input_type(0), view.GetInt("axis", -1),
                                            view.GetFloat("epsilon", 1e-5f), 1),
                  view);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerSimplifiedLayerNormalization(const NodeView& view) {
  if (view.opset() != kContribVersion) return NotLowered("version ", view.opset(), " of the contrib domain");
  if (view.input_count() != 2 || view.node().output_size() > 2) return NotLowered("not 2 inputs and at most 2 outputs");
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {1}));  // scale may differ from X: Y takes its type
  PARITY_RETURN_IF_ERROR(RequireFloat32Stash(view));
  PARITY_RETURN_IF_ERROR(RequireRankForOneDnn(view, 0));
  return Prepared(std::make_unique<RmsNode>(*view.input_type(0), *view.input_type(1), view.GetInt("axis", -1),
                                            view.GetFloat("epsilon", 1e-5f),
                                            static_cast<size_t>(view.node().output_size())),
                  view);
}

// --- SkipLayerNormalization and SkipSimplifiedLayerNormalization ----------

// sum = input + skip (+ bias) in float32 (one binary add, the bias as a
// binary post-op; never rounded to T before it is normalised), then the
// layer normalization or the root mean square of `sum` over the last axis.
struct SkipPlan {
  dnnl::binary add;
  dnnl::reorder sum_out;  // the float32 sum rounded to T, when output 3 is asked
  dnnl::memory::desc input, skip, bias, sum32, sum;
  LayerNormPlan norm;  // SkipLayerNormalization
  RmsPlan rms;         // SkipSimplifiedLayerNormalization
  std::vector<int64_t> dims, stat_dims;
  int64_t rows = 0, hidden = 0;
};

class SkipNormNode final : public ShapedNode<SkipPlan> {
 public:
  SkipNormNode(bool simplified, DataType type, float epsilon, bool has_beta, bool has_bias, size_t outputs)
      : simplified_(simplified), type_(type), epsilon_(epsilon), has_beta_(has_beta), has_bias_(has_bias),
        outputs_(outputs) {}

 protected:
  int bias_input() const { return simplified_ ? 3 : 4; }

  StatusOr<SkipPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& x = shapes[0];
    if (x.empty()) return InvalidArgument("input must have rank >= 1");
    if (x.size() > DNNL_MAX_NDIMS) return InvalidArgument("rank ", x.size(), " over oneDNN's ", DNNL_MAX_NDIMS);
    SkipPlan plan;
    plan.dims = x;
    plan.hidden = x.back();
    plan.rows = Product(x, 0, x.size() - 1);
    plan.stat_dims = StatisticsDims(x, x.size() - 1);
    const std::vector<int64_t>& skip = shapes[1];
    if (skip.size() > x.size()) return InvalidArgument("skip has a higher rank than input");
    const std::vector<int64_t> skip_padded = LeftPad(skip, x.size());
    for (size_t d = 0; d < x.size(); ++d) {
      if (skip_padded[d] != 1 && skip_padded[d] != x[d]) {
        return InvalidArgument("skip ", ShapeToString(skip), " does not broadcast to input ", ShapeToString(x));
      }
    }
    const std::vector<int64_t> hidden_only{plan.hidden};
    for (int p : {2, simplified_ ? -1 : (has_beta_ ? 3 : -1), has_bias_ ? bias_input() : -1}) {
      if (p >= 0 && shapes[static_cast<size_t>(p)] != hidden_only) {
        return InvalidArgument("input ", p, " must have shape [", plan.hidden, "], got ",
                               ShapeToString(shapes[static_cast<size_t>(p)]));
      }
    }
    if (plan.rows * plan.hidden == 0) return plan;  // no primitive: Execute writes the empty rows' statistics
    const dnnl_dt dt = *DnnlType(type_);
    plan.input = PlainDesc(x, dt);
    plan.skip = PlainDesc(skip_padded, dt);
    plan.sum32 = PlainDesc(x, dnnl_dt::f32);
    plan.sum = PlainDesc(x, dt);
    dnnl::primitive_attr add_attr;
    if (has_bias_) {
      plan.bias = PlainDesc(LeftPad(hidden_only, x.size()), dt);
      dnnl::post_ops ops;
      ops.append_binary(algorithm::binary_add, plan.bias);
      add_attr.set_post_ops(ops);
    }
    plan.add = dnnl::binary(
        dnnl::binary::primitive_desc(Engine(), algorithm::binary_add, plan.input, plan.skip, plan.sum32, add_attr));
    if (outputs_ > 3) {
      plan.sum_out = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.sum32, Engine(), plan.sum));
    }
    if (simplified_) {
      PARITY_ASSIGN_OR_RETURN(plan.rms, MakeRmsPlan(x, kF32, hidden_only, type_, type_, -1, epsilon_, outputs_ > 2));
    } else {
      PARITY_ASSIGN_OR_RETURN(plan.norm, MakeLayerNormPlan(plan.rows, plan.hidden, kF32, type_, type_, epsilon_,
                                                           has_beta_, outputs_ > 1));
    }
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const SkipPlan& plan, const KernelContext& ctx) override {
    PARITY_ASSIGN_OR_RETURN(Tensor y, NewTensor(type_, plan.dims));
    PARITY_ASSIGN_OR_RETURN(Tensor mean, NewTensor(kF32, plan.stat_dims));  // 0 for the simplified form
    PARITY_ASSIGN_OR_RETURN(Tensor inv_std, NewTensor(kF32, plan.stat_dims));
    PARITY_ASSIGN_OR_RETURN(Tensor sum, NewTensor(type_, plan.dims));
    if (plan.rows * plan.hidden > 0) {
      PARITY_ASSIGN_OR_RETURN(Tensor sum32, NewTensor(kF32, plan.dims));
      const dnnl::memory sum32_mem = Wrap(sum32, plan.sum32);
      std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC_0, Wrap(ctx.tensor(0), plan.input)},
                                                    {DNNL_ARG_SRC_1, Wrap(ctx.tensor(1), plan.skip)},
                                                    {DNNL_ARG_DST, sum32_mem}};
      if (has_bias_) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
            Wrap(ctx.tensor(static_cast<size_t>(bias_input())), plan.bias);
      }
      plan.add.execute(Stream(), args);
      if (outputs_ > 3) {
        plan.sum_out.execute(Stream(), {{DNNL_ARG_FROM, sum32_mem}, {DNNL_ARG_TO, Wrap(sum, plan.sum)}});
      }
      Stream().wait();
      if (simplified_) {
        RunRms(plan.rms, sum32.raw_bytes(), ctx.tensor(2), y, outputs_ > 2 ? &inv_std : nullptr);
      } else {
        PARITY_RETURN_IF_ERROR(RunLayerNorm(plan.norm, sum32_mem, Wrap(y, plan.norm.dst), ctx.tensor(2),
                                            has_beta_ ? &ctx.tensor(3) : nullptr, outputs_ > 1 ? &mean : nullptr,
                                            outputs_ > 2 ? &inv_std : nullptr));
      }
    } else if (plan.hidden == 0 && plan.rows > 0) {
      // Rows of no element: their statistics are 0/0, as the reference's.
      if (!simplified_) std::fill_n(mean.mutable_data<float>(), mean.size(), std::numeric_limits<float>::quiet_NaN());
      std::fill_n(inv_std.mutable_data<float>(), inv_std.size(), std::numeric_limits<float>::quiet_NaN());
    }
    std::vector<Value> out{Value::FromTensor(std::move(y))};
    if (outputs_ > 1) out.push_back(Value::FromTensor(std::move(mean)));
    if (outputs_ > 2) out.push_back(Value::FromTensor(std::move(inv_std)));
    if (outputs_ > 3) out.push_back(Value::FromTensor(std::move(sum)));
    return out;
  }

 private:
  bool simplified_;
  DataType type_;
  float epsilon_;
  bool has_beta_, has_bias_;
  size_t outputs_;
};

LowerFn LowerSkipNorm(bool simplified) {
  return [simplified](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    if (view.opset() != kContribVersion) return NotLowered("version ", view.opset(), " of the contrib domain");
    const int max_inputs = simplified ? 4 : 5;
    if (view.input_count() > max_inputs || view.node().output_size() > 4) {
      return NotLowered("more than ", max_inputs, " inputs or 4 outputs");
    }
    if (!view.has_input(0) || !view.has_input(1) || !view.has_input(2)) {
      return NotLowered("input, skip or gamma is absent");
    }
    PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2, 3, 4}));
    PARITY_RETURN_IF_ERROR(RequireRankForOneDnn(view, 0));
    const bool has_beta = !simplified && view.has_input(3);
    const bool has_bias = view.has_input(simplified ? 3 : 4);
    return Prepared(std::make_unique<SkipNormNode>(simplified, *view.input_type(0), view.GetFloat("epsilon", 1e-12f),
                                                   has_beta, has_bias, static_cast<size_t>(view.node().output_size())),
                    view);
  };
}

}  // namespace

void AddNormLowerings(Lowering& lowering) {
  lowering.Add("LayerNormalization", LowerLayerNormalization);
  lowering.Add("BatchNormalization", LowerBatchNormalization);
  lowering.Add("RMSNormalization", LowerRMSNormalization);
  // The reference holds these in its contrib domain only (reference/ops/contrib/register.cc).
  lowering.Add(kContribDomain, "SimplifiedLayerNormalization", LowerSimplifiedLayerNormalization);
  lowering.Add(kContribDomain, "SkipLayerNormalization", LowerSkipNorm(false));
  lowering.Add(kContribDomain, "SkipSimplifiedLayerNormalization", LowerSkipNorm(true));
}

}  // namespace parity::adapters::onednn
