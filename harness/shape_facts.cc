// Shape facts per operator: which dims make up n (elements folded into one
// output) and k (the length of a dot product), from the operators'
// definitions in the pinned onnx package and ONNX Runtime's contrib operators.
#include "harness/shape_facts.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <optional>
#include <set>

#include "reference/model/tensor_io.h"

namespace parity {
namespace {

using Dims = std::vector<int64_t>;

// Facts larger than this are clamped: the formulas take sqrt(n) and n, and a
// product of dims must not overflow on its way there.
constexpr int64_t kMaxFact = int64_t{1} << 40;
// The opset assumed for a domain the model does not import: the newest rules.
constexpr int64_t kNewestOpset = std::numeric_limits<int32_t>::max();

bool IsDefaultDomain(std::string_view domain) { return domain.empty() || domain == "ai.onnx"; }

// The dims of a fully static tensor type, or nothing.
std::optional<Dims> StaticDims(const onnx::TypeProto& type) {
  if (!type.has_tensor_type() || !type.tensor_type().has_shape()) return std::nullopt;
  Dims dims;
  for (const auto& d : type.tensor_type().shape().dim()) {
    if (!d.has_dim_value() || d.dim_value() < 0) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

bool IsSmallIntTensor(int32_t data_type, const Dims& dims) {
  if (data_type != onnx::TensorProto::INT64 && data_type != onnx::TensorProto::INT32) return false;
  int64_t count = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && count > kMaxKnownIntElements / d)) return false;
    count *= d;
  }
  return count <= kMaxKnownIntElements;
}

std::optional<std::vector<int64_t>> SmallInts(const onnx::TensorProto& tensor) {
  const Dims dims(tensor.dims().begin(), tensor.dims().end());
  if (!IsSmallIntTensor(tensor.data_type(), dims)) return std::nullopt;
  if (tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  StatusOr<Tensor> t = TensorFromProto(tensor);  // little-endian raw_data, int64_data or int32_data
  if (!t.ok()) return std::nullopt;
  return t->ToInt64s();
}

// What one model says about its values' dims and small integer contents,
// with what the caller knows from the data set laid over it.
class GraphKnowledge {
 public:
  GraphKnowledge(const onnx::ModelProto& model, const KnownDims& known_dims, const KnownInts& known_ints) {
    for (const auto& o : model.opset_import()) {
      opsets_[IsDefaultDomain(o.domain()) ? "" : o.domain()] = o.version();
    }
    const onnx::GraphProto& graph = model.graph();
    auto note_static = [&](const onnx::ValueInfoProto& info) {
      if (std::optional<Dims> d = StaticDims(info.type())) dims_[info.name()] = std::move(*d);
    };
    for (const auto& v : graph.value_info()) note_static(v);
    for (const auto& v : graph.output()) note_static(v);
    for (const auto& v : graph.input()) note_static(v);
    for (const auto& t : graph.initializer()) NoteTensor(t.name(), t);
    for (const auto& node : graph.node()) {
      if (node.op_type() != "Constant" || !IsDefaultDomain(node.domain()) || node.output_size() < 1) continue;
      NoteConstant(node.output(0), node);
    }
    for (const auto& [name, d] : known_dims) dims_[name] = d;
    for (const auto& [name, v] : known_ints) ints_[name] = v;
  }

  const Dims* DimsOf(const std::string& name) const {
    auto it = dims_.find(name);
    return it == dims_.end() ? nullptr : &it->second;
  }
  const std::vector<int64_t>* IntsOf(const std::string& name) const {
    auto it = ints_.find(name);
    return it == ints_.end() ? nullptr : &it->second;
  }
  int64_t Opset(std::string_view domain) const {
    auto it = opsets_.find(std::string(IsDefaultDomain(domain) ? "" : domain));
    return it == opsets_.end() ? kNewestOpset : it->second;
  }

 private:
  void NoteTensor(const std::string& name, const onnx::TensorProto& t) {
    dims_[name] = Dims(t.dims().begin(), t.dims().end());
    if (std::optional<std::vector<int64_t>> v = SmallInts(t)) ints_[name] = std::move(*v);
  }
  // Constant's value attributes (value, value_int, value_ints, value_float, ...).
  void NoteConstant(const std::string& name, const onnx::NodeProto& node) {
    for (const auto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) {
        NoteTensor(name, a.t());
      } else if (a.name() == "value_int") {
        dims_[name] = {};
        ints_[name] = {a.i()};
      } else if (a.name() == "value_ints") {
        dims_[name] = {a.ints_size()};
        ints_[name].assign(a.ints().begin(), a.ints().end());
      } else if (a.name() == "value_float") {
        dims_[name] = {};
      } else if (a.name() == "value_floats") {
        dims_[name] = {a.floats_size()};
      }
    }
  }

  std::map<std::string, int64_t> opsets_;
  std::map<std::string, Dims> dims_;
  std::map<std::string, std::vector<int64_t>> ints_;
};

// One node seen through what is known about its inputs.
class NodeView {
 public:
  NodeView(const onnx::NodeProto& node, const GraphKnowledge& known)
      : node_(node), known_(known), opset_(known.Opset(node.domain())) {}

  const onnx::NodeProto& node() const { return node_; }
  int64_t opset() const { return opset_; }
  bool HasInput(int i) const { return i < node_.input_size() && !node_.input(i).empty(); }
  const Dims* InputDims(int i) const { return HasInput(i) ? known_.DimsOf(node_.input(i)) : nullptr; }
  const std::vector<int64_t>* InputInts(int i) const { return HasInput(i) ? known_.IntsOf(node_.input(i)) : nullptr; }
  // A scalar (or one-element) integer input.
  std::optional<int64_t> InputScalar(int i) const {
    const std::vector<int64_t>* v = InputInts(i);
    if (!v || v->size() != 1) return std::nullopt;
    return (*v)[0];
  }
  int64_t Int(std::string_view name, int64_t fallback) const {
    const onnx::AttributeProto* a = Find(name);
    return a ? a->i() : fallback;
  }
  std::optional<std::vector<int64_t>> Ints(std::string_view name) const {
    const onnx::AttributeProto* a = Find(name);
    if (!a) return std::nullopt;
    return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  }

 private:
  const onnx::AttributeProto* Find(std::string_view name) const {
    for (const auto& a : node_.attribute()) {
      if (a.name() == name) return &a;
    }
    return nullptr;
  }
  const onnx::NodeProto& node_;
  const GraphKnowledge& known_;
  int64_t opset_;
};

// --- Arithmetic on dims: std::nullopt is "unknown" -------------------------------------

using Fact = std::optional<int64_t>;

// dims[axis] with a negative axis counted from the back; unknown when out of range.
std::optional<size_t> Axis(int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r) return std::nullopt;
  return static_cast<size_t>(axis);
}

Fact Dim(const Dims* dims, int64_t axis) {
  if (!dims) return std::nullopt;
  std::optional<size_t> a = Axis(axis, dims->size());
  if (!a || (*dims)[*a] < 0) return std::nullopt;
  return (*dims)[*a];
}

Fact Product(const std::vector<int64_t>& values) {
  int64_t p = 1;
  for (int64_t v : values) {
    if (v < 0) return std::nullopt;
    if (v == 0) return 0;
    p = p > kMaxFact / v ? kMaxFact : p * v;
  }
  return p;
}

// prod(dims[begin:]) with `begin` possibly negative.
Fact TrailingProduct(const Dims* dims, int64_t begin) {
  if (!dims) return std::nullopt;
  std::optional<size_t> b = Axis(begin, dims->size());
  if (!b) return std::nullopt;
  return Product(Dims(dims->begin() + static_cast<std::ptrdiff_t>(*b), dims->end()));
}

// The product of dims over a set of axes; unknown when one is out of range.
Fact ProductOverAxes(const Dims* dims, const std::vector<int64_t>& axes) {
  if (!dims) return std::nullopt;
  std::set<size_t> unique;
  for (int64_t axis : axes) {
    std::optional<size_t> a = Axis(axis, dims->size());
    if (!a) return std::nullopt;
    unique.insert(*a);
  }
  std::vector<int64_t> picked;
  for (size_t a : unique) picked.push_back((*dims)[a]);
  return Product(picked);
}

Fact Times(Fact a, Fact b) { return a && b ? Product({*a, *b}) : std::nullopt; }
Fact DividedBy(Fact a, int64_t b) { return a && b > 0 && *a % b == 0 ? Fact(*a / b) : std::nullopt; }
// A sum whose unknown terms count 0: a lower bound of the true fact, so never
// looser than the truth.
Fact SumOfKnown(std::initializer_list<Fact> terms) {
  int64_t s = 0;
  bool any = false;
  for (const Fact& t : terms) {
    if (t) s = std::min(s + std::clamp<int64_t>(*t, 0, kMaxFact), kMaxFact), any = true;
  }
  return any ? Fact(s) : std::nullopt;
}

ShapeFacts Facts(Fact n, Fact k) {
  ShapeFacts f;
  f.reduced_length = std::clamp<int64_t>(n.value_or(1), 1, kMaxFact);
  f.inner_dim = std::clamp<int64_t>(k.value_or(1), 1, kMaxFact);
  return f;
}
ShapeFacts N(Fact n) { return Facts(n, std::nullopt); }
ShapeFacts K(Fact k) { return Facts(std::nullopt, k); }

// --- Matrix products and convolutions: k -----------------------------------------------

// MatMul, MatMulInteger, QLinearMatMul (A is input 0 in all three): A is
// [..., M, K], or [K] when rank 1 (numpy matmul), so k = A[-1].
// FusedMatMul (com.microsoft) adds transA (k = A[-2]); with transBatchA the
// batch dims move too, and k is left at 1.
ShapeFacts MatMulFacts(const NodeView& v) {
  const Dims* a = v.InputDims(0);
  if (!a || a->empty()) return {};
  if (v.node().op_type() == "FusedMatMul") {
    if (v.Int("transBatchA", 0) != 0) return {};
    if (v.Int("transA", 0) != 0 && a->size() >= 2) return K(Dim(a, -2));
  }
  return K(Dim(a, -1));
}

// Gemm: A is [M, K], or [K, M] with transA.
ShapeFacts GemmFacts(const NodeView& v) {
  const Dims* a = v.InputDims(0);
  if (!a || a->size() != 2) return {};
  return K(Dim(a, v.Int("transA", 0) != 0 ? 0 : 1));
}

// Det: each output is a determinant of an [n, n] matrix (spec/tolerance.md:
// "Det: the matrix size").
ShapeFacts DetFacts(const NodeView& v) { return K(Dim(v.InputDims(0), -1)); }

// Conv, ConvInteger, DeformConv (W is input 1) and QLinearConv (W is input 3):
// W is [M, C/group, k1, k2, ...], so one output sums C/group * k1*k2*... products.
ShapeFacts ConvFacts(const NodeView& v) {
  const Dims* w = v.InputDims(v.node().op_type() == "QLinearConv" ? 3 : 1);
  if (!w || w->size() < 2) return {};
  return K(TrailingProduct(w, 1));
}

// ConvTranspose: W is [C, M/group, k1, k2, ...]; an output gathers from the
// C/group input channels of its group, each through the kernel's elements.
ShapeFacts ConvTransposeFacts(const NodeView& v) {
  const Dims* w = v.InputDims(1);
  if (!w || w->size() < 2) return {};
  const Fact kernel = w->size() > 2 ? TrailingProduct(w, 2) : Fact(1);
  return K(Times(DividedBy(Dim(w, 0), v.Int("group", 1)), kernel));
}

// --- Reductions: n -----------------------------------------------------------------------

// ReduceSum from opset 13 and the other Reduce* from opset 18 take `axes` as
// input 1 and have noop_with_empty_axes; before, `axes` is an attribute.
// Either way no axes means all axes, except that noop_with_empty_axes=1 makes
// the node an identity (n = 1). n = the product of the reduced dims.
ShapeFacts ReduceFacts(const NodeView& v) {
  const Dims* data = v.InputDims(0);
  if (!data) return {};
  const int64_t axes_as_input_since = v.node().op_type() == "ReduceSum" ? 13 : 18;
  std::vector<int64_t> axes;
  bool noop_with_empty_axes = false;
  if (v.opset() < axes_as_input_since) {
    axes = v.Ints("axes").value_or(std::vector<int64_t>{});
  } else {
    if (v.HasInput(1)) {
      const std::vector<int64_t>* given = v.InputInts(1);
      if (!given) return {};
      axes = *given;
    }
    noop_with_empty_axes = v.Int("noop_with_empty_axes", 0) != 0;
  }
  if (axes.empty()) {
    if (noop_with_empty_axes) return {};
    return N(Product(*data));
  }
  return N(ProductOverAxes(data, axes));
}

// CumSum: each output sums up to the length of the axis (input 1, a scalar).
ShapeFacts CumSumFacts(const NodeView& v) {
  const std::optional<int64_t> axis = v.InputScalar(1);
  return axis ? N(Dim(v.InputDims(0), *axis)) : ShapeFacts{};
}

// Sum and Mean: n = the number of inputs (spec/tolerance.md).
ShapeFacts VariadicFacts(const NodeView& v) {
  int64_t n = 0;
  for (int i = 0; i < v.node().input_size(); ++i) n += v.HasInput(i) ? 1 : 0;
  return N(n);
}

// AveragePool and LpPool: each output folds the kernel's elements.
ShapeFacts PoolFacts(const NodeView& v) {
  const std::optional<std::vector<int64_t>> kernel = v.Ints("kernel_shape");
  return kernel ? N(Product(*kernel)) : ShapeFacts{};
}

// GlobalAveragePool and GlobalLpPool: X is [N, C, spatial...]; one output per channel.
ShapeFacts GlobalPoolFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (!x || x->size() < 2) return {};
  return N(x->size() == 2 ? Fact(1) : TrailingProduct(x, 2));
}

// --- Softmax and normalizations: n --------------------------------------------------------

// Softmax, LogSoftmax from opset 13: along `axis` (default -1), n = dims[axis].
// Before 13 the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])]
// with `axis` defaulting to 1, and each row is normalised: n = prod(dims[axis:]).
ShapeFacts SoftmaxFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (v.opset() >= 13) return N(Dim(x, v.Int("axis", -1)));
  return N(TrailingProduct(x, v.Int("axis", 1)));
}

// LayerNormalization, RMSNormalization, SimplifiedLayerNormalization: the
// statistics are over dims[axis:] (axis default -1). SkipLayerNormalization
// and SkipSimplifiedLayerNormalization (com.microsoft) have no axis and
// normalise the last dim, which the default gives.
// The losses fold every score into one mean (or one value per sample): n is
// the scores' element count, which bounds both the class softmax and the mean.
ShapeFacts LossFacts(const NodeView& v) { return N(TrailingProduct(v.InputDims(0), 0)); }

ShapeFacts TrailingNormFacts(const NodeView& v) { return N(TrailingProduct(v.InputDims(0), v.Int("axis", -1))); }

// GroupNormalization: X is [N, C, spatial...]; each group's statistics are
// over C/num_groups channels times the spatial elements.
ShapeFacts GroupNormFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (!x || x->size() < 2) return {};
  const Fact spatial = x->size() > 2 ? TrailingProduct(x, 2) : Fact(1);
  return N(Times(DividedBy(Dim(x, 1), v.Int("num_groups", 0)), spatial));
}

// InstanceNormalization: statistics per (n, c) over the spatial elements.
ShapeFacts InstanceNormFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (!x || x->size() <= 2) return {};
  return N(TrailingProduct(x, 2));
}

// MeanVarianceNormalization: statistics over `axes` (default [0, 2, 3]).
ShapeFacts MeanVarianceNormFacts(const NodeView& v) {
  return N(ProductOverAxes(v.InputDims(0), v.Ints("axes").value_or(std::vector<int64_t>{0, 2, 3})));
}

// LpNormalization: the norm is over dims[axis] (default -1).
ShapeFacts LpNormFacts(const NodeView& v) { return N(Dim(v.InputDims(0), v.Int("axis", -1))); }

// BatchNormalization: in inference mode the statistics are inputs, nothing is
// folded (n = 1). With training_mode=1 (opset 14+) they are taken per channel
// over N and the spatial elements of X [N, C, spatial...].
ShapeFacts BatchNormFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (v.opset() < 14 || v.Int("training_mode", 0) == 0 || !x || x->size() < 2) return {};
  return N(Times(Dim(x, 0), x->size() > 2 ? TrailingProduct(x, 2) : Fact(1)));
}

// LRN: each output sums the squares of `size` neighbouring channels.
ShapeFacts LrnFacts(const NodeView& v) { return N(v.Int("size", 1)); }

// --- Attention: n = key/value length, k = head size ---------------------------------------

// Attention (ai.onnx 23+): Q is [B, Hq, Sq, head] or [B, Sq, Hq*head] (with
// q_num_heads); K is [B, Hkv, Skv, head] or [B, Skv, Hkv*head]; past_key
// (input 4) is [B, Hkv, P, head] and the keys attended are P + Skv.
// com.microsoft's Attention is another operator (packed weights) and keeps 1.
ShapeFacts AttentionFacts(const NodeView& v) {
  if (v.node().domain() == "com.microsoft") return {};
  const Dims* q = v.InputDims(0);
  const Dims* k = v.InputDims(1);
  Fact head;
  if (q && q->size() == 4) head = Dim(q, 3);
  if (q && q->size() == 3) head = DividedBy(Dim(q, 2), v.Int("q_num_heads", 0));
  Fact kv_length;
  if (k && k->size() == 4) kv_length = Dim(k, 2);
  if (k && k->size() == 3) kv_length = Dim(k, 1);
  const Dims* past = v.InputDims(4);
  const Fact past_length = past && past->size() == 4 ? Dim(past, 2) : std::nullopt;
  return Facts(SumOfKnown({kv_length, past_length}), head);
}

// FlexAttention (ai.onnx.preview): rank-4 Q [B, Hq, Sq, head] and K [B, Hkv, Skv, head].
ShapeFacts FlexAttentionFacts(const NodeView& v) {
  const Dims* q = v.InputDims(0);
  const Dims* k = v.InputDims(1);
  return Facts(k && k->size() == 4 ? Dim(k, 2) : std::nullopt, q && q->size() == 4 ? Dim(q, 3) : std::nullopt);
}

// MultiHeadAttention (com.microsoft, attribute num_heads): query is
// [B, S, N*H] or packed QKV [B, S, N, 3, H] (then key is absent); key is
// [B, L, N*H], [B, N, L, H] or packed KV [B, L, N, 2, H]; past_key (input 6)
// is [B, N, P, H] and adds P keys.
ShapeFacts MultiHeadAttentionFacts(const NodeView& v) {
  const Dims* q = v.InputDims(0);
  const Dims* k = v.InputDims(1);
  Fact head, kv_length;
  if (q && q->size() == 5) head = Dim(q, 4), kv_length = Dim(q, 1);
  if (q && q->size() == 3) head = DividedBy(Dim(q, 2), v.Int("num_heads", 0));
  if (k && k->size() == 3) kv_length = Dim(k, 1);
  if (k && k->size() == 4) kv_length = Dim(k, 2), head = Dim(k, 3);
  if (k && k->size() == 5) kv_length = Dim(k, 1), head = Dim(k, 4);
  const Dims* past = v.InputDims(6);
  const Fact past_length = past && past->size() == 4 ? Dim(past, 2) : std::nullopt;
  return Facts(SumOfKnown({kv_length, past_length}), head);
}

// GroupQueryAttention (com.microsoft, attributes num_heads, kv_num_heads):
// query is [B, S, num_heads*H], or packed [B, S, (num_heads+2*kv_num_heads)*H]
// when key is absent. The keys attended number total_sequence_length (input
// 6, a scalar); without it, the new keys plus past_key's (input 3, [B, Nkv, P,
// H]) length, which is an upper bound when the cache buffer is shared.
ShapeFacts GroupQueryAttentionFacts(const NodeView& v) {
  const Dims* q = v.InputDims(0);
  const Dims* k = v.InputDims(1);
  const int64_t heads = v.Int("num_heads", 0);
  const int64_t kv_heads = v.Int("kv_num_heads", 0);
  Fact head;
  const bool sane = heads > 0 && heads < kMaxFact && kv_heads >= 0 && kv_heads < kMaxFact;  // no overflow below
  if (q && q->size() == 3 && sane) head = DividedBy(Dim(q, 2), v.HasInput(1) ? heads : heads + 2 * kv_heads);
  Fact kv_length = v.InputScalar(6);
  if (!kv_length) {
    const Fact new_keys = v.HasInput(1) ? (k && k->size() == 3 ? Dim(k, 1) : std::nullopt) : Dim(q, 1);
    const Dims* past = v.InputDims(3);
    kv_length = SumOfKnown({new_keys, past && past->size() == 4 ? Dim(past, 2) : std::nullopt});
  }
  return Facts(kv_length, head);
}

// --- Spectral: n = the transform length ------------------------------------------------

// DFT: input is [batch..., signal..., 1 or 2]; the transform runs along
// `axis`: an attribute defaulting to 1 in opset 17, input 2 defaulting to -2
// from opset 20, in [-r, -2] or [0, r-2]. Its length is dft_length (input 1)
// when given, else dims[axis], or 2*(dims[axis]-1) for the inverse of a
// one-sided spectrum (onesided=1, inverse=1).
ShapeFacts DftFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (!x || x->size() < 2) return {};
  int64_t axis = v.opset() < 20 ? v.Int("axis", 1) : -2;
  if (v.opset() >= 20 && v.HasInput(2)) {
    const std::optional<int64_t> given = v.InputScalar(2);
    if (!given) return {};
    axis = *given;
  }
  if (v.HasInput(1)) return N(v.InputScalar(1));
  const int64_t rank = static_cast<int64_t>(x->size());
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank - 2) return {};
  const Fact length = Dim(x, axis);
  if (length && v.Int("onesided", 0) != 0 && v.Int("inverse", 0) != 0) return N(2 * (*length - 1));
  return N(length);
}

// STFT: each frame's DFT has frame_length (input 3) points; without it the
// window's (input 2) length; without either, the signal's length ([batch,
// length, 1 or 2]).
ShapeFacts StftFacts(const NodeView& v) {
  if (v.HasInput(3)) return N(v.InputScalar(3));
  if (v.HasInput(2)) return N(Dim(v.InputDims(2), 0));
  return N(Dim(v.InputDims(0), 1));
}

// --- Recurrent: n = sequence length, k = input size + hidden size --------------------------

// RNN, GRU, LSTM: X is [seq, batch, input] (layout 0, the only one before
// opset 14) or [batch, seq, input] (layout 1). hidden_size is the attribute,
// else R's last dim (R is [directions, gates*hidden, hidden]).
ShapeFacts RecurrentFacts(const NodeView& v) {
  const Dims* x = v.InputDims(0);
  if (!x || x->size() != 3) return {};
  const Fact sequence = Dim(x, v.Int("layout", 0) != 0 ? 1 : 0);
  Fact hidden = v.Int("hidden_size", 0) > 0 ? Fact(v.Int("hidden_size", 0)) : std::nullopt;
  const Dims* r = v.InputDims(2);
  if (!hidden && r && r->size() == 3) hidden = Dim(r, 2);
  return Facts(sequence, SumOfKnown({Dim(x, 2), hidden}));
}

using Rule = ShapeFacts (*)(const NodeView&);

const std::map<std::string, Rule, std::less<>>& Rules() {
  static const auto* rules = new std::map<std::string, Rule, std::less<>>{
      {"MatMul", MatMulFacts},
      {"MatMulInteger", MatMulFacts},
      {"QLinearMatMul", MatMulFacts},
      {"FusedMatMul", MatMulFacts},
      {"Gemm", GemmFacts},
      {"Det", DetFacts},
      {"Conv", ConvFacts},
      {"ConvInteger", ConvFacts},
      {"QLinearConv", ConvFacts},
      {"DeformConv", ConvFacts},
      {"ConvTranspose", ConvTransposeFacts},
      {"SoftmaxCrossEntropyLoss", LossFacts},
      {"NegativeLogLikelihoodLoss", LossFacts},
      {"ReduceSum", ReduceFacts},
      {"ReduceMean", ReduceFacts},
      {"ReduceProd", ReduceFacts},
      {"ReduceL1", ReduceFacts},
      {"ReduceL2", ReduceFacts},
      {"ReduceLogSum", ReduceFacts},
      {"ReduceLogSumExp", ReduceFacts},
      {"ReduceSumSquare", ReduceFacts},
      {"ReduceMax", ReduceFacts},
      {"ReduceMin", ReduceFacts},
      {"CumSum", CumSumFacts},
      {"Sum", VariadicFacts},
      {"Mean", VariadicFacts},
      {"AveragePool", PoolFacts},
      {"LpPool", PoolFacts},
      {"GlobalAveragePool", GlobalPoolFacts},
      {"GlobalLpPool", GlobalPoolFacts},
      {"Softmax", SoftmaxFacts},
      {"LogSoftmax", SoftmaxFacts},
      {"LayerNormalization", TrailingNormFacts},
      {"RMSNormalization", TrailingNormFacts},
      {"SimplifiedLayerNormalization", TrailingNormFacts},
      {"SkipLayerNormalization", TrailingNormFacts},
      {"SkipSimplifiedLayerNormalization", TrailingNormFacts},
      {"GroupNormalization", GroupNormFacts},
      {"InstanceNormalization", InstanceNormFacts},
      {"MeanVarianceNormalization", MeanVarianceNormFacts},
      {"LpNormalization", LpNormFacts},
      {"BatchNormalization", BatchNormFacts},
      {"LRN", LrnFacts},
      {"Attention", AttentionFacts},
      {"FlexAttention", FlexAttentionFacts},
      {"MultiHeadAttention", MultiHeadAttentionFacts},
      {"GroupQueryAttention", GroupQueryAttentionFacts},
      {"DFT", DftFacts},
      {"STFT", StftFacts},
      {"RNN", RecurrentFacts},
      {"GRU", RecurrentFacts},
      {"LSTM", RecurrentFacts},
  };
  return *rules;
}

}  // namespace

ShapeFacts ShapeFactsFor(const onnx::ModelProto& model, std::string_view op_type, const KnownDims& known_dims,
                         const KnownInts& known_int_values) {
  const auto rule = Rules().find(op_type);
  if (rule == Rules().end()) return {};
  const onnx::GraphProto& graph = model.graph();
  const bool any = std::any_of(graph.node().begin(), graph.node().end(),
                               [&](const onnx::NodeProto& n) { return n.op_type() == op_type; });
  if (!any) return {};
  const GraphKnowledge known(model, known_dims, known_int_values);
  ShapeFacts facts;
  for (const auto& node : graph.node()) {
    if (node.op_type() != op_type) continue;
    const ShapeFacts f = rule->second(NodeView(node, known));
    facts.reduced_length = std::max(facts.reduced_length, f.reduced_length);
    facts.inner_dim = std::max(facts.inner_dim, f.inner_dim);
  }
  return facts;
}

void NoteKnownTensor(const std::string& name, const onnx::TensorProto& tensor, KnownDims& dims, KnownInts& ints) {
  dims[name] = Dims(tensor.dims().begin(), tensor.dims().end());
  if (std::optional<std::vector<int64_t>> v = SmallInts(tensor)) ints[name] = std::move(*v);
}

void NoteKnownValue(const std::string& name, const Value& value, KnownDims& dims, KnownInts& ints) {
  if (!value.is_tensor() || !value.tensor().defined()) return;
  const Tensor& t = value.tensor();
  dims[name] = t.shape();
  if (IsSmallIntTensor(static_cast<int32_t>(t.dtype()), t.shape())) ints[name] = t.ToInt64s();
}

}  // namespace parity
