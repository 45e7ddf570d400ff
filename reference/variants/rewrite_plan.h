// Internal to reference/variants: the rewrite of one graph for a set of
// taken entries (steps 3 to 5 of ResolveVariants in variants.h) before any
// proto is touched: which region nodes stay because something outside still
// reads them, and the order of the rewritten graph, or a cycle through calls.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "reference/variants/analysis.h"

namespace parity::variants_internal {

// One taken entry of the graph; its place in the list is its "slot".
struct TakenEntry {
  int entry = 0;  // index in CollectEntries order
  int rank = 0;   // smaller is preferred
  const EntryAnalysis* analysis = nullptr;
};

class RewritePlan {
 public:
  // `owner[n]` is the slot of the taken entry whose region holds node n, or -1.
  RewritePlan(const GraphIndex& index, std::span<const TakenEntry> taken, std::span<const int32_t> owner)
      : index_(index), taken_(taken), owner_(owner) {}

  // Decides which region nodes stay and sorts the rewritten graph. False
  // when it has a cycle; cycle_slots() then lists the slots of the calls on
  // one cycle.
  bool Build();

  // Rewritten node ids: n < node_count() is original node n; node_count() + s
  // is the call of slot s.
  const std::vector<int32_t>& order() const { return order_; }
  bool keeps(int32_t node) const { return keep_[static_cast<size_t>(node)] != 0; }
  // The slot whose call makes `value` (an entry output), or -1.
  int32_t provider(int32_t value) const { return provider_[static_cast<size_t>(value)]; }
  const std::vector<int32_t>& cycle_slots() const { return cycle_slots_; }

  // After Build() failed: other cycles that dropping the lower-ranked of two
  // calls settles the same way whatever else is dropped, as (drop, keep)
  // slot pairs. Each is a strongly connected component of the calls and
  // nodes left unsorted with exactly two calls (a cycle holds two at least,
  // so any cycle found in it later holds both), that depends on nothing
  // else left unsorted and that the cycle_slots() cycle does not depend on
  // (so no other drop changes which of its nodes stay), and whose dropped
  // call has no region node with entries reading through it (the one way a
  // drop revives nodes elsewhere). Dropping them together with the
  // cycle_slots() one gives what dropping them one by one would, in one
  // rebuild instead of one each.
  std::vector<std::pair<int32_t, int32_t>> IndependentPairCycles() const;

 private:
  void DecideLiveness();
  template <typename F>
  void ForEachDependency(int32_t id, F&& f) const;
  int64_t Key(int32_t id) const;
  bool SortByKeys();
  bool SortTopologically();

  const GraphIndex& index_;
  std::span<const TakenEntry> taken_;
  std::span<const int32_t> owner_;
  std::vector<uint8_t> keep_;
  std::vector<int32_t> provider_;
  std::vector<int32_t> order_;
  std::vector<int32_t> cycle_slots_;
  std::vector<int32_t> cycle_path_;  // the rewritten nodes of that cycle
  std::vector<uint8_t> emitted_;     // by rewritten node: sorted before the sort got stuck
};

}  // namespace parity::variants_internal
