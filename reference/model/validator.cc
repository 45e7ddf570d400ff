// Structural validation of ONNX models. It runs at every session creation, so
// it must cost less than parsing the model: names are indexed as views into
// the model (which outlives validation), a problem's text is composed only
// when the problem is found, and no walk recurses along a graph's length.
#include "reference/model/validator.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <numeric>
#include <memory>
#include <new>
#include <optional>
#include <ostream>
#include <string_view>
#include <tuple>
#include <unordered_map>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "reference/core/tensor.h"
#include "reference/model/graph.h"
#include "reference/model/op_schemas.h"
#include "reference/model/tensor_io.h"

namespace parity {
namespace {

using NodeList = google::protobuf::RepeatedPtrField<onnx::NodeProto>;

size_t HashName(std::string_view name) { return std::hash<std::string_view>()(name); }

// Value names of one graph or function body: an open-addressing table of
// pointers to the model's own strings, sized once from the counts the graph
// declares. A slot is 16 bytes so that a million names stay in 32 MiB.
class NameTable {
 public:
  static constexpr uint32_t kInput = 1, kInitializer = 2;  // how the graph declares a name
  // All zero is an empty slot, so that a table comes zeroed from calloc.
  struct Entry {
    const std::string* name;    // null: an empty slot
    uint32_t bits;              // the hash's high bits, then kInput and kInitializer in the low two
    int32_t producer_plus_one;  // the first node of this graph that outputs the name, plus one

    int producer() const { return producer_plus_one - 1; }  // -1: none
    void set_producer(int node) { producer_plus_one = node + 1; }
  };

  explicit NameTable(size_t expected) : mask_(CapacityFor(expected) - 1), slots_(Allocate(mask_ + 1)) {}

  void Prefetch(size_t hash) const { __builtin_prefetch(&slots_[hash & mask_]); }

  // The entry of `name`, and whether it was added by this call.
  std::pair<Entry*, bool> Insert(const std::string& name, size_t hash) {
    if (2 * (size_ + 1) > mask_ + 1) Grow();
    Entry* slot = Probe(name, hash);
    if (slot->name) return {slot, false};
    *slot = Entry{&name, Tag(hash), 0};
    ++size_;
    return {slot, true};
  }
  std::pair<Entry*, bool> Insert(const std::string& name) { return Insert(name, HashName(name)); }

  const Entry* Find(std::string_view name, size_t hash) const {
    const Entry* slot = Probe(name, hash);
    return slot->name ? slot : nullptr;
  }
  const Entry* Find(std::string_view name) const { return Find(name, HashName(name)); }

 private:
  static size_t CapacityFor(size_t expected) {
    size_t capacity = 16;
    while (capacity < 2 * expected) capacity *= 2;
    return capacity;
  }
  struct Free {
    void operator()(Entry* p) const { std::free(p); }
  };
  using Slots = std::unique_ptr<Entry[], Free>;
  // Zeroed slots. A large table asks for huge pages: a million names take
  // 32 MiB, and faulting them in 4 KiB at a time costs more than the inserts.
  static Slots Allocate(size_t capacity) {
    const size_t bytes = capacity * sizeof(Entry);
    void* p = nullptr;
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    constexpr size_t kHugePage = size_t{2} << 20;
    if (bytes >= kHugePage && bytes % kHugePage == 0) {
      p = std::aligned_alloc(kHugePage, bytes);
      if (p) {
        madvise(p, bytes, MADV_HUGEPAGE);  // a hint: without it, ordinary pages
        std::memset(p, 0, bytes);
      }
    }
#endif
    if (!p) p = std::calloc(capacity, sizeof(Entry));
    if (!p) throw std::bad_alloc();
    return Slots(static_cast<Entry*>(p));
  }
  static uint32_t Tag(size_t hash) { return static_cast<uint32_t>(hash >> 32) & ~3u; }

  // The slot holding `name`, or the empty one where it would go.
  Entry* Probe(std::string_view name, size_t hash) const {
    const uint32_t tag = Tag(hash);
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      Entry& s = slots_[i];
      if (!s.name || ((s.bits & ~3u) == tag && std::string_view(*s.name) == name)) return &s;
    }
  }

  void Grow() {
    Slots old = Allocate(2 * (mask_ + 1));
    old.swap(slots_);
    const size_t old_capacity = mask_ + 1;
    mask_ = 2 * old_capacity - 1;
    for (size_t k = 0; k < old_capacity; ++k) {
      if (!old[k].name) continue;
      size_t i = HashName(*old[k].name) & mask_;
      while (slots_[i].name) i = (i + 1) & mask_;
      slots_[i] = old[k];
    }
  }

  size_t mask_;
  Slots slots_;
  size_t size_ = 0;
};

// The values visible in a graph: its own, then those of the graphs around it.
struct Scope {
  const NameTable* names;
  const Scope* parent;  // null: none
};

bool Visible(const Scope* scope, std::string_view name, size_t hash) {
  for (; scope; scope = scope->parent) {
    if (scope->names->Find(name, hash)) return true;
  }
  return false;
}

// "node 3 'name' (domain.Op)", as problems name a node; with no index (-1),
// "node 'name' (domain.Op)", as a cycle lists its nodes.
// How problems name a node (graph::DescribeNode), written out only when one is reported.
struct NodeName {
  const onnx::NodeProto& node;
  int index = -1;
};
std::ostream& operator<<(std::ostream& out, const NodeName& n) { return out << graph::DescribeNode(n.node, n.index); }

// A place in the model (graph, node, attribute, value): a chain of views
// written out only when a problem about it is reported.
struct Where {
  enum Kind { kText, kNode, kNamed };
  const Where* parent = nullptr;
  Kind kind = kText;
  std::string_view text;                  // kText: all of it; kNamed: what precedes the quoted name
  std::string_view name;                  // kNamed
  const onnx::NodeProto* node = nullptr;  // kNode
  int index = 0;                          // kNode
};

Where Text(std::string_view text) { return Where{nullptr, Where::kText, text, {}, nullptr, 0}; }
Where Named(const Where* parent, std::string_view prefix, std::string_view name) {
  return Where{parent, Where::kNamed, prefix, name, nullptr, 0};
}
Where AtNode(const Where* parent, const onnx::NodeProto& node, int index) {
  return Where{parent, Where::kNode, {}, {}, &node, index};
}

std::ostream& operator<<(std::ostream& out, const Where& where) {
  std::vector<const Where*> chain;
  for (const Where* w = &where; w; w = w->parent) chain.push_back(w);
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Where& w = **it;
    switch (w.kind) {
      case Where::kText: out << w.text; break;
      case Where::kNamed: out << w.text << w.name << "'"; break;
      case Where::kNode: out << " " << NodeName{*w.node, w.index}; break;
    }
  }
  return out;
}

// "Op-13": an operator at the version of its schema in force.
struct SchemaLabel { const std::string& op_type; int since_version; };
std::ostream& operator<<(std::ostream& out, const SchemaLabel& l) {
  return out << l.op_type << "-" << l.since_version;
}

// The names that the subgraphs in `node`'s attributes read from the graph
// around them: their nodes' inputs and their outputs that no enclosing
// subgraph defines, however deeply nested. The node depends on the nodes
// that produce them, as the evaluator orders it. Calls read(name) for each
// non-empty one, in no particular order; stops when read returns false.
template <typename Read>
bool ForEachOuterRead(const onnx::NodeProto& node, Read&& read) {
  std::vector<std::string_view> reads;
  graph::CollectSubgraphOuterReads(node, &reads);
  for (std::string_view name : reads) {
    if (!read(name)) return false;
  }
  return true;
}

// A model-local function's id: canonical domain, name, overload.
using FunctionId = std::tuple<std::string_view, std::string_view, std::string_view>;
FunctionId IdOf(const onnx::FunctionProto& f) { return {CanonicalDomain(f.domain()), f.name(), f.overload()}; }
FunctionId CalleeOf(const onnx::NodeProto& n) { return {CanonicalDomain(n.domain()), n.op_type(), n.overload()}; }

// Imported domains (canonical) and their versions.
using OpsetVersions = std::map<std::string, int64_t, std::less<>>;

class Validator {
 public:
  Validator(const LoadedModel& model, const ValidationOptions& options) : model_(model), options_(options) {
    limit_ = options.max_tensor_bytes > 0 ? options.max_tensor_bytes : Tensor::AllocationLimit();
  }

  std::vector<Status> Run() {
    const onnx::ModelProto& m = *model_.proto;
    if (!m.has_ir_version() || m.ir_version() <= 0) {
      Problem("ir_version is missing or not positive");
    } else if (m.ir_version() > onnx::IR_VERSION) {
      Problem("ir_version ", m.ir_version(), " is newer than the newest this build knows (", onnx::IR_VERSION, ")");
    }
    if (m.opset_import_size() == 0) Problem("the model imports no opset (opset_import is empty)");
    for (const auto& f : m.functions()) functions_.emplace(IdOf(f), LocalFunction{&f, 0});  // the first one counts
    for (const auto& o : m.opset_import()) {
      const std::string d(CanonicalDomain(o.domain()));
      if (opset_versions_.count(d)) Problem("opset_import names domain '", o.domain(), "' twice");
      opset_versions_[d] = o.version();
      if (o.version() <= 0) Problem("opset_import of domain '", o.domain(), "' has version ", o.version());
    }
    CheckFunctions();
    if (!m.has_graph()) {
      Problem("the model has no graph");
    } else {
      CheckGraph(m.graph(), Named(nullptr, "graph '", m.graph().name()), nullptr, /*in_function=*/false);
    }
    return std::move(problems_);
  }

 private:
  struct LocalFunction {
    const onnx::FunctionProto* proto;
    int state;  // of the search for call cycles: 0 unvisited, 1 on its stack, 2 done
  };

  template <typename... Args>
  void Problem(const Args&... args) {
    if (problems_.size() < options_.max_problems) {
      problems_.push_back(InvalidModel(model_.name, ": ", args...));
    }
  }

  void CheckDomain(const onnx::NodeProto& node, const Where& where, const OpsetVersions& opsets) {
    if (opsets.find(CanonicalDomain(node.domain())) == opsets.end()) {
      Problem(where, " uses domain '", node.domain(), "', which is not in opset_import");
    }
  }

  void CheckTensorType(const onnx::TypeProto& root, const Where& where) {
    const onnx::TypeProto* type = &root;
    while (!type->has_tensor_type()) {
      if (type->has_sequence_type() && type->sequence_type().has_elem_type()) {
        type = &type->sequence_type().elem_type();
      } else if (type->has_optional_type() && type->optional_type().has_elem_type()) {
        type = &type->optional_type().elem_type();
      } else {
        return;
      }
    }
    const auto& tt = type->tensor_type();
    if (tt.has_elem_type() && tt.elem_type() != 0 && !IsKnownDataType(tt.elem_type())) {
      Problem(where, " has unknown element type ", tt.elem_type());
    }
    if (!tt.has_shape()) return;
    Shape& dims = type_dims_;  // reused: value_info may declare a shape for every value
    dims.clear();
    bool fully_static = true;
    for (int i = 0; i < tt.shape().dim_size(); ++i) {
      const auto& d = tt.shape().dim(i);
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) Problem(where, " has negative dimension ", d.dim_value(), " at axis ", i);
        dims.push_back(d.dim_value());
      } else {
        fully_static = false;
      }
    }
    if (fully_static && tt.has_elem_type() && IsKnownDataType(tt.elem_type())) {
      CheckSize(static_cast<DataType>(tt.elem_type()), dims, where);
    }
  }

  void CheckSize(DataType dtype, const Shape& dims, const Where& where) {
    for (int64_t d : dims) {
      if (d < 0) return;  // reported elsewhere
    }
    StatusOr<int64_t> count = ElementCount(dims);
    if (!count.ok()) {
      Problem(where, ": ", count.status().message());
      return;
    }
    const int64_t bits = PackedBits(dtype) > 0 ? PackedBits(dtype) : 8;
    if (*count > 0 && (*count > (INT64_MAX - 7) / bits || (*count * bits + 7) / 8 > limit_)) {
      Problem(where, " declares ", DataTypeName(dtype), ShapeToString(dims), " (", *count,
              " elements), over the memory limit of ", limit_, " bytes");
    }
  }

  void CheckInitializer(const onnx::TensorProto& t, const Where& where) {
    const Where w = Named(&where, " initializer '", t.name());
    if (!IsKnownDataType(t.data_type())) {
      Problem(w, " has unknown data_type ", t.data_type());
      return;
    }
    Shape& dims = initializer_dims_;
    dims.assign(t.dims().begin(), t.dims().end());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) {
        Problem(w, " has negative dimension ", dims[i], " at axis ", i);
        return;
      }
    }
    const size_t before = problems_.size();
    CheckSize(static_cast<DataType>(t.data_type()), dims, w);
    if (problems_.size() != before) return;
    const auto dtype = static_cast<DataType>(t.data_type());
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      Status external = CheckExternalData(t, ExternalDataPolicy{model_.base_dir});
      if (!external.ok()) Problem(w, ": ", external.message());
      return;
    }
    if (t.has_raw_data() && dtype != DataType::kString) {
      const int64_t count = *ElementCount(dims);
      const int64_t want = (count * PackedBits(dtype) + 7) / 8;
      if (static_cast<int64_t>(t.raw_data().size()) != want) {
        Problem(w, " (", DataTypeName(dtype), ShapeToString(dims), ") has ", t.raw_data().size(),
                " bytes of raw_data, expected ", want);
      }
    }
  }

  void CheckAttributes(const onnx::NodeProto& node, const Where& where, const Scope& visible, bool in_function) {
    const int count = node.attribute_size();
    if (count == 0) return;
    // Repeated names: compared pairwise for the usual handful, hashed beyond.
    std::optional<NameTable> seen;
    if (count > 16) seen.emplace(count);
    for (int j = 0; j < count; ++j) {
      const auto& a = node.attribute(j);
      const Where w = Named(&where, " attribute '", a.name());
      if (a.name().empty()) Problem(where, " has an attribute with no name");
      bool twice = false;
      if (seen) {
        twice = !seen->Insert(a.name()).second;
      } else {
        for (int k = 0; k < j && !twice; ++k) twice = node.attribute(k).name() == a.name();
      }
      if (twice) Problem(w, " is given twice");
      if (!a.ref_attr_name().empty()) {
        if (!in_function) Problem(w, " refers to attribute '", a.ref_attr_name(), "' outside a function body");
        continue;
      }
      CheckAttributeType(a, w);
      if (a.has_g()) CheckGraph(a.g(), Named(&w, " graph '", a.g().name()), &visible, in_function);
      for (const auto& g : a.graphs()) CheckGraph(g, Named(&w, " graph '", g.name()), &visible, in_function);
      if (a.has_t()) CheckInitializer(a.t(), w);
    }
  }

  void CheckAttributeType(const onnx::AttributeProto& a, const Where& where) {
    for (const std::string& problem : AttributeTypeProblems(a)) Problem(where, problem);
  }

  // Whether node `index` reads, through its subgraphs, only values that
  // earlier nodes of `names`' graph produce.
  static bool SubgraphsReadOnlyEarlier(const onnx::NodeProto& node, int index, const NameTable& names) {
    return ForEachOuterRead(node, [&](std::string_view name) {
      const NameTable::Entry* e = names.Find(name);
      return !e || e->producer() < index;
    });
  }

  // Adds the nodes' non-empty outputs to `defined`, each name hashed and its
  // slot fetched some names ahead of its insertion: the table of a large
  // graph is far larger than the caches.
  void DefineOutputs(const NodeList& nodes, NameTable& defined, const Where& where) {
    struct Ahead { const std::string* name; size_t hash; int node; };
    constexpr size_t kAhead = 16;
    Ahead ahead[kAhead];
    size_t queued = 0, inserted = 0;
    auto insert = [&](const Ahead& a) {
      auto [e, added] = defined.Insert(*a.name, a.hash);
      if (!added) {
        Problem(where, ": value '", *a.name, "' is defined twice (output of ", NodeName{nodes[a.node], a.node}, ")");
      }
      if (e->producer() < 0) e->set_producer(a.node);
    };
    for (int i = 0; i < nodes.size(); ++i) {
      for (const auto& o : nodes[i].output()) {
        if (o.empty()) continue;
        if (queued - inserted == kAhead) insert(ahead[inserted++ % kAhead]);
        const size_t hash = HashName(o);
        defined.Prefetch(hash);
        ahead[queued++ % kAhead] = Ahead{&o, hash, i};
      }
    }
    while (inserted < queued) insert(ahead[inserted++ % kAhead]);
  }

  // Whether `name` is an output of one of the few nodes just before node
  // `index`: an earlier node then produces it, with no need to look it up
  // (in most graphs a node reads what was computed just before it).
  static bool MadeJustBefore(const NodeList& nodes, int index, const std::string& name) {
    constexpr int kWindow = 4;
    for (int j = index - 1; j >= 0 && j >= index - kWindow; --j) {
      for (const auto& o : nodes[j].output()) {
        if (o == name) return true;
      }
    }
    return false;
  }

  // `outer`: names visible from enclosing graphs.
  void CheckGraph(const onnx::GraphProto& graph, const Where& where, const Scope* outer, bool in_function) {
    if (++depth_ > 64) {
      Problem(where, ": subgraphs nest deeper than 64 levels");
      --depth_;
      return;
    }
    const int node_count = graph.node_size();
    NameTable defined(graph.input_size() + graph.initializer_size() + node_count);
    for (const auto& i : graph.input()) {
      NameTable::Entry* e = defined.Insert(i.name()).first;
      if (e->bits & NameTable::kInput) Problem(where, ": input '", i.name(), "' is declared twice");
      e->bits |= NameTable::kInput;
      CheckTensorType(i.type(), Named(&where, " input '", i.name()));
    }
    for (const auto& t : graph.initializer()) {
      NameTable::Entry* e = defined.Insert(t.name()).first;  // may share its name with an input (a default value)
      if (e->bits & NameTable::kInitializer) Problem(where, ": initializer '", t.name(), "' is defined twice");
      e->bits |= NameTable::kInitializer;
      CheckInitializer(t, where);
    }
    DefineOutputs(graph.node(), defined, where);
    for (const auto& v : graph.value_info()) CheckTensorType(v.type(), Named(&where, " value_info '", v.name()));
    const Scope visible{&defined, outer};
    // Nodes that read only what earlier nodes produce are in order, so
    // acyclic; only a graph out of order needs the full sort.
    bool in_order = true;
    for (int i = 0; i < node_count; ++i) {
      const auto& node = graph.node(i);
      const Where w = AtNode(&where, node, i);
      if (node.op_type().empty()) Problem(w, " has no op_type");
      if (!in_function) {
        CheckDomain(node, w, opset_versions_);
        CheckAgainstSchema(node, w, opset_versions_);
      }
      for (const auto& in : node.input()) {
        if (in.empty() || MadeJustBefore(graph.node(), i, in)) continue;
        const size_t hash = HashName(in);
        if (const NameTable::Entry* e = defined.Find(in, hash)) {
          in_order &= e->producer() < i;
        } else if (!Visible(outer, in, hash)) {
          Problem(w, " reads '", in, "', which no input, initializer or node defines");
        }
      }
      CheckAttributes(node, w, visible, in_function);
      if (in_order) in_order = SubgraphsReadOnlyEarlier(node, i, defined);
    }
    for (const auto& o : graph.output()) {
      if (!Visible(&visible, o.name(), HashName(o.name()))) {
        Problem(where, ": output '", o.name(), "' is never computed");
      }
      CheckTensorType(o.type(), Named(&where, " output '", o.name()));
    }
    if (!in_order) CheckAcyclic(graph.node(), defined, where);
    --depth_;
  }

  // Kahn's sort over the nodes, each depending on the producers (in `names`)
  // of what it and its subgraphs read. The nodes left over lie on or after a
  // cycle; this problem is kept even past max_problems, as it always was.
  void CheckAcyclic(const NodeList& nodes, const NameTable& names, const Where& where) {
    const int n = nodes.size();
    std::vector<int32_t> ids(static_cast<size_t>(n));
    std::iota(ids.begin(), ids.end(), 0);
    auto dependencies = [&](int32_t i, auto&& depend) {
      auto read = [&](std::string_view name) {
        const NameTable::Entry* e = name.empty() ? nullptr : names.Find(name);
        if (e && e->producer() >= 0) depend(e->producer());
        return true;
      };
      for (const auto& in : nodes[i].input()) read(in);
      ForEachOuterRead(nodes[i], read);
    };
    std::vector<uint8_t> emitted;
    const size_t sorted = graph::StableTopologicalSort(
        ids, static_cast<size_t>(n), dependencies, [](int32_t i) { return i; }, &emitted).size();
    if (static_cast<int>(sorted) == n) return;
    problems_.push_back(InvalidModel(model_.name, ": ", where, ": the graph has a cycle through ",
                                     graph::DescribeCycle(nodes, emitted)));
  }

  void CheckFunctions() {
    const onnx::ModelProto& m = *model_.proto;
    for (const auto& f : m.functions()) {
      if (functions_.at(IdOf(f)).proto != &f) {
        Problem("function ", f.domain(), ".", f.name(), f.overload().empty() ? "" : ":" + f.overload(),
                " is defined twice");
      }
    }
    for (const auto& f : m.functions()) CheckFunction(f);
    // Call cycles: depth-first search over calls between local functions,
    // with its own stack (a chain of calls may be long).
    struct Frame {
      std::pair<const FunctionId, LocalFunction>* function;
      int next_node;
    };
    std::vector<Frame> stack;
    for (auto& root : functions_) {
      if (root.second.state != 0) continue;
      root.second.state = 1;
      stack.push_back({&root, 0});
      while (!stack.empty()) {
        LocalFunction& function = stack.back().function->second;
        if (stack.back().next_node == function.proto->node_size()) {
          function.state = 2;
          stack.pop_back();
          continue;
        }
        auto callee = functions_.find(CalleeOf(function.proto->node(stack.back().next_node++)));
        if (callee == functions_.end()) continue;
        if (callee->second.state == 1) {
          std::string cycle;
          for (const Frame& s : stack) {
            const auto& [domain, name, overload] = s.function->first;
            cycle += StrCat(domain.empty() ? "" : StrCat(domain, "."), name, " -> ");
          }
          Problem("function call cycle: ", cycle, std::get<1>(callee->first));
        } else if (callee->second.state == 0) {
          callee->second.state = 1;
          stack.push_back({&*callee, 0});
        }
      }
    }
  }

  void CheckFunction(const onnx::FunctionProto& f) {
    const std::string text = "function " + f.domain() + "." + f.name();
    const Where where = Text(text);
    OpsetVersions versions = opset_versions_;
    for (const auto& o : f.opset_import()) versions[std::string(CanonicalDomain(o.domain()))] = o.version();
    NameTable names(f.input_size() + f.node_size());
    for (const auto& in : f.input()) names.Insert(in);
    for (int i = 0; i < f.node_size(); ++i) {
      for (const auto& o : f.node(i).output()) {
        NameTable::Entry* e = names.Insert(o).first;
        if (!o.empty() && e->producer() < 0) e->set_producer(i);
      }
    }
    const Scope visible{&names, nullptr};
    bool in_order = true;
    for (int i = 0; i < f.node_size(); ++i) {
      const auto& node = f.node(i);
      const Where w = AtNode(&where, node, i);
      if (!functions_.count(CalleeOf(node))) {
        CheckDomain(node, w, versions);
        CheckAgainstSchema(node, w, versions);
      }
      for (const auto& in : node.input()) {
        if (in.empty()) continue;
        if (const NameTable::Entry* e = names.Find(in)) {
          in_order &= e->producer() < i;
        } else {
          Problem(w, " reads '", in, "', which the function does not define");
        }
      }
      CheckAttributes(node, w, visible, /*in_function=*/true);
      if (in_order) in_order = SubgraphsReadOnlyEarlier(node, i, names);
    }
    for (const auto& o : f.output()) {
      if (!names.Find(o)) Problem(where, ": output '", o, "' is never computed");
    }
    if (!in_order) CheckAcyclic(f.node(), names, where);
  }

  // What the schema table says of one (domain, op_type, opset), looked up once.
  struct SchemaFacts {
    bool knows_domain = false;
    bool knows_operator = false;
    const OpSchemaInfo* schema = nullptr;
  };
  struct SchemaKey {
    std::string_view domain, op_type;
    int64_t version;
    bool operator==(const SchemaKey&) const = default;
  };
  struct SchemaKeyHash {
    size_t operator()(const SchemaKey& k) const {
      return HashName(k.op_type) ^ (k.domain.size() + static_cast<size_t>(k.version)) * 0x9e3779b97f4a7c15ull;
    }
  };

  const SchemaFacts& Facts(std::string_view domain, std::string_view op_type, int64_t version) {
    auto [it, added] = schema_facts_.try_emplace(SchemaKey{domain, op_type, version});
    SchemaFacts& facts = it->second;
    if (!added) return facts;
    const OpSchemas& schemas = OpSchemas::Onnx();
    facts.knows_domain = schemas.KnowsDomain(domain);
    if (!facts.knows_domain) return facts;
    facts.schema = schemas.Find(domain, op_type, version);
    facts.knows_operator = facts.schema || schemas.KnowsOperator(domain, op_type);
    return facts;
  }

  // A node of an ONNX domain against the schema of the pinned onnx release:
  // the operator exists at the imported opset, its input and output counts,
  // its attributes' names and types, and the required ones are present.
  void CheckAgainstSchema(const onnx::NodeProto& node, const Where& where, const OpsetVersions& opset_versions) {
    const std::string_view domain = CanonicalDomain(node.domain());
    if (!functions_.empty() && functions_.count(CalleeOf(node))) return;
    auto version = opset_versions.find(domain);
    if (version == opset_versions.end()) return;  // reported by CheckDomain
    const SchemaFacts& facts = Facts(domain, node.op_type(), version->second);
    if (!facts.knows_domain) return;  // a domain onnx does not define: nothing to check against
    const OpSchemaInfo* schema = facts.schema;
    if (!schema) {
      if (facts.knows_operator) {
        Problem(where, ": ", node.op_type(), " does not exist yet at opset ", version->second, " of domain '",
                node.domain(), "'");
      } else if (!options_.has_function_body || !options_.has_function_body(domain, node.op_type())) {
        // Perhaps an operator of a newer release: the model is not known to
        // be wrong, only beyond what this build can judge.
        if (problems_.size() < options_.max_problems) {
          problems_.push_back(Unimplemented(model_.name, ": ", where, ": operator ", node.op_type(), " of domain '",
                                            domain.empty() ? "ai.onnx" : domain, "' at opset ", version->second, " is unknown to onnx ",
                                            OpSchemas::OnnxVersion(),
                                            " (the release this build pins), and spec/functions/ has no body for it"));
        }
      }
      return;
    }
    const SchemaLabel label{node.op_type(), schema->since_version};
    int present_inputs = node.input_size();
    while (present_inputs > 0 && node.input(present_inputs - 1).empty()) --present_inputs;
    if (present_inputs > schema->max_inputs) {
      Problem(where, " has ", present_inputs, " inputs; ", label, " takes at most ", schema->max_inputs);
    }
    if (present_inputs < schema->min_inputs) {
      Problem(where, " has ", present_inputs, " inputs; ", label, " needs at least ", schema->min_inputs);
    }
    if (node.output_size() > schema->max_outputs) {
      Problem(where, " has ", node.output_size(), " outputs; ", label, " gives at most ", schema->max_outputs);
    }
    for (const auto& a : node.attribute()) {
      auto it = schema->attributes.find(a.name());
      if (it == schema->attributes.end()) {
        Problem(where, " attribute '", a.name(), "' is not an attribute of ", label);
      } else if (a.has_type() && a.type() != it->second.type && a.ref_attr_name().empty()) {
        Problem(where, " attribute '", a.name(), "' is ",
                onnx::AttributeProto::AttributeType_Name(a.type()), " but ", label, " declares it ",
                onnx::AttributeProto::AttributeType_Name(
                    static_cast<onnx::AttributeProto::AttributeType>(it->second.type)));
      }
    }
    for (const auto& [name, attribute] : schema->attributes) {
      if (!attribute.required) continue;
      bool given = false;
      for (const auto& a : node.attribute()) given |= a.name() == name;
      if (!given) Problem(where, " lacks attribute '", name, "', which ", label, " requires");
    }
  }

  const LoadedModel& model_;
  ValidationOptions options_;
  OpsetVersions opset_versions_;
  std::map<FunctionId, LocalFunction> functions_;
  std::unordered_map<SchemaKey, SchemaFacts, SchemaKeyHash> schema_facts_;
  Shape type_dims_, initializer_dims_;
  int64_t limit_ = 0;
  int depth_ = 0;
  std::vector<Status> problems_;
};

}  // namespace

std::vector<std::string> AttributeTypeProblems(const onnx::AttributeProto& a) {
  using A = onnx::AttributeProto;
  // Which field each declared type stores its value in.
  if (!a.has_type() || a.type() == A::UNDEFINED) return {" has no type"};
  std::vector<std::string> problems;
  // Whether the field of the declared type holds a value (an empty list is
  // a valid value, so list types always do).
  bool holds = true;
  switch (a.type()) {
    case A::FLOAT: holds = a.has_f(); break;
    case A::INT: holds = a.has_i(); break;
    case A::STRING: holds = a.has_s(); break;
    case A::TENSOR: holds = a.has_t(); break;
    case A::GRAPH: holds = a.has_g(); break;
    case A::SPARSE_TENSOR: holds = a.has_sparse_tensor(); break;
    case A::TYPE_PROTO: holds = a.has_tp(); break;
    case A::FLOATS:
    case A::INTS:
    case A::STRINGS:
    case A::TENSORS:
    case A::GRAPHS:
    case A::SPARSE_TENSORS:
    case A::TYPE_PROTOS: break;
    default: return {StrCat(" has unknown type ", a.type())};
  }
  if (!holds) {
    problems.push_back(StrCat(" is declared ", A::AttributeType_Name(a.type()), " but holds no value of that type"));
  }
  // A value stored in a field of another type is a mismatch too.
  const bool list = a.floats_size() || a.ints_size() || a.strings_size() || a.tensors_size() || a.graphs_size() ||
                    a.sparse_tensors_size() || a.type_protos_size();
  const bool scalar_type = a.type() <= A::GRAPH || a.type() == A::SPARSE_TENSOR || a.type() == A::TYPE_PROTO;
  if (scalar_type && list) {
    problems.push_back(StrCat(" is declared ", A::AttributeType_Name(a.type()), " but holds a list"));
  }
  if (!scalar_type && (a.has_f() || a.has_i() || a.has_s() || a.has_t() || a.has_g())) {
    problems.push_back(StrCat(" is declared ", A::AttributeType_Name(a.type()), " but holds a single value"));
  }
  return problems;
}

std::vector<Status> ValidateModel(const LoadedModel& model, const ValidationOptions& options) {
  if (!model.proto) return {Internal("ValidateModel: no model")};
  return Validator(model, options).Run();
}

}  // namespace parity
