// Sibling projections of one input, as attention layers write their
// query, key and value: MatMuls of the same A by weights that are
// initializers, each followed by a Reshape that splits its last dim into
// heads and a Transpose. The region runs them as one matmul by the weights
// side by side (concatenated once, at the first run, and kept), then one
// reorder per projection from its columns of the product straight into
// the transposed output (a copy where the columns already lie in its
// order, as when A has one row): one primitive and one node where there were as
// many matmuls as projections and three nodes each. At a small model's
// sizes a oneDNN primitive costs a microsecond or two whatever it computes,
// so fewer primitives is most of what makes a step faster. Each output
// element is the same sum of the same products as the MatMul's, rounded
// once to the type; the reorders only move it.
//
// Where two or more of the projections (the query's and the key's) are
// then rotated by one rotary embedding written as "rotate half"
// (rotation.h) with the same cos and sin, the region takes those nodes
// too: their columns, side by side, are moved by one reorder into one
// buffer of all their heads (none when A has one row: the columns are
// that buffer), which is rotated in one pass (three primitives), and one
// binary per projection writes its output, x * cos plus the rotated half.
// For a query, key and value that is eight primitives where there were
// twelve (six at a decode step, where the value is a copy), and one node
// where there were three. The arithmetic is the rotation region's.
#include <algorithm>
#include <cstring>
#include <set>

#include "adapters/onednn/lowerings.h"
#include "adapters/onednn/primitive_node.h"
#include "adapters/onednn/rotation.h"

namespace parity::adapters::onednn {
namespace {

struct Projection {
  int64_t heads = 0, size = 0;  // the Reshape's split of the product's last dim
  std::vector<int64_t> perm;    // the Transpose's
  // Where the heads axis (the Reshape's next to last) lies in the output.
  size_t HeadsAxis() const {
    const auto heads_axis = static_cast<int64_t>(perm.size()) - 2;
    return static_cast<size_t>(std::find(perm.begin(), perm.end(), heads_axis) - perm.begin());
  }
};

// A's leading dims then a projection's heads and size, and, in the
// Transpose's order, the dims and the element steps of a view of `columns`
// columns of a product `total` wide.
struct ColumnsView {
  std::vector<int64_t> out, strides;
};
StatusOr<ColumnsView> ViewOfColumns(const std::vector<int64_t>& a, const Projection& p, int64_t heads, int64_t total) {
  std::vector<int64_t> dims(a.begin(), a.end() - 1), strides(dims.size());
  int64_t stride = total;
  for (size_t d = dims.size(); d-- > 0;) {
    strides[d] = stride;
    stride *= dims[d];
  }
  dims.insert(dims.end(), {heads, p.size});
  strides.insert(strides.end(), {p.size, 1});
  if (p.perm.size() != dims.size()) return InvalidArgument("a Transpose's perm has the wrong rank");
  ColumnsView view;
  for (int64_t axis : p.perm) {
    view.out.push_back(dims[static_cast<size_t>(axis)]);
    view.strides.push_back(strides[static_cast<size_t>(axis)]);
  }
  return view;
}

// Whether the view's elements lie in its dims' order, densely (a dim of
// 1 steps nowhere): then its columns are already the output's bytes, as
// at a decode step, whose A has one row.
bool Dense(const ColumnsView& view) {
  int64_t step = 1;
  for (size_t d = view.out.size(); d-- > 0;) {
    if (view.out[d] == 1) continue;
    if (view.strides[d] != step) return false;
    step *= view.out[d];
  }
  return true;
}

struct ProjectionsPlan {
  BoundPrimitive product;          // A [rows, K] by the weights [K, total] into [rows, total]
  std::vector<BoundPrimitive> out;  // a projection's columns into its output (or its rotation's)
  std::vector<bool> copied;          // out[i] is not made: the columns are the output's bytes
  std::vector<std::vector<int64_t>> out_dims;
  std::vector<int64_t> columns;  // where each projection's columns start
  int64_t k = 0, total = 0, rows = 0;
  // The rotated projections (the first `rotated`): their columns into one
  // buffer of all their heads (unless they are that buffer already), its
  // rotated halves, and where each one's elements start in it.
  BoundPrimitive rotated_heads;
  bool heads_in_product = false;
  RotatedHalves halves;
  std::vector<size_t> rotated_at;
  size_t rotated_bytes = 0;
};

// Inputs: A, then each projection's weights, then (when some are rotated) cos and sin.
class ProjectionsNode final : public ShapedNode<ProjectionsPlan> {
 public:
  // The first `rotated` projections are rotated.
  ProjectionsNode(DataType type, std::vector<Projection> projections, size_t rotated)
      : type_(type), projections_(std::move(projections)), rotated_(rotated) {}

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
    auto reorder = [](const dnnl::memory::desc& from, const dnnl::memory::desc& to) {
      return BoundPrimitive(dnnl::reorder(dnnl::reorder::primitive_desc(Engine(), from, Engine(), to)),
                            {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
    };
    if (rotated_ > 0) {
      // The rotated projections share their size and perm (the claim
      // checks it), and the dims before the heads in the output are 1s:
      // each one's part of the buffer of all heads is dense, and its
      // output can be written from it as a whole.
      const size_t cos = 1 + projections_.size(), sin = cos + 1;
      int64_t heads = 0;
      for (size_t i = 0; i < rotated_; ++i) heads += projections_[i].heads;
      PARITY_ASSIGN_OR_RETURN(ColumnsView all, ViewOfColumns(a, projections_[0], heads, plan.total));
      plan.heads_in_product = Dense(all);
      if (!plan.heads_in_product) {
        plan.rotated_heads = reorder(dnnl::memory::desc(all.out, dt, all.strides), PlainDesc(all.out, dt));
      }
      plan.halves = RotatedHalves(type_, all.out, shapes[sin]);
      plan.rotated_bytes = PlainDesc(all.out, dt).get_size();
      int64_t before = 0;  // heads of the projections before this one
      for (size_t i = 0; i < rotated_; ++i) {
        PARITY_ASSIGN_OR_RETURN(ColumnsView view,
                                ViewOfColumns(a, projections_[i], projections_[i].heads, plan.total));
        // A head's elements: the output's dims after the heads axis.
        int64_t per_head = 1;
        for (size_t d = projections_[i].HeadsAxis() + 1; d < view.out.size(); ++d) per_head *= view.out[d];
        plan.rotated_at.push_back(static_cast<size_t>(before * per_head) * StorageSize(type_));
        before += projections_[i].heads;
        plan.out.push_back(CosPlus(type_, view.out, shapes[cos]));
        plan.copied.push_back(false);
        plan.out_dims.push_back(std::move(view.out));
      }
    }
    for (size_t i = rotated_; i < projections_.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(ColumnsView view, ViewOfColumns(a, projections_[i], projections_[i].heads, plan.total));
      plan.copied.push_back(Dense(view));
      plan.out.push_back(plan.copied.back() ? BoundPrimitive()
                                            : reorder(dnnl::memory::desc(view.out, dt, view.strides),
                                                      PlainDesc(view.out, dt)));
      plan.out_dims.push_back(std::move(view.out));
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
    if (rotated_ > 0) {
      const size_t cos = 1 + projections_.size(), sin = cos + 1;
      const uint8_t* heads = product_.data();
      if (!plan.heads_in_product) {
        heads_.resize(plan.rotated_bytes);
        plan.rotated_heads.Run({product_.data(), heads_.data()});
        heads = heads_.data();
      }
      plan.halves.Run(heads, ctx.tensor(sin).raw_bytes(), t_);
      for (size_t i = 0; i < rotated_; ++i) {
        PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims[i]));
        const size_t at = plan.rotated_at[i];
        plan.out[i].Run({heads + at, ctx.tensor(cos).raw_bytes(), out.mutable_raw_bytes(), t_.data() + at});
        outputs.push_back(Value::FromTensor(std::move(out)));
      }
    }
    for (size_t i = rotated_; i < plan.out.size(); ++i) {
      PARITY_ASSIGN_OR_RETURN(Tensor out, NewTensor(type_, plan.out_dims[i]));
      const uint8_t* columns = product_.data() + static_cast<size_t>(plan.columns[i]) * width;
      if (plan.copied[i]) {
        std::memcpy(out.mutable_raw_bytes(), columns, out.byte_size());
      } else {
        plan.out[i].Run({columns, out.mutable_raw_bytes()});
      }
      outputs.push_back(Value::FromTensor(std::move(out)));
    }
    return outputs;
  }

 private:
  DataType type_;
  std::vector<Projection> projections_;
  size_t rotated_;
  std::vector<Tensor> kept_;  // the weights weights_ was made from
  std::vector<uint8_t> weights_, product_;
  std::vector<uint8_t> heads_, t_;  // the rotated projections' heads, and their halves swapped times sin
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

// Whether `value` is computed without any of `nodes`: none of them is
// among the nodes it depends on. A node with a subgraph on the way counts
// as depending on them (its subgraphs' reads are not followed).
bool IndependentOf(const RegionView& region, const std::string& value, const std::set<int>& nodes) {
  std::vector<int> pending;
  std::set<int> seen;
  if (const int producer = region.producer(value); producer >= 0) pending.push_back(producer);
  while (!pending.empty()) {
    const int n = pending.back();
    pending.pop_back();
    if (!seen.insert(n).second) continue;
    if (nodes.count(n)) return false;
    for (const auto& attribute : region.node(n).attribute()) {
      if (attribute.has_g() || attribute.graphs_size() > 0) return false;
    }
    for (const std::string& input : region.node(n).input()) {
      if (const int producer = input.empty() ? -1 : region.producer(input); producer >= 0) pending.push_back(producer);
    }
  }
  return true;
}

// The rotations of projections' outputs that the region can take with them
// (see the top of the file): a rotate-half claim on each output, all with
// one cos and one sin that depend on no node of the region (the region
// reads them, so they must be there before it runs), the same size and
// perm, the output read by nothing else, and 1s before the heads axis.
// `members`: the projections' nodes. Returns, per chain, the rotation's
// claim or nullopt; none when fewer than two qualify.
std::vector<std::optional<RegionClaim>> Rotations(const RegionView& region, const std::vector<Chain>& chains,
                                                  const std::vector<int64_t>& a, std::set<int> members) {
  std::vector<std::optional<RegionClaim>> rotations(chains.size());
  const RegionClaim* first = nullptr;
  const Chain* first_chain = nullptr;
  size_t count = 0;
  for (size_t i = 0; i < chains.size(); ++i) {
    const std::string& x = region.node(chains[i].transpose).output(0);
    std::optional<RegionClaim> rotation = MatchRotateHalf(region, x);
    if (!rotation || region.consumers(x).size() != 2 || region.is_graph_output(x)) continue;
    const std::string &cos = rotation->inputs[1], &sin = rotation->inputs[2];
    const Projection& p = chains[i].projection;
    if (first && (cos != first->inputs[1] || sin != first->inputs[2] || p.size != first_chain->projection.size ||
                  p.perm != first_chain->projection.perm)) {
      continue;
    }
    rotations[i] = std::move(rotation);
    if (!first) {
      first = &*rotations[i];
      first_chain = &chains[i];
    }
    ++count;
  }
  if (count < 2) return std::vector<std::optional<RegionClaim>>(chains.size());
  for (const auto& rotation : rotations) {
    if (rotation) members.insert(rotation->nodes.begin(), rotation->nodes.end());
  }
  if (!IndependentOf(region, first->inputs[1], members) || !IndependentOf(region, first->inputs[2], members)) {
    return std::vector<std::optional<RegionClaim>>(chains.size());
  }
  // Only 1s before the heads axis in the output, for the buffer of all the
  // heads (A's leading dims; the size axis, after the heads in A's order,
  // is no 1 to count on).
  const std::vector<int64_t>& perm = first_chain->projection.perm;
  const size_t heads_axis = first_chain->projection.HeadsAxis();
  for (size_t d = 0; d < heads_axis; ++d) {
    if (perm[d] == static_cast<int64_t>(a.size()) || a[static_cast<size_t>(perm[d])] != 1) {
      return std::vector<std::optional<RegionClaim>>(chains.size());
    }
  }
  // cos and sin broadcast into the buffer of all the heads as into one projection's output.
  const std::vector<int64_t>* cos = region.facts().StaticDims(first->inputs[1]);
  const std::vector<int64_t>* sin = region.facts().StaticDims(first->inputs[2]);
  std::vector<int64_t> all = *region.facts().StaticDims(first->inputs[0]);
  all[heads_axis] = 0;
  for (size_t i = 0; i < chains.size(); ++i) all[heads_axis] += rotations[i] ? chains[i].projection.heads : 0;
  if (!cos || !sin || !BroadcastsInto(*cos, all) || !BroadcastsInto(*sin, all)) {
    return std::vector<std::optional<RegionClaim>>(chains.size());
  }
  return rotations;
}

StatusOr<std::optional<RegionClaim>> LowerProjections(const RegionView& region) {
  const int anchor = region.anchor();
  const std::string& a_name = region.node(anchor).input_size() == 2 ? region.node(anchor).input(0) : "";
  const std::vector<int64_t>* a = region.facts().StaticDims(a_name);
  const std::optional<DataType> type = region.facts().TypeOf(a_name);
  if (a_name.empty() || !a || a->size() < 2 || !AllPositive(*a) || !type || !IsComputedFloat(*type)) {
    return std::optional<RegionClaim>();
  }
  std::vector<Chain> chains;
  std::vector<int> matmuls;
  std::vector<std::string> weights;
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
    std::optional<Chain> chain = ChainAfter(region, mm, *a, (*b_dims)[1]);
    if (!chain || region.taken(chain->reshape) || region.taken(chain->transpose)) continue;
    chains.push_back(std::move(*chain));
    matmuls.push_back(mm);
    weights.push_back(b);
    anchor_in = anchor_in || mm == anchor;
  }
  if (chains.size() < 2 || !anchor_in) return std::optional<RegionClaim>();
  std::set<int> members(matmuls.begin(), matmuls.end());
  for (const Chain& chain : chains) members.insert({chain.reshape, chain.transpose});
  // The region with the rotations it can take, then, if oneDNN refuses that, without them.
  std::vector<std::optional<RegionClaim>> rotations = Rotations(region, chains, *a, members);
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (attempt == 1) {
      if (std::none_of(rotations.begin(), rotations.end(), [](const auto& r) { return r.has_value(); })) break;
      for (auto& rotation : rotations) rotation.reset();
    }
    // The rotated projections first, so that their columns lie side by side.
    std::vector<size_t> order;
    for (size_t i = 0; i < chains.size(); ++i) {
      if (rotations[i]) order.push_back(i);
    }
    const size_t rotated = order.size();
    for (size_t i = 0; i < chains.size(); ++i) {
      if (!rotations[i]) order.push_back(i);
    }
    RegionClaim claim;
    claim.inputs = {a_name};
    std::vector<Projection> projections;
    for (size_t i : order) {
      claim.nodes.insert(claim.nodes.end(), {matmuls[i], chains[i].reshape, chains[i].transpose});
      claim.inputs.push_back(weights[i]);
      if (rotations[i]) {
        claim.nodes.insert(claim.nodes.end(), rotations[i]->nodes.begin(), rotations[i]->nodes.end());
        claim.outputs.push_back(rotations[i]->outputs[0]);
      } else {
        claim.outputs.push_back(region.node(chains[i].transpose).output(0));
      }
      projections.push_back(chains[i].projection);
    }
    if (rotated > 0) {
      claim.inputs.insert(claim.inputs.end(), {rotations[order[0]]->inputs[1], rotations[order[0]]->inputs[2]});
    }
    if (PrepareRegion(std::make_unique<ProjectionsNode>(*type, std::move(projections), rotated), region, claim).ok()) {
      return std::optional<RegionClaim>(std::move(claim));
    }
  }
  return std::optional<RegionClaim>();  // oneDNN refused: the nodes are lowered one by one
}

}  // namespace

void AddProjectionRegions(Lowering& lowering) { lowering.AddRegion("MatMul", LowerProjections); }

}  // namespace parity::adapters::onednn
