// Sibling projections of one input, as attention layers write their
// query, key and value: MatMuls of the same A by weights that are
// initializers, each followed by a Reshape that splits its last dim into
// heads and a Transpose. The region runs them as one matmul by the weights
// side by side (concatenated once, at the first run, and kept), then one
// reorder per projection from its columns of the product straight into
// the transposed output: one primitive and one node where there were as
// many matmuls as projections and three nodes each. At a small model's
// sizes a oneDNN primitive costs a microsecond or two whatever it computes,
// so fewer primitives is most of what makes a step faster. Each output
// element is the same sum of the same products as the MatMul's, rounded
// once to the type; the reorders only move it.
#include <algorithm>
#include <cstring>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"

namespace parity::adapters::onednn {
namespace {

struct Projection {
  int64_t heads = 0, size = 0;  // the Reshape's split of the product's last dim
  std::vector<int64_t> perm;    // the Transpose's
};

struct ProjectionsPlan {
  BoundPrimitive product;          // A [rows, K] by the weights [K, total] into [rows, total]
  std::vector<BoundPrimitive> out;  // a projection's columns into its output
  std::vector<std::vector<int64_t>> out_dims;
  std::vector<int64_t> columns;  // where each projection's columns start
  int64_t k = 0, total = 0, rows = 0;
};

// Inputs: A, then each projection's weights.
class ProjectionsNode final : public ShapedNode<ProjectionsPlan> {
 public:
  ProjectionsNode(DataType type, std::vector<Projection> projections)
      : type_(type), projections_(std::move(projections)) {}

 protected:
  StatusOr<ProjectionsPlan> MakePlan(const InputShapes& shapes) override {
    const std::vector<int64_t>& a = shapes[0];
    if (a.size() < 2) return InvalidArgument("A must have rank 2 or more");
    ProjectionsPlan plan;
    plan.k = a.back();
    plan.rows = 1;
    for (size_t d = 0; d + 1 < a.size(); ++d) plan.rows *= a[d];
    for (size_t i = 0; i < projections_.size(); ++i) {
      const std::vector<int64_t>& b = shapes[1 + i];
      const Projection& p = projections_[i];
      if (b.size() != 2 || b[0] != plan.k || b[1] != p.heads * p.size) {
        return InvalidArgument("weights ", i, " are not [", plan.k, ", ", p.heads * p.size, "]");
      }
      plan.columns.push_back(plan.total);
      plan.total += b[1];
    }
    const dnnl_dt dt = *DnnlType(type_);
    const dnnl::memory::desc src = PlainDesc({plan.rows, plan.k}, dt);
    const dnnl::memory::desc weights = PlainDesc({plan.k, plan.total}, dt);
    const dnnl::memory::desc dst = PlainDesc({plan.rows, plan.total}, dt);
    plan.product = BoundPrimitive(dnnl::matmul(dnnl::matmul::primitive_desc(Engine(), src, weights, dst)),
                                  {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}});
    for (size_t i = 0; i < projections_.size(); ++i) {
      const Projection& p = projections_[i];
      // The projection's columns seen as A's leading dims, heads and size.
      std::vector<int64_t> dims(a.begin(), a.end() - 1), strides(dims.size());
      int64_t stride = plan.total;
      for (size_t d = dims.size(); d-- > 0;) {
        strides[d] = stride;
        stride *= dims[d];
      }
      dims.insert(dims.end(), {p.heads, p.size});
      strides.insert(strides.end(), {p.size, 1});
      if (p.perm.size() != dims.size()) return InvalidArgument("perm ", i, " has the wrong rank");
      std::vector<int64_t> out, out_strides;  // the output's dims, and where they step in the product
      for (int64_t axis : p.perm) {
        out.push_back(dims[static_cast<size_t>(axis)]);
        out_strides.push_back(strides[static_cast<size_t>(axis)]);
      }
      const dnnl::memory::desc from(out, dt, out_strides), to = PlainDesc(out, dt);
      plan.out.push_back(BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to)),
                                        {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}));
      plan.out_dims.push_back(std::move(out));
    }
    return plan;
  }

  StatusOr<std::vector<Value>> Execute(const ProjectionsPlan& plan, const KernelContext& ctx) override {
    const size_t width = StorageSize(type_);
    // The weights side by side, made again only if another tensor comes
    // (the claim takes initializers, so only the first run makes them);
    // the tensors kept hold their buffers, so an address seen again is the same weights.
    bool same = kept_.size() == projections_.size();
    for (size_t i = 0; same && i < kept_.size(); ++i) same = kept_[i].raw_bytes() == ctx.tensor(1 + i).raw_bytes();
    if (!same) {
      kept_.clear();
      weights_.resize(static_cast<size_t>(plan.k * plan.total) * width);
      for (size_t i = 0; i < projections_.size(); ++i) {
        const Tensor& b = ctx.tensor(1 + i);
        const size_t row = static_cast<size_t>(b.dim(1)) * width;
        for (int64_t r = 0; r < plan.k; ++r) {
          std::memcpy(weights_.data() + static_cast<size_t>(r * plan.total + plan.columns[i]) * width,
                      b.raw_bytes() + static_cast<size_t>(r) * row, row);
        }
        kept_.push_back(b);
      }
    }
    product_.resize(static_cast<size_t>(plan.rows * plan.total) * width);
    plan.product.Run({ctx.tensor(0).raw_bytes(), weights_.data(), product_.data()});
    std::vector<Value> outputs;
    for (size_t i = 0; i < plan.out.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims[i]));
      plan.out[i].Run({product_.data() + static_cast<size_t>(plan.columns[i]) * width, out.mutable_raw_bytes()});
      outputs.push_back(Value::FromTensor(std::move(out)));
    }
    return outputs;
  }

 private:
  DataType type_;
  std::vector<Projection> projections_;
  std::vector<Tensor> kept_;  // the weights weights_ was made from
  std::vector<uint8_t> weights_, product_;
};

bool AllPositive(const std::vector<int64_t>& dims) {
  return std::all_of(dims.begin(), dims.end(), [](int64_t d) { return d > 0; });
}

// The Reshape and Transpose after projection `mm` (A by 2-D weights with
// `n` columns), when they split the product's last dim into heads and
// move the axes: {reshape, transpose, the projection's shape}.
struct Chain {
  int reshape = -1, transpose = -1;
  Projection projection;
};
std::optional<Chain> ChainAfter(const RegionView& region, int mm, const std::vector<int64_t>& a, int64_t n) {
  Chain chain;
  chain.reshape = region.sole_consumer(mm);
  if (chain.reshape < 0 || !IsOnnxOp(region.view(chain.reshape), "Reshape") || region.view(chain.reshape).opset() < 5 ||
      region.node(chain.reshape).input(0) != region.node(mm).output(0)) {
    return std::nullopt;
  }
  const std::vector<int64_t>* split = region.facts().StaticDims(region.node(chain.reshape).output(0));
  if (!split || split->size() != a.size() + 1 || !std::equal(a.begin(), a.end() - 1, split->begin()) ||
      (*split)[a.size() - 1] * (*split)[a.size()] != n) {
    return std::nullopt;
  }
  chain.projection.heads = (*split)[a.size() - 1];
  chain.projection.size = (*split)[a.size()];
  chain.transpose = region.sole_consumer(chain.reshape);
  if (chain.transpose < 0 || !IsOnnxOp(region.view(chain.transpose), "Transpose")) return std::nullopt;
  const size_t rank = split->size();
  std::vector<int64_t> perm = region.view(chain.transpose).GetInts("perm").value_or(std::vector<int64_t>{});
  if (perm.empty()) {
    for (size_t d = rank; d-- > 0;) perm.push_back(static_cast<int64_t>(d));
  }
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t d = 0; d < rank; ++d) {
    if (sorted.size() != rank || sorted[d] != static_cast<int64_t>(d)) return std::nullopt;
  }
  chain.projection.perm = std::move(perm);
  return chain;
}

StatusOr<std::optional<RegionClaim>> LowerProjections(const RegionView& region) {
  const int anchor = region.anchor();
  const std::string& a_name = region.node(anchor).input_size() == 2 ? region.node(anchor).input(0) : "";
  const std::vector<int64_t>* a = region.facts().StaticDims(a_name);
  const std::optional<DataType> type = region.facts().TypeOf(a_name);
  if (a_name.empty() || !a || a->size() < 2 || !AllPositive(*a) || !type || !IsComputedFloat(*type)) {
    return std::optional<RegionClaim>();
  }
  RegionClaim claim;
  claim.inputs = {a_name};
  std::vector<Projection> projections;
  bool anchor_in = false;
  for (int mm : region.consumers(a_name)) {
    const NodeView view = region.view(mm);
    if (region.taken(mm) || !IsOnnxOp(view, "MatMul") || view.input_count() != 2 || view.node().input(0) != a_name) {
      continue;
    }
    const std::string& b = view.node().input(1);
    const std::vector<int64_t>* b_dims = region.facts().StaticDims(b);
    if (b == a_name || !region.is_constant(b) || region.facts().TypeOf(b) != type || !b_dims || b_dims->size() != 2 ||
        (*b_dims)[0] != a->back() || !AllPositive(*b_dims)) {
      continue;
    }
    const std::optional<Chain> chain = ChainAfter(region, mm, *a, (*b_dims)[1]);
    if (!chain || region.taken(chain->reshape) || region.taken(chain->transpose)) continue;
    claim.nodes.insert(claim.nodes.end(), {mm, chain->reshape, chain->transpose});
    claim.inputs.push_back(b);
    claim.outputs.push_back(region.node(chain->transpose).output(0));
    projections.push_back(chain->projection);
    anchor_in = anchor_in || mm == anchor;
  }
  if (projections.size() < 2 || !anchor_in) return std::optional<RegionClaim>();
  if (!PrepareRegion(std::make_unique<ProjectionsNode>(*type, std::move(projections)), region, claim).ok()) {
    return std::optional<RegionClaim>();  // oneDNN refused: the nodes are lowered one by one
  }
  return std::optional<RegionClaim>(std::move(claim));
}

}  // namespace

void AddProjectionRegions(Lowering& lowering) { lowering.AddRegion("MatMul", LowerProjections); }

}  // namespace parity::adapters::onednn
