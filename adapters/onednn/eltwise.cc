// Unary element-wise operators on oneDNN's eltwise primitive (and, where
// that primitive loses a NaN, on its binary primitive), Clip on two binary
// passes, and Cast between float32, bfloat16 and float16 as a reorder.
//
// Every claim below was checked against the reference on special values
// (NaN, infinities, signed zeros, subnormals, the overflow threshold) and
// on a sweep of float32 inputs; where oneDNN 3.2 differs, the operator is
// refused with the difference as its reason (adapters/onednn/eltwise_test.py).
#include <cmath>
#include <cstring>
#include <limits>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

// How a unary operator runs.
enum class UnaryForm {
  kEltwise,      // one eltwise primitive (with its post-ops)
  kMaxWithZero,  // binary max(zeros, x): a Relu that keeps NaN (eltwise_relu maps NaN to 0)
  kReorder,      // Cast: a reorder between two floating types
};

struct UnarySpec {
  UnaryForm form = UnaryForm::kEltwise;
  dnnl::algorithm algorithm = dnnl::algorithm::undef;
  float alpha = 0, beta = 0;
  // A post-op max(result, x). oneDNN's eltwise_exp maps NaN to +inf; since
  // exp(x) > x for every other x, max(exp(x), x) is exp(x) there, while
  // oneDNN's binary max returns its second operand, x, when either is NaN.
  bool keep_nan = false;
  // A post-op scale of the result (Selu's gamma), when set.
  std::optional<float> scale;
  DataType out_type = DataType::kFloat;
};

struct UnaryPlan {
  dnnl::primitive primitive;  // none when the tensor has no elements
  dnnl::memory::desc src, dst;
};

// The tensor as one row of its elements: element-wise work needs no shape,
// and one dim keeps every rank (oneDNN takes at most 12) on its JIT kernels.
std::vector<int64_t> Flat(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return {n};
}

class UnaryNode final : public ShapedNode<UnaryPlan> {
 public:
  UnaryNode(DataType type, UnarySpec spec) : type_(type), spec_(spec) {}


 protected:
  StatusOr<UnaryPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t> flat = Flat(shapes[0]);
    UnaryPlan plan;
    plan.src = PlainDesc(flat, *DnnlType(type_));
    plan.dst = PlainDesc(flat, *DnnlType(spec_.out_type));
    if (flat[0] == 0) return plan;
    switch (spec_.form) {
      case UnaryForm::kEltwise: {
        dnnl::primitive_attr attr;
        dnnl::post_ops ops;
        if (spec_.keep_nan) ops.append_binary(dnnl::algorithm::binary_max, plan.src);
        if (spec_.scale) ops.append_eltwise(dnnl::algorithm::eltwise_linear, *spec_.scale, 0.0f);
        attr.set_post_ops(ops);
        plan.primitive = dnnl::eltwise_forward(
            dnnl::eltwise_forward::primitive_desc(Engine(), dnnl::prop_kind::forward_inference, spec_.algorithm,
                                                  plan.src, plan.dst, spec_.alpha, spec_.beta, attr));
        break;
      }
      case UnaryForm::kMaxWithZero:
        plan.primitive = dnnl::binary(
            dnnl::binary::primitive_desc(Engine(), dnnl::algorithm::binary_max, plan.dst, plan.src, plan.dst));
        break;
      case UnaryForm::kReorder:
        plan.primitive = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.src, Engine(), plan.dst));
        break;
    }
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const UnaryPlan& plan, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    // Created zero-filled: the zeros kMaxWithZero compares with.
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(spec_.out_type, x.shape()));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    dnnl::memory src = Wrap(x, plan.src), dst = Wrap(out, plan.dst);
    switch (spec_.form) {
      case UnaryForm::kEltwise: {
        std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}};
        if (spec_.keep_nan) args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] = src;
        plan.primitive.execute(Stream(), args);
        break;
      }
      case UnaryForm::kMaxWithZero:  // dst is src0 (in place): max(0, x), x second so that NaN stays
        plan.primitive.execute(Stream(), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, src}, {DNNL_ARG_DST, dst}});
        break;
      case UnaryForm::kReorder:
        plan.primitive.execute(Stream(), {{DNNL_ARG_FROM, src}, {DNNL_ARG_TO, dst}});
        break;
    }
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  DataType type_;
  UnarySpec spec_;
};

// The LowerFn's tail for a node whose primitive needs only its type: made
// now for static shapes, else tried on one element so that a primitive
// oneDNN lacks is refused at creation, never met at the first run.
template <typename Node>
StatusOr<std::unique_ptr<LoweredNode>> PreparedOrChecked(std::unique_ptr<Node> node, const NodeView& view) {
  if (!view.input_dims(0)) {
    InputShapes probe(static_cast<size_t>(view.input_count()));
    probe[0] = {1};
    Status checked = node->CheckPlan(probe);
    if (!checked.ok()) return NotLowered(checked.message());
  }
  return Prepared(std::move(node), view);
}

// oneDNN 3.2 writes a bfloat16 result through vcvtneps2bf16, which flushes
// float32 subnormals to zero: a bfloat16 subnormal input comes out as zero.
// The tolerance allows that for arithmetic (its bfloat16 atol is the
// smallest normal) but not for the operators compared exactly.
Status RequireNoBfloat16Flush(const NodeView& view) {
  if (view.input_type(0) == DataType::kBfloat16) {
    return NotLowered("bfloat16 (oneDNN 3.2 writes bfloat16 subnormal results as zero; ", view.node().op_type(),
                      " is compared exactly)");
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<LoweredNode>> LowerUnary(const NodeView& view, UnarySpec spec) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0}));
  spec.out_type = *view.input_type(0);
  return PreparedOrChecked(std::make_unique<UnaryNode>(*view.input_type(0), spec), view);
}

LowerFn Eltwise(dnnl::algorithm algorithm, float alpha = 0, float beta = 0) {
  return [=](const NodeView& view) {
    UnarySpec spec;
    spec.algorithm = algorithm;
    spec.alpha = alpha;
    spec.beta = beta;
    return LowerUnary(view, spec);
  };
}

LowerFn Refused(std::string reason) {
  return [reason](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> { return NotLowered(reason); };
}

LowerFn Exact(LowerFn lower) {
  return [lower](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    PARITY_RETURN_IF_ERROR(RequireNoBfloat16Flush(view));
    return lower(view);
  };
}

StatusOr<std::unique_ptr<LoweredNode>> LowerRelu(const NodeView& view) {
  UnarySpec spec;
  spec.form = UnaryForm::kMaxWithZero;
  return LowerUnary(view, spec);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerLeakyRelu(const NodeView& view) {
  const float alpha = view.GetFloat("alpha", 0.01f);
  if (std::isnan(alpha)) return NotLowered("alpha is NaN");
  // eltwise_relu with alpha 0 maps NaN and -inf to 0, where ONNX's alpha * x
  // is NaN; any other alpha keeps NaN (alpha * NaN) and gives alpha * -inf.
  if (alpha == 0) return NotLowered("alpha 0 (oneDNN's relu maps NaN and -inf to 0; ONNX's 0 * x is NaN there)");
  UnarySpec spec;
  spec.algorithm = dnnl::algorithm::eltwise_relu;
  spec.alpha = alpha;
  return LowerUnary(view, spec);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerElu(const NodeView& view) {
  UnarySpec spec;
  spec.algorithm = dnnl::algorithm::eltwise_elu;
  spec.alpha = view.GetFloat("alpha", 1.0f);
  return LowerUnary(view, spec);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerExp(const NodeView& view) {
  UnarySpec spec;
  spec.algorithm = dnnl::algorithm::eltwise_exp;
  spec.keep_nan = true;
  return LowerUnary(view, spec);
}

// Selu: gamma * elu_alpha(x), the eltwise elu with a scaling post-op.
StatusOr<std::unique_ptr<LoweredNode>> LowerSelu(const NodeView& view) {
  UnarySpec spec;
  spec.algorithm = dnnl::algorithm::eltwise_elu;
  spec.alpha = view.GetFloat("alpha", 1.67326319217681884765625f);
  spec.scale = view.GetFloat("gamma", 1.05070102214813232421875f);
  return LowerUnary(view, spec);
}

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)), which is elu
// only for alpha 1: oneDNN has no elu of a scaled input.
StatusOr<std::unique_ptr<LoweredNode>> LowerCelu(const NodeView& view) {
  const float alpha = view.GetFloat("alpha", 1.0f);
  if (alpha != 1.0f) return NotLowered("alpha ", alpha, " (oneDNN's elu takes exp(x), not exp(x / alpha)); only alpha 1 is lowered");
  UnarySpec spec;
  spec.algorithm = dnnl::algorithm::eltwise_elu;
  spec.alpha = 1.0f;
  return LowerUnary(view, spec);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerGelu(const NodeView& view) {
  const std::string approximate = view.GetString("approximate", "none");
  if (approximate == "tanh") return Eltwise(dnnl::algorithm::eltwise_gelu_tanh)(view);
  if (approximate != "none") return NotLowered("approximate \"", approximate, "\" is not an ONNX Gelu form");
  // Measured on oneDNN 3.2 (avx512_core): gelu_erf(+inf) is NaN, it
  // overflows to inf above about 1.7e38, and on [-4, -2.5] it is off by up
  // to 9.1e-7 (0.66% relative, 60000 ULP), far past the error budget.
  return NotLowered("oneDNN 3.2's gelu_erf returns NaN for +inf, overflows to inf for x above 1.7e38 and is off by up to "
                    "9.1e-7 (0.66% relative) on [-4, -2.5]");
}

StatusOr<std::unique_ptr<LoweredNode>> LowerSwish(const NodeView& view) {
  UnarySpec spec;
  spec.algorithm = dnnl::algorithm::eltwise_swish;
  spec.alpha = view.GetFloat("alpha", 1.0f);
  return LowerUnary(view, spec);
}

// Cast between the floating types oneDNN reorders exactly: every pair of
// float32, bfloat16 and float16 rounds to nearest-even and keeps NaN and
// infinities (float16 overflows to inf, as ONNX's Cast does without
// saturation, which opset 19's `saturate` asks for float8 targets only),
// except into bfloat16 from float32 or bfloat16: oneDNN's conversion
// (vcvtneps2bf16) reads a float32 subnormal as zero where ONNX rounds it to
// a bfloat16 subnormal (or, from bfloat16, keeps it).
StatusOr<std::unique_ptr<LoweredNode>> LowerCast(const NodeView& view, DataType to) {
  const std::optional<DataType> from = view.input_type(0);
  if (!from) return NotLowered("the type of input 0 is not known before the run");
  const auto floating = [](DataType t) {
    return t == DataType::kFloat || t == DataType::kBfloat16 || t == DataType::kFloat16;
  };
  if (!floating(*from) || !floating(to)) {
    return NotLowered("a cast from ", DataTypeName(*from), " to ", DataTypeName(to),
                      " (only float32, bfloat16 and float16 are lowered)");
  }
  if (*from == DataType::kFloat && to == DataType::kBfloat16) {
    return NotLowered("oneDNN 3.2 converts float32 subnormals to bfloat16 zero; ONNX rounds them to nearest-even");
  }
  if (*from == DataType::kBfloat16 && to == DataType::kBfloat16) {
    return NotLowered("oneDNN 3.2's bfloat16 reorder writes bfloat16 subnormals as zero");
  }
  UnarySpec spec;
  spec.form = UnaryForm::kReorder;
  spec.out_type = to;
  return PreparedOrChecked(std::make_unique<UnaryNode>(*from, spec), view);
}

StatusOr<std::unique_ptr<LoweredNode>> LowerCastOp(const NodeView& view) {
  const auto* to = view.attribute("to");
  if (!to || !IsKnownDataType(static_cast<int32_t>(to->i()))) return NotLowered("no valid `to` attribute");
  return LowerCast(view, static_cast<DataType>(to->i()));
}

StatusOr<std::unique_ptr<LoweredNode>> LowerCastLike(const NodeView& view) {
  const std::optional<DataType> to = view.input_type(1);
  if (!to) return NotLowered("the type of input 1 is not known before the run");
  return LowerCast(view, *to);
}

// Clip as Min(Max(x, min), max), the reference's order (so that min >
// max gives max), each step a binary primitive whose second operand is the
// one that propagates NaN: max(fill(min), x), then min(fill(max), that).
// oneDNN's eltwise_clip maps NaN to its lower bound and takes no infinite
// bound. The bounds are read at each run, so any scalar min and max inputs
// are lowered, not only initializers.
struct ClipPlan {
  dnnl::binary max, min;  // none when the tensor has no elements
  dnnl::reorder copy;     // a Clip with no bound
  dnnl::memory::desc desc;
};

// One bound: its bytes in the input's type, or absent.
using Bound = std::optional<std::vector<uint8_t>>;

void Fill(Tensor& t, const std::vector<uint8_t>& element) {
  uint8_t* out = t.mutable_raw_bytes();
  for (int64_t i = 0; i < t.size(); ++i) std::memcpy(out + i * element.size(), element.data(), element.size());
}

class ClipNode final : public ShapedNode<ClipPlan> {
 public:
  // `attribute_bounds`: Clip before opset 11, whose bounds are the
  // attributes `lo` and `hi` (absent: unbounded); else the inputs 1 and 2.
  ClipNode(DataType type, bool attribute_bounds, std::optional<float> lo, std::optional<float> hi)
      : type_(type), attribute_bounds_(attribute_bounds), lo_(lo), hi_(hi) {}


 protected:
  StatusOr<ClipPlan> MakePlan(const InputShapes& shapes) override {
    ClipPlan plan;
    const std::vector<int64_t> flat = Flat(shapes[0]);
    plan.desc = PlainDesc(flat, *DnnlType(type_));
    if (flat[0] == 0) return plan;
    using dnnl::algorithm;
    plan.max = dnnl::binary(dnnl::binary::primitive_desc(Engine(), algorithm::binary_max, plan.desc, plan.desc, plan.desc));
    plan.min = dnnl::binary(dnnl::binary::primitive_desc(Engine(), algorithm::binary_min, plan.desc, plan.desc, plan.desc));
    plan.copy = dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), plan.desc, Engine(), plan.desc));
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ClipPlan& plan, const KernelContext& ctx) override {
    const Tensor& x = ctx.tensor(0);
    PARITY_ASSIGN_OR_RETURN(Bound lo, ReadBound(ctx, 1, lo_));
    PARITY_ASSIGN_OR_RETURN(Bound hi, ReadBound(ctx, 2, hi_));
    PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, x.shape()));
    if (out.size() == 0) return std::vector<Value>{Value::FromTensor(std::move(out))};
    // A NaN bound makes every element NaN (max and min propagate it).
    for (const Bound* b : {&lo, &hi}) {
      if (*b && IsNan(**b)) {
        Fill(out, **b);
        return std::vector<Value>{Value::FromTensor(std::move(out))};
      }
    }
    dnnl::memory src = Wrap(x, plan.desc), dst = Wrap(out, plan.desc);
    if (!lo && !hi) {
      plan.copy.execute(Stream(), src, dst);
    } else if (lo && !hi) {
      Fill(out, *lo);
      plan.max.execute(Stream(), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, src}, {DNNL_ARG_DST, dst}});
    } else if (!lo && hi) {
      Fill(out, *hi);
      plan.min.execute(Stream(), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, src}, {DNNL_ARG_DST, dst}});
    } else {
      PARITY_ASSIGN_OR_RETURN(Tensor low, NewTensor(type_, x.shape()));
      Fill(low, *lo);
      const dnnl::memory at_least = Wrap(low, plan.desc);
      plan.max.execute(Stream(), {{DNNL_ARG_SRC_0, at_least}, {DNNL_ARG_SRC_1, src}, {DNNL_ARG_DST, at_least}});
      Fill(out, *hi);
      plan.min.execute(Stream(), {{DNNL_ARG_SRC_0, dst}, {DNNL_ARG_SRC_1, at_least}, {DNNL_ARG_DST, dst}});
    }
    Stream().wait();
    return std::vector<Value>{Value::FromTensor(std::move(out))};
  }

 private:
  bool IsNan(const std::vector<uint8_t>& element) const {
    StatusOr<Tensor> t = NewTensor(type_, {});
    if (!t.ok()) return false;
    std::memcpy(t.value().mutable_raw_bytes(), element.data(), element.size());
    return std::isnan(t.value().GetDouble(0));
  }

  // Bound `i` (1: min, 2: max) in the input's type: the attribute rounded
  // once to it (Clip-1 and Clip-6), or the scalar input of that type.
  StatusOr<Bound> ReadBound(const KernelContext& ctx, size_t i, std::optional<float> attribute) const {
    if (attribute_bounds_) {
      if (!attribute) return Bound();
      Tensor t = Tensor::Scalar(type_, static_cast<double>(*attribute));
      return Bound(std::vector<uint8_t>(t.raw_bytes(), t.raw_bytes() + t.byte_size()));
    }
    if (!ctx.has_input(i)) return Bound();
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
    const char* name = i == 1 ? "min" : "max";
    if (t->dtype() != type_) {
      return ctx.Error("input ", i, " (", name, ") is ", DataTypeName(t->dtype()), ", input 0 is ", DataTypeName(type_));
    }
    if (t->size() != 1) return ctx.Error("input ", i, " (", name, ") must be a scalar, got ", t->size(), " elements");
    return Bound(std::vector<uint8_t>(t->raw_bytes(), t->raw_bytes() + t->byte_size()));
  }

  DataType type_;
  bool attribute_bounds_;
  std::optional<float> lo_, hi_;
};

StatusOr<std::unique_ptr<LoweredNode>> LowerClip(const NodeView& view) {
  PARITY_RETURN_IF_ERROR(RequireSameComputedFloat(view, {0, 1, 2}));
  const DataType type = *view.input_type(0);
  if (view.opset() >= 11) return PreparedOrChecked(std::make_unique<ClipNode>(type, false, std::nullopt, std::nullopt), view);
  std::optional<float> lo, hi;
  if (view.opset() >= 6) {  // the schema's defaults: -+FLT_MAX, which bound a float64 input and not a float32 one
    lo = -std::numeric_limits<float>::max();
    hi = std::numeric_limits<float>::max();
  }
  if (view.attribute("min")) lo = view.GetFloat("min", 0.0f);
  if (view.attribute("max")) hi = view.GetFloat("max", 0.0f);
  return PreparedOrChecked(std::make_unique<ClipNode>(type, true, lo, hi), view);
}

}  // namespace

void AddEltwiseLowerings(Lowering& lowering) {
  using dnnl::algorithm;
  lowering.Add("Relu", Exact(LowerRelu));
  lowering.Add("LeakyRelu", LowerLeakyRelu);
  lowering.Add("Elu", LowerElu);
  lowering.Add("Selu", LowerSelu);
  lowering.Add("Celu", LowerCelu);
  lowering.Add("Tanh", Eltwise(algorithm::eltwise_tanh));
  lowering.Add("Sigmoid", Eltwise(algorithm::eltwise_logistic));
  lowering.Add("Exp", LowerExp);
  lowering.Add("Sqrt", Eltwise(algorithm::eltwise_sqrt));
  lowering.Add("Abs", Exact(Eltwise(algorithm::eltwise_abs)));
  lowering.Add("Neg", Exact(Eltwise(algorithm::eltwise_linear, -1.0f, 0.0f)));
  lowering.Add("Reciprocal", Eltwise(algorithm::eltwise_pow, 1.0f, -1.0f));
  lowering.Add("Round", [](const NodeView& view) -> StatusOr<std::unique_ptr<LoweredNode>> {
    // Half to even, as ONNX (nearbyint in the default rounding mode).
    if (view.input_type(0) != DataType::kFloat) return NotLowered("oneDNN 3.2's eltwise_round takes float32 only");
    return Eltwise(dnnl::algorithm::eltwise_round)(view);
  });
  lowering.Add("Gelu", LowerGelu);
  lowering.Add("HardSwish", Eltwise(algorithm::eltwise_hardswish, 1.0f / 6.0f, 0.5f));
  lowering.Add("Swish", LowerSwish);
  lowering.Add("Cast", LowerCastOp);
  lowering.Add("CastLike", LowerCastLike);
  // Refused, with what oneDNN 3.2 does differently (measured on avx512_core).
  lowering.Add("Log", Refused("oneDNN 3.2's eltwise_log is off by up to 3.5e-6 absolute on [0.5, 2] (0.25% relative, "
                              "24576 ULP near 1) and reads subnormals as the smallest normal (log(1e-40) = -88.0, not -92.1)"));
  lowering.Add("Softplus", Refused("oneDNN 3.2's soft_relu is off by up to 1.9e-6 absolute on [-20, -8] (it returns "
                                   "-1.9e-6 for x = -20, where softplus is 2.1e-9)"));
  lowering.Add("Mish", Refused("oneDNN 3.2's mish is off by up to 9.9e-7 absolute (100% relative) on [-17, -5]"));
  lowering.Add("HardSigmoid", Refused("oneDNN 3.2's hardsigmoid maps NaN to 1; ONNX keeps NaN"));
  lowering.Add("ThresholdedRelu", Refused("oneDNN 3.2 has no eltwise algorithm x > alpha ? x : 0"));
  lowering.Add("Clip", Exact(LowerClip));
}

}  // namespace parity::adapters::onednn
