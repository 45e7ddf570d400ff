// The graph layer's index of one graph (value names interned to dense ids,
// each value's producer and readers, what each node reads including what
// its subgraphs read from outside) and the region of a cut, built once per
// graph; variant validation, hashing and resolution and the aliasing rules
// share it.
//
// Thread safety: an index keeps scratch marks for its walks, so one index is
// used by one thread at a time. It points to the graph's protos (for
// initializers and nodes): the graph must outlive it, and nodes must keep
// their places while it is used. Names are the index's own copies.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnx/onnx-ml.pb.h"
#include "reference/model/graph.h"

namespace parity::graph {

// Open-addressing hash map from names to dense ids 0, 1, 2, ... in order of
// first interning. It keeps its own copy of each name, packed in large
// blocks: no allocation per name, names interned together lie together in
// memory, and the table stays valid while the model's strings change.
class NameTable {
 public:
  void Reserve(size_t names);
  int32_t Find(std::string_view name) const;  // -1 when absent
  int32_t Intern(std::string_view name) { return Intern(name, Hash(name)); }
  int32_t size() const { return static_cast<int32_t>(names_.size()); }
  std::string_view name(int32_t id) const { return names_[static_cast<size_t>(id)]; }

  // For batches: hash names first and prefetch their slots, so that the
  // cache misses of a table of millions of names overlap.
  static size_t Hash(std::string_view name) { return std::hash<std::string_view>()(name); }
  void Prefetch(size_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & mask_]);
  }
  int32_t Intern(std::string_view name, size_t hash);

 private:
  void Rehash(size_t slot_count);
  std::string_view Store(std::string_view name);

  // A slot holds the upper 32 bits of a name's hash and its id + 1 (0:
  // empty), so a probe reads a name only when the hashes agree.
  static uint64_t Slot(size_t hash, int32_t id) {
    return (static_cast<uint64_t>(hash >> 32) << 32) | static_cast<uint32_t>(id + 1);
  }
  std::vector<std::string_view> names_;  // views into blocks_
  std::vector<size_t> hashes_;           // by id, for rehashing
  std::vector<uint64_t> slots_;          // size a power of two
  size_t mask_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  size_t block_used_ = 0, block_size_ = 0;
};

class GraphIndex {
 public:
  // `parent` is the index of the graph whose node holds `graph` (null for
  // the main graph); it may be set later, before Visible or the enclosing
  // initializers are asked for.
  explicit GraphIndex(const onnx::GraphProto& graph, const GraphIndex* parent = nullptr);

  const onnx::GraphProto& graph() const { return *graph_; }
  const GraphIndex* parent() const { return parent_; }
  // The node of parent() whose attribute holds this graph; -1 for the main graph.
  int32_t holder() const { return holder_; }
  void set_parent(const GraphIndex* parent, int32_t holder) {
    parent_ = parent;
    holder_ = holder;
  }

  int32_t node_count() const { return static_cast<int32_t>(graph_->node_size()); }
  int32_t value_count() const { return names_.size(); }
  // Ids cover every name this graph mentions: its inputs, initializers, node
  // inputs and outputs, outputs, the names its subgraphs read from outside
  // it, and the names its entries list.
  int32_t Find(std::string_view name) const { return names_.Find(name); }
  std::string_view name(int32_t value) const { return names_.name(value); }

  int32_t producer(int32_t value) const { return producer_[static_cast<size_t>(value)]; }
  bool is_graph_input(int32_t value) const { return flags_[static_cast<size_t>(value)] & kGraphInput; }
  bool is_graph_output(int32_t value) const { return flags_[static_cast<size_t>(value)] & kGraphOutput; }
  const onnx::TensorProto* initializer(int32_t value) const { return initializer_[static_cast<size_t>(value)]; }
  // Defined by this graph: an input, an initializer or a node output.
  bool defined_here(int32_t value) const {
    return flags_[static_cast<size_t>(value)] & (kGraphInput | kInitializer | kNodeOutput);
  }
  // Read as an entry input by an entry of a subgraph (at any depth) and not
  // defined there: such a value must stay while a node holding it stays.
  bool read_by_nested_entry(int32_t value) const { return flags_[static_cast<size_t>(value)] & kNestedEntryRead; }

  // What node `n` reads: its non-empty inputs, then the values its
  // subgraphs read from this graph's scope (each once per node).
  std::span<const int32_t> reads(int32_t node) const { return Span(reads_, read_begin_, node); }
  // The values of this graph's scope that entries of node `n`'s subgraphs
  // (at any depth) take as inputs, each once, leaving out those in reads(n).
  // Not part of what the node reads for regions, hashes or convexity: an
  // entry is an alternative, not a read. Resolution keeps them alive and
  // ordered, since an entry taken inside a node that stays reads them.
  std::span<const int32_t> entry_reads(int32_t node) const {
    return entry_read_begin_.empty() ? std::span<const int32_t>() : Span(entry_reads_, entry_read_begin_, node);
  }
  // Its outputs, -1 for "".
  std::span<const int32_t> outputs(int32_t node) const { return Span(outputs_, output_begin_, node); }
  // Nodes that read `value` (explicitly or through a subgraph).
  std::span<const int32_t> consumers(int32_t value) const { return Span(consumers_, consumer_begin_, value); }

  // The nodes that hold subgraphs, in node order.
  const std::vector<int32_t>& subgraph_nodes() const { return subgraph_nodes_; }

  // A topological rank of node `n`: its position when the node list is
  // already in topological order (as a valid model's is), else its place in
  // a stable topological order.
  int32_t position(int32_t node) const {
    return position_.empty() ? node : position_[static_cast<size_t>(node)];
  }
  bool sorted() const { return position_.empty(); }

  // Whether `name` is defined in this graph or an enclosing one.
  bool Visible(std::string_view name) const;

  // Where an outer value a graph reads is not visible at the node holding
  // the graph: in the nearest enclosing graph that defines `name`, the node
  // that makes it when that node is the holder or ranks after it (so it is
  // made by, or computed from, or after, the holder). nullopt when `name` is
  // defined here, is visible there, or is defined nowhere.
  struct LateOuterValue {
    const GraphIndex* graph;  // the enclosing graph that defines it
    int32_t producer;         // its node there
    int32_t holder;           // the node there that holds the reading graph (at some depth)
  };
  std::optional<LateOuterValue> LateOuter(std::string_view name) const;

  // Marks the nodes that node `n` depends on, transitively, through what
  // they read; is_ancestor answers until the next walk of this index.
  void MarkAncestors(int32_t n);
  bool is_ancestor(int32_t n) const {
    return ancestor_epoch_ != 0 && node_mark_[static_cast<size_t>(n)] == ancestor_epoch_;
  }

  // --- Cuts. ---------------------------------------------------------------
  // The region of a cut: the nodes reached walking back from the producers
  // of `outputs` through what nodes read, stopping at `inputs` (value ids;
  // -1 entries are ignored). Every output must have a producer here.
  struct Region {
    std::vector<int32_t> nodes;  // in node order
    // The first graph input or outer value the walk reached that is not an
    // entry input (VAR-OPEN-CUT); -1 when none.
    int32_t open_value = -1;
  };
  Region FindRegion(std::span<const int32_t> inputs, std::span<const int32_t> outputs);

  // An entry input computed from the region, with a region value it
  // depends on (the input itself when a region node makes it); nullopt when
  // the cut is convex. Walks forward from the region through nodes outside
  // it, never past the rank of the last producer of an input, and back from
  // the producers, never before the region's first rank, and stops when
  // either walk settles it.
  std::optional<std::pair<int32_t, int32_t>> NonConvexInput(std::span<const int32_t> region,
                                                           std::span<const int32_t> inputs);

 private:
  enum Flag : uint8_t {
    kGraphInput = 1,
    kInitializer = 2,
    kNodeOutput = 4,
    kGraphOutput = 8,
    kNestedEntryRead = 16,
  };
  static std::span<const int32_t> Span(const std::vector<int32_t>& data, const std::vector<int32_t>& begin,
                                       int32_t i) {
    const auto b = static_cast<size_t>(begin[static_cast<size_t>(i)]);
    const auto e = static_cast<size_t>(begin[static_cast<size_t>(i) + 1]);
    return std::span<const int32_t>(data.data() + b, e - b);
  }
  void ComputePositions();
  uint32_t NextEpoch();

  const onnx::GraphProto* graph_;
  const GraphIndex* parent_;
  int32_t holder_ = -1;
  NameTable names_;
  std::vector<int32_t> producer_;
  std::vector<uint8_t> flags_;
  std::vector<const onnx::TensorProto*> initializer_;
  std::vector<int32_t> read_begin_, reads_;
  std::vector<int32_t> output_begin_, outputs_;
  std::vector<int32_t> consumer_begin_, consumers_;
  // Empty when no node's subgraphs hold an entry that reads this scope.
  std::vector<int32_t> entry_read_begin_, entry_reads_;
  std::vector<int32_t> position_;  // empty when the node order is topological
  std::vector<int32_t> subgraph_nodes_;

  // Scratch for the walks: a slot equals epoch_ when marked in the current walk.
  std::vector<uint32_t> node_mark_, node_seen_, node_back_, value_mark_;
  std::vector<int32_t> origin_;  // forward walk: the region value a node depends on
  uint32_t epoch_ = 0;
  uint32_t ancestor_epoch_ = 0;  // the epoch of the last MarkAncestors, 0 before the first
};

}  // namespace parity::graph
