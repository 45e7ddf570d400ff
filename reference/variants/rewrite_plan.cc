// Liveness and ordering of a rewritten graph (rewrite_plan.h).
#include "reference/variants/rewrite_plan.h"

#include <algorithm>
#include <queue>
#include <utility>

namespace parity::variants_internal {

bool RewritePlan::Build() {
  DecideLiveness();
  if (SortByKeys()) return true;
  return SortTopologically();
}

// A region node stays when a value it makes, other than one its entry's call
// makes, is read by something that stays: a node outside every region, a
// call (another entry's input), a graph output, or a region node of its
// own entry that stays. The last makes this a walk back from the first ones.
//
// An entry of a subgraph of a node that stays counts as a reader too,
// whether or not it is taken later: subgraphs are resolved after this
// graph, and an entry taken there reads the value by name. (A kept region
// node's nested entry reads its own entry's outputs under their new names,
// like the node itself; a removed node's entries are never reached.)
void RewritePlan::DecideLiveness() {
  const int32_t node_count = index_.node_count();
  provider_.assign(static_cast<size_t>(index_.value_count()), -1);
  keep_.assign(static_cast<size_t>(node_count), 1);
  for (size_t s = 0; s < taken_.size(); ++s) {
    for (int32_t v : taken_[s].analysis->outputs) provider_[static_cast<size_t>(v)] = static_cast<int32_t>(s);
    for (int32_t n : taken_[s].analysis->region) keep_[static_cast<size_t>(n)] = 0;
  }
  std::vector<int32_t> work;
  auto revive = [&](int32_t n) {
    if (keep_[static_cast<size_t>(n)]) return;
    keep_[static_cast<size_t>(n)] = 1;
    work.push_back(n);
  };
  // A node of region `reader_slot` (-1: of none) stays, and an entry of its subgraphs reads `v`.
  auto entry_read = [&](int32_t reader_slot, int32_t v) {
    const int32_t p = index_.producer(v);
    if (p < 0) return;
    const int32_t owner = owner_[static_cast<size_t>(p)];
    if (owner >= 0 && (owner == reader_slot || provider_[static_cast<size_t>(v)] < 0)) revive(p);
  };
  for (int32_t n : index_.subgraph_nodes()) {
    if (owner_[static_cast<size_t>(n)] >= 0) continue;  // a region node's entries count once it stays
    for (int32_t v : index_.entry_reads(n)) entry_read(-1, v);
  }
  for (size_t s = 0; s < taken_.size(); ++s) {
    const auto slot = static_cast<int32_t>(s);
    for (int32_t n : taken_[s].analysis->region) {
      for (int32_t w : index_.outputs(n)) {
        if (w < 0 || provider_[static_cast<size_t>(w)] == slot) continue;
        bool read_outside = index_.is_graph_output(w);
        for (int32_t c : index_.consumers(w)) {
          // A reader in another region reads `w` as that entry's input, which its call reads too.
          if (read_outside) break;
          read_outside = owner_[static_cast<size_t>(c)] != slot;
        }
        if (read_outside) {
          revive(n);
          break;
        }
      }
    }
    // Inputs no region node reads are still read by the call.
    for (int32_t x : taken_[s].analysis->inputs) {
      if (x < 0 || provider_[static_cast<size_t>(x)] >= 0) continue;
      const int32_t p = index_.producer(x);
      if (p >= 0 && owner_[static_cast<size_t>(p)] >= 0 && owner_[static_cast<size_t>(p)] != slot) revive(p);
    }
  }
  while (!work.empty()) {
    const int32_t n = work.back();
    work.pop_back();
    const int32_t slot = owner_[static_cast<size_t>(n)];
    for (int32_t v : index_.reads(n)) {
      const int32_t p = index_.producer(v);
      if (p >= 0 && owner_[static_cast<size_t>(p)] == slot) revive(p);
    }
    for (int32_t v : index_.entry_reads(n)) entry_read(slot, v);
  }
}

// What rewritten node `id` reads from: a kept region node reads its own
// entry's outputs from the nodes that stay and make them (under new names);
// every other reader of an entry output reads the call. What entries of a
// node's subgraphs read counts too, so that one taken later finds its
// inputs made before the node; only values made before the node in the
// original graph, though: an entry reading one made after it (or from it)
// could never be taken in order, and must not make this graph unsortable.
template <typename F>
void RewritePlan::ForEachDependency(int32_t id, F&& f) const {
  const int32_t node_count = index_.node_count();
  if (id < node_count) {
    const int32_t slot = owner_[static_cast<size_t>(id)];
    auto depend = [&](int32_t v, bool entry_read) {
      const int32_t p = index_.producer(v);
      if (p < 0 || (entry_read && index_.position(p) >= index_.position(id))) return;
      const int32_t made_by = provider_[static_cast<size_t>(v)];
      f(made_by >= 0 && made_by != slot ? node_count + made_by : p);
    };
    for (int32_t v : index_.reads(id)) depend(v, false);
    for (int32_t v : index_.entry_reads(id)) depend(v, true);
    return;
  }
  for (int32_t x : taken_[static_cast<size_t>(id - node_count)].analysis->inputs) {
    if (x < 0) continue;
    const int32_t made_by = provider_[static_cast<size_t>(x)];
    if (made_by >= 0) {
      f(node_count + made_by);
    } else if (index_.producer(x) >= 0) {
      f(index_.producer(x));
    }
  }
}

// A node keeps its original position; a call takes the smallest position in
// its region and comes after a node of that position that stays.
int64_t RewritePlan::Key(int32_t id) const {
  const int32_t node_count = index_.node_count();
  if (id < node_count) return int64_t{id} * 2;
  return int64_t{taken_[static_cast<size_t>(id - node_count)].analysis->region.front()} * 2 + 1;
}

// The common case: the rewritten graph in key order is already topological
// (a call's inputs come before its region, its readers after), so one pass
// checks it and no heap is needed.
bool RewritePlan::SortByKeys() {
  const int32_t node_count = index_.node_count();
  std::vector<std::pair<int64_t, int32_t>> calls;
  for (size_t s = 0; s < taken_.size(); ++s) {
    const int32_t id = node_count + static_cast<int32_t>(s);
    calls.emplace_back(Key(id), id);
  }
  std::sort(calls.begin(), calls.end());
  order_.clear();
  order_.reserve(static_cast<size_t>(node_count) + calls.size());
  size_t next_call = 0;
  for (int32_t n = 0; n < node_count; ++n) {
    while (next_call < calls.size() && calls[next_call].first < Key(n)) order_.push_back(calls[next_call++].second);
    if (keep_[static_cast<size_t>(n)]) order_.push_back(n);
  }
  while (next_call < calls.size()) order_.push_back(calls[next_call++].second);

  std::vector<int32_t> at(static_cast<size_t>(node_count) + taken_.size(), -1);
  for (size_t k = 0; k < order_.size(); ++k) at[static_cast<size_t>(order_[k])] = static_cast<int32_t>(k);
  for (size_t k = 0; k < order_.size(); ++k) {
    bool ok = true;
    ForEachDependency(order_[k], [&](int32_t d) { ok = ok && at[static_cast<size_t>(d)] < static_cast<int32_t>(k); });
    if (!ok) return false;
  }
  return true;
}

// Kahn's algorithm taking the smallest key among the ready nodes, so the
// order stays as close to the original as the dependencies allow.
bool RewritePlan::SortTopologically() {
  const auto total = static_cast<size_t>(index_.node_count()) + taken_.size();
  std::vector<int32_t> sorted = graph::StableTopologicalSort(
      order_, total, [&](int32_t id, auto&& depend) { ForEachDependency(id, depend); },
      [&](int32_t id) { return Key(id); }, &emitted_);
  const std::vector<uint8_t>& emitted = emitted_;
  if (sorted.size() == order_.size()) {
    order_ = std::move(sorted);
    return true;
  }
  // Every node left waits for another node left: walking back through
  // those must come round to a node already seen, which closes a cycle.
  int32_t current = -1;
  for (int32_t id : order_) {
    if (!emitted[static_cast<size_t>(id)]) {
      current = id;
      break;
    }
  }
  std::vector<int32_t> seen_at(total, -1), path;
  cycle_slots_.clear();
  cycle_path_.clear();
  while (current >= 0 && seen_at[static_cast<size_t>(current)] < 0) {
    seen_at[static_cast<size_t>(current)] = static_cast<int32_t>(path.size());
    path.push_back(current);
    int32_t next = -1;
    ForEachDependency(current, [&](int32_t d) {
      if (next < 0 && !emitted[static_cast<size_t>(d)]) next = d;
    });
    current = next;
  }
  if (current < 0) return false;  // not reached: a node left always waits for another
  for (size_t k = static_cast<size_t>(seen_at[static_cast<size_t>(current)]); k < path.size(); ++k) {
    cycle_path_.push_back(path[k]);
    if (path[k] >= index_.node_count()) cycle_slots_.push_back(path[k] - index_.node_count());
  }
  return false;
}

std::vector<std::pair<int32_t, int32_t>> RewritePlan::IndependentPairCycles() const {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  if (cycle_path_.empty()) return pairs;
  const int32_t node_count = index_.node_count();
  // The nodes left unsorted, numbered locally, and what each depends on among them.
  std::vector<int32_t> stuck;
  std::vector<int32_t> local(emitted_.size(), -1);
  for (int32_t id : order_) {
    if (emitted_[static_cast<size_t>(id)]) continue;
    local[static_cast<size_t>(id)] = static_cast<int32_t>(stuck.size());
    stuck.push_back(id);
  }
  const size_t count = stuck.size();
  std::vector<int32_t> edge_begin(count + 1, 0), edges;
  for (size_t k = 0; k < count; ++k) {
    ForEachDependency(stuck[k], [&](int32_t d) {
      if (local[static_cast<size_t>(d)] >= 0) edges.push_back(local[static_cast<size_t>(d)]);
    });
    edge_begin[k + 1] = static_cast<int32_t>(edges.size());
  }
  // Tarjan's components, with an explicit stack (graphs can be deep).
  std::vector<int32_t> component(count, -1), low(count, 0), visit(count, -1), members;
  std::vector<uint8_t> on_stack(count, 0);
  std::vector<std::pair<int32_t, int32_t>> frames;  // node, next edge
  int32_t clock = 0, components = 0;
  for (size_t root = 0; root < count; ++root) {
    if (visit[root] >= 0) continue;
    frames.emplace_back(static_cast<int32_t>(root), edge_begin[root]);
    visit[root] = low[root] = clock++;
    members.push_back(static_cast<int32_t>(root));
    on_stack[root] = 1;
    while (!frames.empty()) {
      auto& [u, next] = frames.back();
      const auto us = static_cast<size_t>(u);
      if (next < edge_begin[us + 1]) {
        const auto w = static_cast<size_t>(edges[static_cast<size_t>(next++)]);
        if (visit[w] < 0) {
          visit[w] = low[w] = clock++;
          members.push_back(static_cast<int32_t>(w));
          on_stack[w] = 1;
          frames.emplace_back(static_cast<int32_t>(w), edge_begin[w]);
        } else if (on_stack[w]) {
          low[us] = std::min(low[us], visit[w]);
        }
        continue;
      }
      if (low[us] == visit[us]) {
        int32_t m;
        do {
          m = members.back();
          members.pop_back();
          on_stack[static_cast<size_t>(m)] = 0;
          component[static_cast<size_t>(m)] = components;
        } while (m != u);
        ++components;
      }
      const int32_t done = u;
      frames.pop_back();
      if (!frames.empty()) {
        const auto parent = static_cast<size_t>(frames.back().first);
        low[parent] = std::min(low[parent], low[static_cast<size_t>(done)]);
      }
    }
  }
  // Components the found cycle depends on (its own included) are left to later rounds.
  std::vector<uint8_t> excluded(static_cast<size_t>(components), 0), reached(count, 0);
  std::vector<int32_t> work;
  for (int32_t id : cycle_path_) {
    const int32_t k = local[static_cast<size_t>(id)];
    if (k >= 0 && !reached[static_cast<size_t>(k)]) {
      reached[static_cast<size_t>(k)] = 1;
      work.push_back(k);
    }
  }
  while (!work.empty()) {
    const auto k = static_cast<size_t>(work.back());
    work.pop_back();
    excluded[static_cast<size_t>(component[k])] = 1;
    for (int32_t e = edge_begin[k]; e < edge_begin[k + 1]; ++e) {
      const auto w = static_cast<size_t>(edges[static_cast<size_t>(e)]);
      if (!reached[w]) {
        reached[w] = 1;
        work.push_back(static_cast<int32_t>(w));
      }
    }
  }
  std::vector<int32_t> size(static_cast<size_t>(components), 0), calls(static_cast<size_t>(components), 0);
  std::vector<std::pair<int32_t, int32_t>> call_slots(static_cast<size_t>(components), {-1, -1});
  for (size_t k = 0; k < count; ++k) {
    const auto c = static_cast<size_t>(component[k]);
    ++size[c];
    for (int32_t e = edge_begin[k]; e < edge_begin[k + 1]; ++e) {
      if (component[static_cast<size_t>(edges[static_cast<size_t>(e)])] != component[k]) excluded[c] = 1;  // not a source
    }
    if (stuck[k] >= node_count) {
      const int32_t slot = stuck[k] - node_count;
      (calls[c]++ == 0 ? call_slots[c].first : call_slots[c].second) = slot;
    }
  }
  for (size_t c = 0; c < static_cast<size_t>(components); ++c) {
    if (excluded[c] || size[c] < 2 || calls[c] != 2) continue;
    auto [drop, keep] = call_slots[c];
    if (taken_[static_cast<size_t>(drop)].rank < taken_[static_cast<size_t>(keep)].rank) std::swap(drop, keep);
    bool reads_through = false;
    for (int32_t n : taken_[static_cast<size_t>(drop)].analysis->region) reads_through |= !index_.entry_reads(n).empty();
    if (!reads_through) pairs.emplace_back(drop, keep);
  }
  return pairs;
}

}  // namespace parity::variants_internal
