// Per-graph indexes and region walks (graph_index.h).
#include "reference/model/graph_index.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <unordered_set>

#include "reference/core/status.h"

namespace parity::graph {

// --- NameTable ----------------------------------------------------------------

void NameTable::Reserve(size_t names) {
  names_.reserve(names);
  hashes_.reserve(names);
  size_t slots = 16;
  while (slots < names * 2) slots *= 2;
  if (slots > slots_.size()) Rehash(slots);
}

int32_t NameTable::Find(std::string_view name) const {
  if (slots_.empty()) return -1;
  const size_t hash = Hash(name);
  const uint64_t tag = Slot(hash, -1) >> 32;
  for (size_t slot = hash & mask_;; slot = (slot + 1) & mask_) {
    const uint64_t entry = slots_[slot];
    if (entry == 0) return -1;
    const auto id = static_cast<int32_t>(static_cast<uint32_t>(entry)) - 1;
    if ((entry >> 32) == tag && names_[static_cast<size_t>(id)] == name) return id;
  }
}

int32_t NameTable::Intern(std::string_view name, size_t hash) {
  // Keep the load factor at most one half, so probes stay short.
  if ((names_.size() + 1) * 2 > slots_.size()) Rehash(std::max<size_t>(16, slots_.size() * 2));
  const uint64_t tag = Slot(hash, -1) >> 32;
  size_t slot = hash & mask_;
  for (;; slot = (slot + 1) & mask_) {
    const uint64_t entry = slots_[slot];
    if (entry == 0) break;
    const auto id = static_cast<int32_t>(static_cast<uint32_t>(entry)) - 1;
    if ((entry >> 32) == tag && names_[static_cast<size_t>(id)] == name) return id;
  }
  const auto id = static_cast<int32_t>(names_.size());
  names_.push_back(Store(name));
  hashes_.push_back(hash);
  slots_[slot] = Slot(hash, id);
  return id;
}

std::string_view NameTable::Store(std::string_view name) {
  constexpr size_t kBlock = size_t{1} << 20;
  if (name.empty()) return {};
  if (block_used_ + name.size() > block_size_) {
    block_size_ = std::max(kBlock, name.size());
    blocks_.push_back(std::make_unique<char[]>(block_size_));
    block_used_ = 0;
  }
  char* at = blocks_.back().get() + block_used_;
  std::copy(name.begin(), name.end(), at);
  block_used_ += name.size();
  return std::string_view(at, name.size());
}

void NameTable::Rehash(size_t slot_count) {
  slots_.assign(slot_count, 0);
  mask_ = slot_count - 1;
  for (size_t id = 0; id < names_.size(); ++id) {
    size_t slot = hashes_[id] & mask_;
    while (slots_[slot] != 0) slot = (slot + 1) & mask_;
    slots_[slot] = Slot(hashes_[id], static_cast<int32_t>(id));
  }
}

// --- GraphIndex -------------------------------------------------------------------

GraphIndex::GraphIndex(const onnx::GraphProto& graph, const GraphIndex* parent) : graph_(&graph), parent_(parent) {
  const int32_t node_count = graph.node_size();
  names_.Reserve(static_cast<size_t>(graph.input_size() + graph.initializer_size() + graph.output_size()) +
                 static_cast<size_t>(node_count) * 2);
  std::vector<int32_t> input_ids, initializer_ids, output_ids, nested_entry_ids;
  for (const auto& i : graph.input()) input_ids.push_back(names_.Intern(i.name()));
  for (const auto& t : graph.initializer()) initializer_ids.push_back(names_.Intern(t.name()));

  output_begin_.reserve(static_cast<size_t>(node_count) + 1);
  read_begin_.reserve(static_cast<size_t>(node_count) + 1);
  outputs_.reserve(static_cast<size_t>(node_count));
  reads_.reserve(static_cast<size_t>(node_count) * 2);
  // Nodes go in chunks: first the names of a chunk are hashed and their
  // slots prefetched, then they are interned while the strings are still
  // in the cache and the slots are on their way.
  constexpr int32_t kChunk = 16;
  struct Pending {
    std::string_view name;
    size_t hash;
  };
  std::vector<Pending> pending;
  std::vector<std::string_view> outer, entry_reads;
  std::vector<std::pair<int32_t, int32_t>> node_entry_reads;  // (node, value), in node order
  for (int32_t chunk = 0; chunk < node_count; chunk += kChunk) {
    const int32_t end = std::min(node_count, chunk + kChunk);
    pending.clear();
    for (int32_t n = chunk; n < end; ++n) {
      const onnx::NodeProto& node = graph.node(n);
      for (const auto& o : node.output()) pending.push_back({o, NameTable::Hash(o)});
      for (const auto& in : node.input()) {
        if (!in.empty()) pending.push_back({in, NameTable::Hash(in)});
      }
    }
    for (const Pending& p : pending) names_.Prefetch(p.hash);
    size_t at = 0;
    for (int32_t n = chunk; n < end; ++n) {
      const onnx::NodeProto& node = graph.node(n);
      output_begin_.push_back(static_cast<int32_t>(outputs_.size()));
      for (const auto& o : node.output()) {
        outputs_.push_back(o.empty() ? -1 : names_.Intern(pending[at].name, pending[at].hash));
        ++at;
      }
      read_begin_.push_back(static_cast<int32_t>(reads_.size()));
      for (const auto& in : node.input()) {
        if (in.empty()) continue;
        reads_.push_back(names_.Intern(pending[at].name, pending[at].hash));
        ++at;
      }
      if (!HasGraphAttribute(node)) continue;
      subgraph_nodes_.push_back(n);
      outer.clear();
      entry_reads.clear();
      CollectSubgraphOuterReads(node, &outer, &entry_reads);
      // Each value once per node: one the node reads explicitly is not added again.
      const auto first = static_cast<std::ptrdiff_t>(read_begin_.back());
      const auto explicit_end = static_cast<std::ptrdiff_t>(reads_.size());
      for (std::string_view name : outer) {
        const int32_t id = names_.Intern(name);
        if (std::find(reads_.begin() + first, reads_.begin() + explicit_end, id) == reads_.begin() + explicit_end) {
          reads_.push_back(id);
        }
      }
      const auto all_end = static_cast<std::ptrdiff_t>(reads_.size());
      for (std::string_view name : entry_reads) {
        const int32_t id = names_.Intern(name);
        nested_entry_ids.push_back(id);
        if (std::find(reads_.begin() + first, reads_.begin() + all_end, id) == reads_.begin() + all_end) {
          node_entry_reads.emplace_back(n, id);
        }
      }
    }
  }
  if (!node_entry_reads.empty()) {
    entry_read_begin_.assign(static_cast<size_t>(node_count) + 1, 0);
    for (const auto& [n, id] : node_entry_reads) {
      ++entry_read_begin_[static_cast<size_t>(n) + 1];
      entry_reads_.push_back(id);
    }
    for (size_t n = 0; n < static_cast<size_t>(node_count); ++n) entry_read_begin_[n + 1] += entry_read_begin_[n];
  }
  output_begin_.push_back(static_cast<int32_t>(outputs_.size()));
  read_begin_.push_back(static_cast<int32_t>(reads_.size()));
  for (const auto& o : graph.output()) output_ids.push_back(names_.Intern(o.name()));
  for (const auto& entry : graph.equivalent_subgraph()) {
    for (const auto& in : entry.input()) {
      if (!in.empty()) names_.Intern(in);
    }
    for (const auto& out : entry.output()) {
      if (!out.empty()) names_.Intern(out);
    }
  }

  const auto values = static_cast<size_t>(names_.size());
  producer_.assign(values, -1);
  flags_.assign(values, 0);
  initializer_.assign(values, nullptr);
  for (int32_t id : input_ids) flags_[static_cast<size_t>(id)] |= kGraphInput;
  for (int i = 0; i < graph.initializer_size(); ++i) {
    const auto id = static_cast<size_t>(initializer_ids[static_cast<size_t>(i)]);
    flags_[id] |= kInitializer;
    initializer_[id] = &graph.initializer(i);
  }
  for (int32_t n = 0; n < node_count; ++n) {
    for (int32_t id : outputs(n)) {
      if (id < 0) continue;
      flags_[static_cast<size_t>(id)] |= kNodeOutput;
      producer_[static_cast<size_t>(id)] = n;
    }
  }
  for (int32_t id : output_ids) flags_[static_cast<size_t>(id)] |= kGraphOutput;
  for (int32_t id : nested_entry_ids) flags_[static_cast<size_t>(id)] |= kNestedEntryRead;

  // Readers by value, as offsets into one array (counting sort).
  consumer_begin_.assign(values + 1, 0);
  for (int32_t id : reads_) ++consumer_begin_[static_cast<size_t>(id) + 1];
  for (size_t v = 0; v < values; ++v) consumer_begin_[v + 1] += consumer_begin_[v];
  consumers_.resize(reads_.size());
  std::vector<int32_t> fill(consumer_begin_.begin(), consumer_begin_.end() - 1);
  for (int32_t n = 0; n < node_count; ++n) {
    for (int32_t id : reads(n)) consumers_[static_cast<size_t>(fill[static_cast<size_t>(id)]++)] = n;
  }
  ComputePositions();
}

void GraphIndex::ComputePositions() {
  const int32_t node_count = this->node_count();
  bool sorted = true;
  for (int32_t n = 0; n < node_count && sorted; ++n) {
    for (int32_t id : reads(n)) {
      if (producer(id) >= n) {
        sorted = false;
        break;
      }
    }
  }
  if (sorted) return;
  // The IR allows a node list out of order; rank the nodes by a stable
  // topological order (smallest index first) so that the walks can still
  // bound themselves by rank.
  std::vector<int32_t> ids(static_cast<size_t>(node_count));
  std::iota(ids.begin(), ids.end(), 0);
  const std::vector<int32_t> order = StableTopologicalSort(
      ids, static_cast<size_t>(node_count),
      [&](int32_t n, auto&& depend) {
        for (int32_t id : reads(n)) {
          if (producer(id) >= 0) depend(producer(id));
        }
      },
      [](int32_t n) { return n; });
  position_.assign(static_cast<size_t>(node_count), -1);
  int32_t rank = 0;
  for (int32_t n : order) position_[static_cast<size_t>(n)] = rank++;
  // A cycle is ValidateModel's to report; its nodes rank last.
  for (int32_t n = 0; n < node_count; ++n) {
    if (position_[static_cast<size_t>(n)] < 0) position_[static_cast<size_t>(n)] = rank++;
  }
}

bool GraphIndex::Visible(std::string_view name) const {
  for (const GraphIndex* g = this; g; g = g->parent_) {
    const int32_t id = g->Find(name);
    if (id >= 0 && g->defined_here(id)) return true;
  }
  return false;
}

std::optional<GraphIndex::LateOuterValue> GraphIndex::LateOuter(std::string_view name) const {
  for (const GraphIndex* g = this; g->parent_; g = g->parent_) {
    const int32_t own = g->Find(name);
    if (own >= 0 && g->defined_here(own)) return std::nullopt;
    const GraphIndex* outer = g->parent_;
    const int32_t id = outer->Find(name);
    if (id < 0 || !outer->defined_here(id)) continue;
    const int32_t producer = outer->producer(id);
    // Positions are a topological rank: a node ranked before the holder
    // cannot be computed from it.
    if (producer >= 0 && outer->position(producer) >= outer->position(g->holder_)) {
      return LateOuterValue{outer, producer, g->holder_};
    }
    return std::nullopt;
  }
  return std::nullopt;
}

uint32_t GraphIndex::NextEpoch() {
  const auto nodes = static_cast<size_t>(node_count());
  const auto values = static_cast<size_t>(value_count());
  if (node_mark_.size() != nodes) {
    node_mark_.assign(nodes, 0);
    node_seen_.assign(nodes, 0);
    node_back_.assign(nodes, 0);
    origin_.assign(nodes, -1);
  }
  if (value_mark_.size() != values) value_mark_.assign(values, 0);
  if (++epoch_ == 0) {  // wrapped: old marks could match again
    std::fill(node_mark_.begin(), node_mark_.end(), 0);
    std::fill(node_seen_.begin(), node_seen_.end(), 0);
    std::fill(node_back_.begin(), node_back_.end(), 0);
    std::fill(value_mark_.begin(), value_mark_.end(), 0);
    epoch_ = 1;
  }
  return epoch_;
}

void GraphIndex::MarkAncestors(int32_t n) {
  ancestor_epoch_ = NextEpoch();
  std::vector<int32_t> stack = {n};
  while (!stack.empty()) {
    const int32_t node = stack.back();
    stack.pop_back();
    for (int32_t v : reads(node)) {
      const int32_t maker = producer(v);
      if (maker < 0 || node_mark_[static_cast<size_t>(maker)] == ancestor_epoch_) continue;
      node_mark_[static_cast<size_t>(maker)] = ancestor_epoch_;
      stack.push_back(maker);
    }
  }
}

GraphIndex::Region GraphIndex::FindRegion(std::span<const int32_t> inputs, std::span<const int32_t> outputs) {
  const uint32_t epoch = NextEpoch();
  for (int32_t v : inputs) {
    if (v >= 0) value_mark_[static_cast<size_t>(v)] = epoch;
  }
  Region region;
  std::vector<int32_t> stack;
  auto reach = [&](int32_t node) {
    if (node_mark_[static_cast<size_t>(node)] == epoch) return;
    node_mark_[static_cast<size_t>(node)] = epoch;
    stack.push_back(node);
  };
  for (int32_t v : outputs) {
    if (v >= 0 && producer(v) >= 0) reach(producer(v));
  }
  while (!stack.empty()) {
    const int32_t n = stack.back();
    stack.pop_back();
    region.nodes.push_back(n);
    for (int32_t v : reads(n)) {
      if (value_mark_[static_cast<size_t>(v)] == epoch) continue;  // an entry input: the cut
      if (producer(v) >= 0) {
        reach(producer(v));
      } else if (!(initializer(v) && !is_graph_input(v)) && region.open_value < 0) {
        // Neither made by a node nor a constant: a graph input (one with a
        // default initializer can still be fed) or a value of an outer scope.
        region.open_value = v;
      }
    }
  }
  std::sort(region.nodes.begin(), region.nodes.end());
  return region;
}

std::optional<std::pair<int32_t, int32_t>> GraphIndex::NonConvexInput(std::span<const int32_t> region,
                                                                     std::span<const int32_t> inputs) {
  const uint32_t epoch = NextEpoch();
  for (int32_t n : region) node_mark_[static_cast<size_t>(n)] = epoch;
  int32_t last = -1;  // the largest rank of an input's producer outside the region
  for (int32_t v : inputs) {
    if (v < 0) continue;
    value_mark_[static_cast<size_t>(v)] = epoch;
    const int32_t p = producer(v);
    if (p < 0) continue;
    if (node_mark_[static_cast<size_t>(p)] == epoch) return std::make_pair(v, v);  // made inside the region
    last = std::max(last, position(p));
  }
  if (last < 0) return std::nullopt;
  // Forward from the region through nodes outside it. A node ranked after
  // every input's producer cannot lead to one, so the walk stays near the cut.
  // Alongside it, one step each, a walk back from the inputs' producers
  // outside the region, never before the region's first rank: when that one
  // ends without meeting the region, the cut is convex, so an input made
  // late does not cost a walk over everything between. The forward walk
  // alone names the input and the region value, so it finishes the job
  // when the backward one finds the cut is not convex.
  int32_t first = position(region.front());
  for (int32_t n : region) first = std::min(first, position(n));
  std::vector<int32_t> back;
  for (int32_t v : inputs) {
    const int32_t p = v < 0 ? -1 : producer(v);
    if (p < 0 || position(p) < first || node_back_[static_cast<size_t>(p)] == epoch) continue;
    node_back_[static_cast<size_t>(p)] = epoch;
    back.push_back(p);
  }
  if (back.empty()) return std::nullopt;  // every input made before the region
  bool backward_open = true;  // false once the backward walk found the region
  std::vector<int32_t> queue(region.begin(), region.end());
  for (size_t i = 0; i < queue.size(); ++i) {
    if (backward_open && !back.empty()) {
      const int32_t u = back.back();
      back.pop_back();
      for (int32_t v : reads(u)) {
        const int32_t p = producer(v);
        if (p < 0 || position(p) < first || node_back_[static_cast<size_t>(p)] == epoch) continue;
        if (node_mark_[static_cast<size_t>(p)] == epoch) {
          backward_open = false;
          break;
        }
        node_back_[static_cast<size_t>(p)] = epoch;
        back.push_back(p);
      }
      if (backward_open && back.empty()) return std::nullopt;  // nothing outside leads from the region to an input
    }
    const int32_t u = queue[i];
    const bool in_region = node_mark_[static_cast<size_t>(u)] == epoch;
    for (int32_t w : outputs(u)) {
      if (w < 0) continue;
      const int32_t source = in_region ? w : origin_[static_cast<size_t>(u)];
      for (int32_t c : consumers(w)) {
        const auto cs = static_cast<size_t>(c);
        if (node_mark_[cs] == epoch || node_seen_[cs] == epoch || position(c) > last) continue;
        node_seen_[cs] = epoch;
        origin_[cs] = source;
        for (int32_t x : outputs(c)) {
          if (x >= 0 && value_mark_[static_cast<size_t>(x)] == epoch) return std::make_pair(x, source);
        }
        queue.push_back(c);
      }
    }
  }
  return std::nullopt;
}

}  // namespace parity::graph
