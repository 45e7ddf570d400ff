// Static facts: declarations first, then one rule per operator family,
// carried forward over the top-level nodes in topological order.
#include "reference/model/static_facts.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <set>

#include "reference/model/graph.h"

namespace parity {
namespace {

using Dims = std::vector<int64_t>;

const std::set<std::string_view> kSameTypeAsFirst = {
    "Abs", "Acos", "Acosh", "Add", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "BatchNormalization",
    "Ceil", "Celu", "Clip", "Concat", "Conv", "ConvTranspose", "Cos", "Cosh", "CumSum", "DepthToSpace", "Div",
    "Dropout", "Elu", "Erf", "Exp", "Expand", "Flatten", "Floor", "Gather", "GatherElements", "GatherND", "Gelu",
    "Gemm", "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "GroupNormalization", "HardSigmoid",
    "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "LRN", "LayerNormalization", "LeakyRelu", "Log",
    "LogSoftmax", "LpNormalization", "LpPool", "MatMul", "Max", "MaxPool", "Mean", "Min", "Mish", "Mod", "Mul",
    "Neg", "Pad", "Pow", "PRelu", "RMSNormalization", "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum",
    "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum", "ReduceSumSquare",
    "Relu", "Reshape", "Resize", "RotaryEmbedding", "Round", "ScatterElements", "ScatterND", "Selu", "Shrink",
    "Sigmoid", "Sign", "Sin", "Sinh", "Slice", "Softmax", "Softplus", "Softsign", "SpaceToDepth", "Split", "Sqrt",
    "Squeeze", "Sub", "Sum", "Swish", "Tan", "Tanh", "TensorScatter", "ThresholdedRelu", "Tile", "Transpose",
    "Trilu", "Unsqueeze", "Attention", "SkipLayerNormalization", "SimplifiedLayerNormalization",
    "SkipSimplifiedLayerNormalization", "GroupQueryAttention", "MultiHeadAttention", "Einsum", "Upsample"};

const std::set<std::string_view> kBoolResult = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                                "Not", "And", "Or", "Xor", "IsNaN", "IsInf"};

const std::set<std::string_view> kSameShapeAsFirst = {
    "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BatchNormalization", "Cast", "CastLike", "Ceil",
    "Celu", "Clip", "Cos", "Cosh", "CumSum", "Elu", "Erf", "Exp", "Floor", "Gelu", "GroupNormalization",
    "HardSigmoid", "HardSwish", "Hardmax", "Identity", "InstanceNormalization", "IsInf", "IsNaN", "LRN",
    "LayerNormalization", "LeakyRelu", "Log", "LogSoftmax", "LpNormalization", "Mish", "Neg", "Not",
    "RMSNormalization", "Reciprocal", "Relu", "RotaryEmbedding", "Round", "Selu", "Shrink", "Sigmoid", "Sign",
    "Sin", "Sinh", "Softmax", "Softplus", "Softsign", "Sqrt", "Swish", "Tan", "Tanh", "ThresholdedRelu",
    "Trilu", "Dropout", "TensorScatter", "SkipLayerNormalization", "SimplifiedLayerNormalization",
    "SkipSimplifiedLayerNormalization", "DequantizeLinear", "QuantizeLinear"};

const std::set<std::string_view> kBroadcasting = {
    "Add", "Sub", "Mul", "Div", "Pow", "Mod", "PRelu", "Max", "Min", "Mean", "Sum", "Equal", "Less", "Greater",
    "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Where", "BitShift", "BitwiseAnd", "BitwiseOr",
    "BitwiseXor"};

const std::set<std::string_view> kNoArithmetic = {
    "Reshape", "Transpose", "Concat", "Split", "Slice", "Squeeze", "Unsqueeze", "Flatten", "Identity", "Expand",
    "Gather", "GatherElements", "GatherND", "Tile", "Pad", "Shape", "Size", "Cast", "CastLike", "Constant",
    "ConstantOfShape", "DepthToSpace", "SpaceToDepth", "ScatterND", "ScatterElements", "TensorScatter"};

// Counted one operation per output element besides kSameShapeAsFirst and
// kBroadcasting (whose shape rules differ).
const std::set<std::string_view> kPerOutputElement = {"Resize", "Upsample", "Range"};

bool StandardOrKnownDomain(std::string_view domain) {
  return domain.empty() || domain == "ai.onnx" || domain == "com.microsoft" || domain == "org.onnxparity.contrib";
}

int64_t AttrInt(const onnx::NodeProto& node, std::string_view name, int64_t fallback) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.i();
  }
  return fallback;
}

std::optional<Dims> AttrInts(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return Dims(a.ints().begin(), a.ints().end());
  }
  return std::nullopt;
}

std::string AttrString(const onnx::NodeProto& node, std::string_view name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return a.s();
  }
  return "";
}

ValueFacts FromTypeProto(const onnx::TypeProto& type) {
  ValueFacts facts;
  if (!type.has_tensor_type()) return facts;
  const auto& tensor = type.tensor_type();
  if (tensor.elem_type() != 0 && IsKnownDataType(tensor.elem_type())) {
    facts.type = static_cast<DataType>(tensor.elem_type());
  }
  if (tensor.has_shape()) {
    Dims dims;
    for (const auto& d : tensor.shape().dim()) dims.push_back(d.has_dim_value() ? d.dim_value() : kUnknownDim);
    facts.dims = std::move(dims);
  }
  return facts;
}

std::optional<Dims> SmallInts(const onnx::TensorProto& t) {
  const int64_t count = std::max<int64_t>(t.int64_data_size(), t.int32_data_size());
  if (t.data_type() != onnx::TensorProto::INT64 && t.data_type() != onnx::TensorProto::INT32) return std::nullopt;
  Dims out;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    const size_t width = t.data_type() == onnx::TensorProto::INT64 ? 8 : 4;
    if (raw.size() % width != 0 || raw.size() / width > 64) return std::nullopt;
    for (size_t i = 0; i < raw.size(); i += width) {
      if (width == 8) {
        int64_t v;
        std::memcpy(&v, raw.data() + i, 8);
        out.push_back(v);
      } else {
        int32_t v;
        std::memcpy(&v, raw.data() + i, 4);
        out.push_back(v);
      }
    }
    return out;
  }
  if (count > 64 || t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  for (auto v : t.int64_data()) out.push_back(v);
  for (auto v : t.int32_data()) out.push_back(v);
  return out;
}

std::optional<std::vector<double>> SmallFloats(const onnx::TensorProto& t) {
  if (t.data_type() != onnx::TensorProto::FLOAT || t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::vector<double> out;
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (raw.size() % 4 != 0 || raw.size() / 4 > 64) return std::nullopt;
    for (size_t i = 0; i < raw.size(); i += 4) {
      float v;
      std::memcpy(&v, raw.data() + i, 4);
      out.push_back(v);
    }
    return out;
  }
  if (t.float_data_size() > 64) return std::nullopt;
  for (float v : t.float_data()) out.push_back(v);
  return out;
}

ValueFacts FromTensorProto(const onnx::TensorProto& t) {
  ValueFacts facts;
  if (IsKnownDataType(t.data_type()) && t.data_type() != 0) facts.type = static_cast<DataType>(t.data_type());
  facts.dims = Dims(t.dims().begin(), t.dims().end());
  facts.ints = SmallInts(t);
  facts.floats = SmallFloats(t);
  return facts;
}

// numpy broadcasting of known ranks; a dim is unknown unless the rule fixes it.
std::optional<Dims> Broadcast(const std::vector<const Dims*>& shapes) {
  size_t rank = 0;
  for (const Dims* s : shapes) {
    if (!s) return std::nullopt;
    rank = std::max(rank, s->size());
  }
  Dims out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    bool unknown = false;
    int64_t dim = 1;
    for (const Dims* s : shapes) {
      if (i + s->size() < rank) continue;
      const int64_t d = (*s)[i + s->size() - rank];
      if (d == kUnknownDim) {
        unknown = true;
      } else if (d != 1) {
        dim = d;
      }
    }
    out[i] = unknown && dim == 1 ? kUnknownDim : dim;
  }
  return out;
}

int64_t NormalizeAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// Output spatial dims of Conv and the pools (ONNX's formulas; auto_pad too).
std::optional<Dims> WindowedDims(const onnx::NodeProto& node, const Dims& x, const Dims& kernel, int64_t channels) {
  const size_t spatial = kernel.size();
  if (x.size() != spatial + 2) return std::nullopt;
  const Dims strides = AttrInts(node, "strides").value_or(Dims(spatial, 1));
  const Dims dilations = AttrInts(node, "dilations").value_or(Dims(spatial, 1));
  const Dims pads = AttrInts(node, "pads").value_or(Dims(2 * spatial, 0));
  const std::string auto_pad = AttrString(node, "auto_pad");
  const bool ceil_mode = AttrInt(node, "ceil_mode", 0) != 0;
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial) return std::nullopt;
  Dims out = {x[0], channels};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = x[i + 2];
    if (in == kUnknownDim || kernel[i] == kUnknownDim || strides[i] <= 0) {
      out.push_back(kUnknownDim);
      continue;
    }
    const int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.push_back((in + strides[i] - 1) / strides[i]);
    } else if (auto_pad == "VALID") {
      out.push_back((in - extent) / strides[i] + 1);
    } else {
      const double span = static_cast<double>(in + pads[i] + pads[i + spatial] - extent) / strides[i];
      out.push_back(static_cast<int64_t>(ceil_mode ? std::ceil(span) : std::floor(span)) + 1);
    }
  }
  return out;
}

class Inference {
 public:
  explicit Inference(std::unordered_map<std::string, ValueFacts>& values) : values_(values) {}

  void Node(const onnx::NodeProto& node) {
    if (node.output_size() == 0) return;
    const std::string_view op = node.op_type();
    const std::string& out = node.output(0);
    ValueFacts& facts = values_[out];
    if (StandardOrKnownDomain(node.domain())) {
      if (!facts.type) facts.type = OutputType(node);
      if (!facts.dims) facts.dims = OutputDims(node);
    }
    if (op == "Constant") ConstantFacts(node, facts);
    if (op == "Split") SplitFacts(node);
    if (!facts.ints && StandardOrKnownDomain(node.domain())) facts.ints = OutputInts(node, facts);
  }

 private:
  const ValueFacts* In(int i, const onnx::NodeProto& node) const {
    if (i >= node.input_size() || node.input(i).empty()) return nullptr;
    const auto it = values_.find(node.input(i));
    return it == values_.end() ? nullptr : &it->second;
  }
  const Dims* Dims_(int i, const onnx::NodeProto& node) const {
    const ValueFacts* f = In(i, node);
    return f && f->dims ? &*f->dims : nullptr;
  }
  std::optional<DataType> TypeOf(int i, const onnx::NodeProto& node) const {
    const ValueFacts* f = In(i, node);
    return f ? f->type : std::nullopt;
  }

  std::optional<DataType> OutputType(const onnx::NodeProto& node) const {
    const std::string_view op = node.op_type();
    if (kBoolResult.count(op)) return DataType::kBool;
    if (op == "Range") return TypeOf(0, node);
    if (op == "ConstantOfShape") {
      for (const auto& a : node.attribute()) {
        if (a.name() == "value" && a.has_t() && IsKnownDataType(a.t().data_type())) {
          return static_cast<DataType>(a.t().data_type());
        }
      }
      return DataType::kFloat;
    }
    if (op == "Shape" || op == "Size" || op == "ArgMax" || op == "ArgMin" || op == "NonZero") return DataType::kInt64;
    if (op == "Cast") {
      const int64_t to = AttrInt(node, "to", 0);
      if (to > 0 && IsKnownDataType(static_cast<int32_t>(to))) return static_cast<DataType>(to);
      return std::nullopt;
    }
    if (op == "CastLike") return TypeOf(1, node);
    if (op == "Where") return TypeOf(1, node);
    if (op == "MatMulInteger" || op == "ConvInteger") return DataType::kInt32;
    if (op == "QLinearMatMul" || op == "QLinearConv") return TypeOf(7, node);
    if (op == "QuantizeLinear") {
      if (auto zp = TypeOf(2, node)) return zp;
      const int64_t to = AttrInt(node, "output_dtype", 0);
      return to > 0 && IsKnownDataType(static_cast<int32_t>(to)) ? static_cast<DataType>(to) : DataType::kUint8;
    }
    if (op == "DequantizeLinear") {
      const int64_t to = AttrInt(node, "output_dtype", 0);
      if (to > 0 && IsKnownDataType(static_cast<int32_t>(to))) return static_cast<DataType>(to);
      return TypeOf(1, node);
    }
    if (kSameTypeAsFirst.count(op)) return TypeOf(0, node);
    return std::nullopt;
  }

  std::optional<Dims> OutputDims(const onnx::NodeProto& node) const {
    const std::string_view op = node.op_type();
    const Dims* x = Dims_(0, node);
    if (kSameShapeAsFirst.count(op)) {
      if (op == "QuantizeLinear" || op == "DequantizeLinear") return x ? std::optional<Dims>(*x) : std::nullopt;
      return x ? std::optional<Dims>(*x) : std::nullopt;
    }
    if (kBroadcasting.count(op)) {
      std::vector<const Dims*> shapes;
      for (int i = 0; i < node.input_size(); ++i) shapes.push_back(Dims_(i, node));
      return Broadcast(shapes);
    }
    if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
      const Dims* b = Dims_(op == "QLinearMatMul" ? 3 : 1, node);
      if (!x || !b || x->empty() || b->empty()) return std::nullopt;
      Dims a_batch = x->size() >= 2 ? Dims(x->begin(), x->end() - 2) : Dims{};
      Dims b_batch = b->size() >= 2 ? Dims(b->begin(), b->end() - 2) : Dims{};
      std::optional<Dims> batch = Broadcast({&a_batch, &b_batch});
      if (!batch) return std::nullopt;
      if (x->size() >= 2) batch->push_back((*x)[x->size() - 2]);
      if (b->size() >= 2) batch->push_back(b->back());
      return batch;
    }
    if (op == "Gemm") {
      const Dims* b = Dims_(1, node);
      if (!x || !b || x->size() != 2 || b->size() != 2) return std::nullopt;
      return Dims{AttrInt(node, "transA", 0) ? (*x)[1] : (*x)[0], AttrInt(node, "transB", 0) ? (*b)[0] : (*b)[1]};
    }
    if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
      const Dims* w = Dims_(op == "QLinearConv" ? 3 : 1, node);
      if (!x || !w || w->size() < 3) return std::nullopt;
      const Dims kernel = AttrInts(node, "kernel_shape").value_or(Dims(w->begin() + 2, w->end()));
      return WindowedDims(node, *x, kernel, (*w)[0]);
    }
    if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
      const std::optional<Dims> kernel = AttrInts(node, "kernel_shape");
      if (!x || !kernel || x->size() < 2) return std::nullopt;
      return WindowedDims(node, *x, *kernel, (*x)[1]);
    }
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool" || op == "GlobalLpPool") {
      if (!x || x->size() < 2) return std::nullopt;
      Dims out(x->size(), 1);
      out[0] = (*x)[0];
      out[1] = (*x)[1];
      return out;
    }
    if (op == "Transpose") {
      if (!x) return std::nullopt;
      Dims perm = AttrInts(node, "perm").value_or(Dims{});
      if (perm.empty()) {
        for (size_t i = x->size(); i-- > 0;) perm.push_back(static_cast<int64_t>(i));
      }
      if (perm.size() != x->size()) return std::nullopt;
      Dims out;
      for (int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(x->size())) return std::nullopt;
        out.push_back((*x)[static_cast<size_t>(p)]);
      }
      return out;
    }
    if (op == "Concat") {
      if (!x) return std::nullopt;
      const int64_t axis = NormalizeAxis(AttrInt(node, "axis", 0), x->size());
      if (axis < 0 || axis >= static_cast<int64_t>(x->size())) return std::nullopt;
      Dims out = *x;
      for (int i = 1; i < node.input_size(); ++i) {
        const Dims* d = Dims_(i, node);
        if (!d || d->size() != x->size()) return std::nullopt;
        const int64_t add = (*d)[static_cast<size_t>(axis)];
        out[static_cast<size_t>(axis)] = out[static_cast<size_t>(axis)] == kUnknownDim || add == kUnknownDim
                                             ? kUnknownDim
                                             : out[static_cast<size_t>(axis)] + add;
      }
      return out;
    }
    if (op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin") return ReducedDims(node, x);
    if (op == "Reshape") return ReshapedDims(node, x);
    if (op == "Shape") {
      if (!x) return std::nullopt;
      const auto [start, end] = ShapeRange(node, x->size());
      return Dims{end - start};
    }
    if (op == "Size") return Dims{};
    if (op == "ConstantOfShape") {
      const ValueFacts* shape = In(0, node);
      return shape && shape->ints ? shape->ints : std::nullopt;
    }
    if (op == "Range") {
      const std::optional<int64_t> count = RangeCount(node);
      return count ? std::optional<Dims>(Dims{*count}) : std::nullopt;
    }
    if (op == "Gather") return GatheredDims(node, x);
    if (op == "GatherND") return GatheredNdDims(node, x);
    if (op == "Slice") return SlicedDims(node, x);
    if (op == "Squeeze") return SqueezedDims(node, x);
    if (op == "Unsqueeze") return UnsqueezedDims(node, x);
    if (op == "Flatten") return FlattenedDims(node, x);
    if (op == "Expand") {
      const ValueFacts* shape = In(1, node);
      if (!x || !shape || !shape->ints) return std::nullopt;
      return Broadcast({x, &*shape->ints});
    }
    if (op == "Attention" && (node.domain().empty() || node.domain() == "ai.onnx")) return AttentionDims(node, x);
    return std::nullopt;
  }

  // Shape's [start, end) of a rank-`rank` input (opset 15's attributes, clamped).
  static std::pair<int64_t, int64_t> ShapeRange(const onnx::NodeProto& node, size_t rank) {
    const auto r = static_cast<int64_t>(rank);
    auto clamp = [r](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + r : v, 0, r); };
    const int64_t start = clamp(AttrInt(node, "start", 0));
    return {start, std::max(start, clamp(AttrInt(node, "end", r)))};
  }

  // The scalar contents of input `i`, when known.
  std::optional<int64_t> ScalarInt(const onnx::NodeProto& node, int i) const {
    const ValueFacts* f = In(i, node);
    if (!f || !f->ints || f->ints->size() != 1) return std::nullopt;
    return f->ints->front();
  }

  // Range's element count from integer start, limit and delta.
  std::optional<int64_t> RangeCount(const onnx::NodeProto& node) const {
    const std::optional<int64_t> start = ScalarInt(node, 0), limit = ScalarInt(node, 1), delta = ScalarInt(node, 2);
    if (!start || !limit || !delta || *delta == 0) return std::nullopt;
    const int64_t span = *limit - *start;
    const int64_t count = span / *delta + ((span % *delta != 0) && ((span < 0) == (*delta < 0)) ? 1 : 0);
    return std::max<int64_t>(0, count);
  }

  // The contents of a small integer value computed from known contents: the
  // shape arithmetic of exported and expanded graphs (Shape, Gather, Slice,
  // Concat, Unsqueeze, Cast, Add, ...), so that a Reshape or Expand fed by it
  // has known dims. Only int64 and int32 values, at most kMaxInts elements.
  std::optional<Dims> OutputInts(const onnx::NodeProto& node, const ValueFacts& out) const {
    constexpr size_t kMaxInts = 64;
    const std::string_view op = node.op_type();
    auto ints = [&](int i) -> const Dims* {
      const ValueFacts* f = In(i, node);
      return f && f->ints ? &*f->ints : nullptr;
    };
    if (op == "Shape") {
      const Dims* x = Dims_(0, node);
      if (!x) return std::nullopt;
      const auto [start, end] = ShapeRange(node, x->size());
      Dims dims(x->begin() + start, x->begin() + end);
      if (std::any_of(dims.begin(), dims.end(), [](int64_t d) { return d == kUnknownDim; })) return std::nullopt;
      return dims;
    }
    if (op == "Size") {
      const ValueFacts* x = In(0, node);
      return x && x->static_shape() ? std::optional<Dims>(Dims{x->element_count()}) : std::nullopt;
    }
    if (!out.type || (*out.type != DataType::kInt64 && *out.type != DataType::kInt32)) return std::nullopt;
    if (op == "Identity" || op == "Cast" || op == "CastLike" || op == "Reshape" || op == "Squeeze" ||
        op == "Unsqueeze" || op == "Flatten") {
      const Dims* x = ints(0);
      return x ? std::optional<Dims>(*x) : std::nullopt;
    }
    if (op == "Gather") {
      const Dims* data = ints(0);
      const Dims* indices = ints(1);
      const Dims* data_dims = Dims_(0, node);
      if (!data || !indices || !data_dims || data_dims->size() != 1) return std::nullopt;
      Dims gathered;
      for (int64_t i : *indices) {
        const int64_t at = i < 0 ? i + static_cast<int64_t>(data->size()) : i;
        if (at < 0 || at >= static_cast<int64_t>(data->size())) return std::nullopt;
        gathered.push_back((*data)[static_cast<size_t>(at)]);
      }
      return gathered;
    }
    if (op == "Concat") {
      Dims joined;
      for (int i = 0; i < node.input_size(); ++i) {
        const Dims* part = ints(i);
        const Dims* part_dims = Dims_(i, node);
        if (!part || !part_dims || part_dims->size() != 1) return std::nullopt;
        joined.insert(joined.end(), part->begin(), part->end());
      }
      return joined.size() <= kMaxInts ? std::optional<Dims>(joined) : std::nullopt;
    }
    if (op == "Slice") {
      const Dims* data = ints(0);
      const Dims* data_dims = Dims_(0, node);
      const std::optional<Dims> sliced_dims = SlicedDims(node, data_dims);
      const std::optional<Dims> starts = IntsOf(node, "starts", 1);
      if (!data || !data_dims || data_dims->size() != 1 || !sliced_dims || !starts || starts->size() != 1) {
        return std::nullopt;
      }
      int64_t step = 1;
      if (node.input_size() > 4 && !node.input(4).empty()) {
        const std::optional<int64_t> s = ScalarInt(node, 4);
        if (!s) return std::nullopt;
        step = *s;
      }
      const auto n = static_cast<int64_t>(data->size());
      int64_t at = starts->front() < 0 ? starts->front() + n : starts->front();
      at = step > 0 ? std::clamp<int64_t>(at, 0, n) : std::clamp<int64_t>(at, 0, n - 1);
      Dims sliced;
      for (int64_t k = 0; k < sliced_dims->front(); ++k, at += step) sliced.push_back((*data)[static_cast<size_t>(at)]);
      return sliced;
    }
    if (op == "Range") {
      const std::optional<int64_t> count = RangeCount(node);
      const std::optional<int64_t> start = ScalarInt(node, 0), delta = ScalarInt(node, 2);
      if (!count || *count > static_cast<int64_t>(kMaxInts)) return std::nullopt;
      Dims values;
      for (int64_t k = 0; k < *count; ++k) values.push_back(*start + k * *delta);
      return values;
    }
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Max" || op == "Min") {
      const Dims* a = ints(0);
      const Dims* b = ints(1);
      if (!a || !b || a->empty() || b->empty() || (a->size() != b->size() && a->size() != 1 && b->size() != 1)) {
        return std::nullopt;
      }
      Dims result;
      for (size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
        const int64_t x = (*a)[a->size() == 1 ? 0 : i];
        const int64_t y = (*b)[b->size() == 1 ? 0 : i];
        if (op == "Add") result.push_back(x + y);
        else if (op == "Sub") result.push_back(x - y);
        else if (op == "Mul") result.push_back(x * y);
        else if (op == "Max") result.push_back(std::max(x, y));
        else if (op == "Min") result.push_back(std::min(x, y));
        // Integer division only where it is exact: no rounding rule to choose.
        else if (y != 0 && x % y == 0) result.push_back(x / y);
        else return std::nullopt;
      }
      return result;
    }
    return std::nullopt;
  }

  // An int list given by attribute `name` (older opsets) or by the constant
  // input `input` (newer ones); nullopt when neither is known.
  std::optional<Dims> IntsOf(const onnx::NodeProto& node, std::string_view name, int input) const {
    if (std::optional<Dims> attr = AttrInts(node, name)) return attr;
    const ValueFacts* f = In(input, node);
    return f && f->ints ? f->ints : std::nullopt;
  }

  std::optional<Dims> GatheredDims(const onnx::NodeProto& node, const Dims* x) const {
    const Dims* indices = Dims_(1, node);
    if (!x || !indices) return std::nullopt;
    const int64_t axis = NormalizeAxis(AttrInt(node, "axis", 0), x->size());
    if (axis < 0 || axis >= static_cast<int64_t>(x->size())) return std::nullopt;
    Dims out(x->begin(), x->begin() + axis);
    out.insert(out.end(), indices->begin(), indices->end());
    out.insert(out.end(), x->begin() + axis + 1, x->end());
    return out;
  }

  // indices[:-1] + data[batch_dims + indices[-1]:] (the batch dims are the leading dims of indices).
  std::optional<Dims> GatheredNdDims(const onnx::NodeProto& node, const Dims* x) const {
    const Dims* indices = Dims_(1, node);
    if (!x || !indices || indices->empty() || indices->back() == kUnknownDim) return std::nullopt;
    const int64_t batch = AttrInt(node, "batch_dims", 0);
    const int64_t depth = indices->back();
    if (batch < 0 || batch + depth > static_cast<int64_t>(x->size())) return std::nullopt;
    Dims out(indices->begin(), indices->end() - 1);
    out.insert(out.end(), x->begin() + batch + depth, x->end());
    return out;
  }

  // starts, ends, axes and steps as constants (inputs 1-4, or the attributes
  // of opset 1); each sliced dim by ONNX's clamping rules.
  std::optional<Dims> SlicedDims(const onnx::NodeProto& node, const Dims* x) const {
    if (!x) return std::nullopt;
    const std::optional<Dims> starts = IntsOf(node, "starts", 1);
    const std::optional<Dims> ends = IntsOf(node, "ends", 2);
    if (!starts || !ends || starts->size() != ends->size()) return std::nullopt;
    const bool has_axes = AttrInts(node, "axes") || (node.input_size() > 3 && !node.input(3).empty());
    std::optional<Dims> axes = has_axes ? IntsOf(node, "axes", 3) : std::nullopt;
    if (has_axes && !axes) return std::nullopt;
    if (!axes) {
      axes = Dims{};
      for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
    }
    std::optional<Dims> steps = Dims(starts->size(), 1);
    if (node.input_size() > 4 && !node.input(4).empty()) {
      const ValueFacts* f = In(4, node);
      steps = f ? f->ints : std::nullopt;
    }
    if (!steps || axes->size() != starts->size() || steps->size() != starts->size()) return std::nullopt;
    Dims out = *x;
    for (size_t i = 0; i < starts->size(); ++i) {
      const int64_t axis = NormalizeAxis((*axes)[i], x->size());
      if (axis < 0 || axis >= static_cast<int64_t>(x->size()) || (*steps)[i] == 0) return std::nullopt;
      const int64_t dim = (*x)[static_cast<size_t>(axis)];
      if (dim == kUnknownDim) continue;
      out[static_cast<size_t>(axis)] = SliceLength((*starts)[i], (*ends)[i], (*steps)[i], dim);
    }
    return out;
  }

  static int64_t SliceLength(int64_t start, int64_t end, int64_t step, int64_t dim) {
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      return end > start ? (end - start + step - 1) / step : 0;
    }
    start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    return start > end ? (start - end - step - 1) / -step : 0;
  }

  std::optional<Dims> SqueezedDims(const onnx::NodeProto& node, const Dims* x) const {
    if (!x) return std::nullopt;
    const bool has_axes = AttrInts(node, "axes") || (node.input_size() > 1 && !node.input(1).empty());
    const std::optional<Dims> axes = has_axes ? IntsOf(node, "axes", 1) : std::nullopt;
    if (has_axes && !axes) return std::nullopt;
    std::set<int64_t> squeezed;
    if (axes) {
      for (int64_t a : *axes) squeezed.insert(NormalizeAxis(a, x->size()));
    } else {
      // Without axes every dim of 1 goes: each dim must be known.
      for (size_t i = 0; i < x->size(); ++i) {
        if ((*x)[i] == kUnknownDim) return std::nullopt;
        if ((*x)[i] == 1) squeezed.insert(static_cast<int64_t>(i));
      }
    }
    Dims out;
    for (size_t i = 0; i < x->size(); ++i) {
      if (!squeezed.count(static_cast<int64_t>(i))) out.push_back((*x)[i]);
    }
    return out;
  }

  std::optional<Dims> UnsqueezedDims(const onnx::NodeProto& node, const Dims* x) const {
    const std::optional<Dims> axes = IntsOf(node, "axes", 1);
    if (!x || !axes) return std::nullopt;
    const size_t rank = x->size() + axes->size();
    std::set<int64_t> inserted;
    for (int64_t a : *axes) inserted.insert(NormalizeAxis(a, rank));
    if (inserted.size() != axes->size()) return std::nullopt;
    Dims out;
    size_t next = 0;
    for (size_t i = 0; i < rank; ++i) {
      if (inserted.count(static_cast<int64_t>(i))) {
        out.push_back(1);
      } else if (next < x->size()) {
        out.push_back((*x)[next++]);
      } else {
        return std::nullopt;
      }
    }
    return out;
  }

  std::optional<Dims> FlattenedDims(const onnx::NodeProto& node, const Dims* x) const {
    if (!x) return std::nullopt;
    const int64_t axis = NormalizeAxis(AttrInt(node, "axis", 1), x->size());
    if (axis < 0 || axis > static_cast<int64_t>(x->size())) return std::nullopt;
    auto product = [&](size_t begin, size_t end) {
      int64_t p = 1;
      for (size_t i = begin; i < end; ++i) {
        if ((*x)[i] == kUnknownDim) return kUnknownDim;
        p *= (*x)[i];
      }
      return p;
    };
    return Dims{product(0, static_cast<size_t>(axis)), product(static_cast<size_t>(axis), x->size())};
  }

  // Attention 23/24's Y: Q's layout with V's head size, (B, Hq, S, Dv) for
  // 4-D inputs and (B, S, q_num_heads * Dv) for 3-D ones.
  std::optional<Dims> AttentionDims(const onnx::NodeProto& node, const Dims* q) const {
    const Dims* v = Dims_(2, node);
    if (!q || !v || q->size() != v->size()) return std::nullopt;
    if (q->size() == 4) return Dims{(*q)[0], (*q)[1], (*q)[2], (*v)[3]};
    if (q->size() != 3) return std::nullopt;
    const int64_t q_heads = AttrInt(node, "q_num_heads", 0);
    const int64_t kv_heads = AttrInt(node, "kv_num_heads", 0);
    if (q_heads <= 0 || kv_heads <= 0) return std::nullopt;
    const int64_t hidden = (*v)[2] == kUnknownDim || (*v)[2] % kv_heads != 0 ? kUnknownDim
                                                                              : q_heads * ((*v)[2] / kv_heads);
    return Dims{(*q)[0], (*q)[1], hidden};
  }

  // Every output of a Split: its type, and its dims from `split` (attribute
  // or constant input 1), else `num_outputs` or the output count, as ONNX
  // divides the axis (the last part smaller when it does not divide evenly).
  void SplitFacts(const onnx::NodeProto& node) {
    const Dims* x = Dims_(0, node);
    const std::optional<DataType> type = TypeOf(0, node);
    const int parts = node.output_size();
    std::optional<Dims> sizes = IntsOf(node, "split", 1);
    const int64_t axis = x ? NormalizeAxis(AttrInt(node, "axis", 0), x->size()) : -1;
    const bool axis_ok = x && axis >= 0 && axis < static_cast<int64_t>(x->size());
    if (!sizes && axis_ok && (*x)[static_cast<size_t>(axis)] != kUnknownDim) {
      const int64_t dim = (*x)[static_cast<size_t>(axis)];
      const int64_t chunk = (dim + parts - 1) / parts;
      sizes = Dims{};
      for (int i = 0; i < parts; ++i) sizes->push_back(std::max<int64_t>(0, std::min(chunk, dim - i * chunk)));
    }
    for (int i = 0; i < parts; ++i) {
      if (node.output(i).empty()) continue;
      ValueFacts& facts = values_[node.output(i)];
      if (!facts.type) facts.type = type;
      if (facts.dims || !axis_ok || !sizes || sizes->size() != static_cast<size_t>(parts)) continue;
      Dims dims = *x;
      dims[static_cast<size_t>(axis)] = (*sizes)[static_cast<size_t>(i)];
      facts.dims = std::move(dims);
    }
  }

  std::optional<Dims> ReducedDims(const onnx::NodeProto& node, const Dims* x) const {
    if (!x) return std::nullopt;
    std::optional<Dims> axes = AttrInts(node, "axes");
    if (node.op_type() == "ArgMax" || node.op_type() == "ArgMin") axes = Dims{AttrInt(node, "axis", 0)};
    if (!axes && node.input_size() > 1 && !node.input(1).empty()) {
      const ValueFacts* f = In(1, node);
      if (!f || !f->ints) return std::nullopt;
      axes = f->ints;
    }
    const bool keep = AttrInt(node, "keepdims", 1) != 0;
    if (!axes || axes->empty()) {
      if (AttrInt(node, "noop_with_empty_axes", 0)) return *x;
      axes = Dims{};
      for (size_t i = 0; i < x->size(); ++i) axes->push_back(static_cast<int64_t>(i));
    }
    std::set<int64_t> reduced;
    for (int64_t a : *axes) reduced.insert(NormalizeAxis(a, x->size()));
    Dims out;
    for (size_t i = 0; i < x->size(); ++i) {
      if (!reduced.count(static_cast<int64_t>(i))) {
        out.push_back((*x)[i]);
      } else if (keep) {
        out.push_back(1);
      }
    }
    return out;
  }

  std::optional<Dims> ReshapedDims(const onnx::NodeProto& node, const Dims* x) const {
    const ValueFacts* shape = In(1, node);
    if (!shape || !shape->ints) return std::nullopt;
    Dims out = *shape->ints;
    const bool allowzero = AttrInt(node, "allowzero", 0) != 0;
    int64_t known = 1;
    int minus_one = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allowzero) {
        if (!x || i >= x->size()) return std::nullopt;
        out[i] = (*x)[i];
      }
      if (out[i] == -1) {
        minus_one = static_cast<int>(i);
        continue;
      }
      if (out[i] == kUnknownDim || out[i] < 0) return std::nullopt;
      known *= out[i];
    }
    if (minus_one >= 0) {
      int64_t total = 1;
      for (int64_t d : x ? *x : Dims{kUnknownDim}) {
        if (d == kUnknownDim) {
          total = -1;
          break;
        }
        total *= d;
      }
      out[static_cast<size_t>(minus_one)] = total < 0 || known == 0 ? kUnknownDim : total / known;
    }
    return out;
  }

  static void ConstantFacts(const onnx::NodeProto& node, ValueFacts& facts) {
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        facts = FromTensorProto(a.t());
      } else if (a.name() == "value_int") {
        facts = {DataType::kInt64, Dims{}, Dims{a.i()}, std::nullopt};
      } else if (a.name() == "value_ints") {
        facts = {DataType::kInt64, Dims{a.ints_size()}, Dims(a.ints().begin(), a.ints().end()), std::nullopt};
      } else if (a.name() == "value_float") {
        facts = {DataType::kFloat, Dims{}, std::nullopt, std::vector<double>{a.f()}};
      } else if (a.name() == "value_floats") {
        facts = {DataType::kFloat, Dims{a.floats_size()}, std::nullopt,
                 std::vector<double>(a.floats().begin(), a.floats().end())};
      }
    }
  }

  std::unordered_map<std::string, ValueFacts>& values_;
};

double Product(const Dims& dims) {
  double p = 1;
  for (int64_t d : dims) p *= static_cast<double>(d);
  return p;
}

}  // namespace

bool ValueFacts::static_shape() const {
  return dims && std::none_of(dims->begin(), dims->end(), [](int64_t d) { return d == kUnknownDim; });
}

int64_t ValueFacts::element_count() const {
  if (!static_shape()) return -1;
  int64_t n = 1;
  for (int64_t d : *dims) n *= d;
  return n;
}

StaticFacts StaticFacts::Infer(const onnx::GraphProto& graph,
                               const std::map<std::string, std::vector<int64_t>>& known_dims) {
  StaticFacts facts;
  auto& values = facts.values_;
  // Declarations: the graph's own, before any rule.
  // An initializer that is also a graph input is only a default (IR 4 on):
  // a run may feed another value, so neither its contents nor its dims are
  // facts; the input's declaration is.
  std::set<std::string_view> fed;
  for (const auto& input : graph.input()) fed.insert(input.name());
  for (const auto& init : graph.initializer()) {
    if (!fed.count(init.name())) values[init.name()] = FromTensorProto(init);
  }
  for (const auto& infos : {&graph.input(), &graph.value_info(), &graph.output()}) {
    for (const auto& info : *infos) {
      ValueFacts declared = FromTypeProto(info.type());
      ValueFacts& f = values[info.name()];
      if (!f.type) f.type = declared.type;
      if (!f.dims) f.dims = declared.dims;
    }
  }
  for (const auto& [name, dims] : known_dims) values[name].dims = dims;
  Inference inference(values);
  StatusOr<std::vector<const onnx::NodeProto*>> order = graph::TopologicalOrder(graph.node(), "static facts");
  if (order.ok()) {
    for (const onnx::NodeProto* node : *order) inference.Node(*node);
  }
  return facts;
}

const ValueFacts* StaticFacts::Find(std::string_view name) const {
  const auto it = values_.find(std::string(name));
  return it == values_.end() ? nullptr : &it->second;
}

std::optional<DataType> StaticFacts::TypeOf(std::string_view name) const {
  const ValueFacts* f = Find(name);
  return f ? f->type : std::nullopt;
}

const std::vector<int64_t>* StaticFacts::StaticDims(std::string_view name) const {
  const ValueFacts* f = Find(name);
  return f && f->static_shape() ? &*f->dims : nullptr;
}

std::optional<double> NodeFlops(const onnx::NodeProto& node, const StaticFacts& facts) {
  const std::string_view op = node.op_type();
  // Only operators whose rules are written here are counted: a node of
  // another domain (a model-local function, a vendor op) or one that runs
  // a subgraph (If, Loop, Scan) does work no rule sees.
  if (!StandardOrKnownDomain(node.domain())) return std::nullopt;
  for (const auto& a : node.attribute()) {
    if (a.has_g() || a.graphs_size() > 0) return std::nullopt;
  }
  if (kNoArithmetic.count(op)) return 0.0;
  if (node.output_size() == 0) return 0.0;
  const Dims* out = facts.StaticDims(node.output(0));
  auto input = [&](int i) -> const Dims* {
    return i < node.input_size() && !node.input(i).empty() ? facts.StaticDims(node.input(i)) : nullptr;
  };
  if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
    const Dims* a = input(0);
    if (!out || !a || a->empty()) return std::nullopt;
    return 2.0 * Product(*out) * static_cast<double>(a->back());
  }
  if (op == "Gemm") {
    const Dims* a = input(0);
    if (!out || !a || a->size() != 2) return std::nullopt;
    const double k = static_cast<double>(AttrInt(node, "transA", 0) ? (*a)[0] : (*a)[1]);
    return 2.0 * Product(*out) * k;
  }
  if (op == "Conv" || op == "ConvInteger" || op == "QLinearConv") {
    const Dims* w = input(op == "QLinearConv" ? 3 : 1);
    if (!out || !w || w->size() < 3) return std::nullopt;
    // Each output element: C/group x kernel multiply-adds (W's dims 1..).
    return 2.0 * Product(*out) * Product(Dims(w->begin() + 1, w->end()));
  }
  if (op == "ConvTranspose") {
    const Dims* x = input(0);
    const Dims* w = input(1);
    if (!x || !w || w->size() < 3) return std::nullopt;
    // Each input element scatters into C_out/group x kernel outputs.
    return 2.0 * Product(*x) * Product(Dims(w->begin() + 1, w->end()));
  }
  if (op == "Attention" || op == "GroupQueryAttention" || op == "MultiHeadAttention") {
    const Dims* q = input(0);
    const Dims* k = input(1);
    if (!q || !k || !out) return std::nullopt;
    // Q K^T and P V: 2 x (elements of Q) x keys, and 2 x (elements of the output) x keys.
    const int64_t keys = k->size() == 4 ? (*k)[2] : (k->size() == 3 ? (*k)[1] : -1);
    if (keys < 0) return std::nullopt;
    const ValueFacts* past = node.input_size() > 4 && !node.input(4).empty() ? facts.Find(node.input(4)) : nullptr;
    int64_t total = keys;
    if (past && past->static_shape() && past->dims->size() == 4) total += (*past->dims)[2];
    return 2.0 * static_cast<double>(total) * (Product(*q) + Product(*out));
  }
  // Everything else: one operation per output element, or per input element
  // for a reduction.
  if (op.rfind("Reduce", 0) == 0 || op.rfind("Global", 0) == 0 || op == "ArgMax" || op == "ArgMin") {
    const Dims* x = input(0);
    return x ? std::optional<double>(Product(*x)) : std::nullopt;
  }
  if (op == "MaxPool" || op == "AveragePool" || op == "LpPool") {
    const std::optional<Dims> kernel = AttrInts(node, "kernel_shape");
    if (!out || !kernel) return std::nullopt;
    return Product(*out) * Product(*kernel);
  }
  // Element-wise operators (and those near enough to count as such: the
  // normalizations, Softmax, Resize); any other has no rule and no count.
  if (!out || !(kSameShapeAsFirst.count(op) || kBroadcasting.count(op) || kPerOutputElement.count(op))) {
    return std::nullopt;
  }
  return Product(*out);
}

}  // namespace parity
