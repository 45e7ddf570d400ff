// Expectations files: what an adapter is known not to pass, each entry with
// a case pattern and a reason (IREE's CTS habit: two kinds of exclusion).
//   unsupported — permanent: the adapter cannot run these cases;
//   xfail       — temporary: the case is known to fail; a pass is an XPASS,
//                 which fails the gate so the stale entry gets removed.
//
//   {"adapter": "reference",
//    "unsupported": [{"cases": "test_col2im*", "reason": "op not implemented: Col2Im"}],
//    "xfail": [{"cases": ["test_foo", "test_bar*"], "reason": "...", "state": "MISTRUSTED"}]}
//
// "cases" is one shell glob on case names, or a list of them sharing the reason.
//
// "state" names the state the case is expected to end in: UNSUPPORTED for
// unsupported entries, FAIL (shown as XFAIL) or MISTRUSTED for xfail ones;
// a case that ends in any other state is not covered by its entry.
#pragma once

#include <string>
#include <vector>

#include "reference/core/status.h"

namespace parity {

struct ExpectationEntry {
  std::vector<std::string> globs;  // shell globs on the case name
  std::string pattern;             // the globs as one label, for messages
  std::string reason;
  bool unsupported = false;  // else xfail
  std::string state;         // the expected state's name (see above)
  mutable int matched = 0;   // how many cases it matched in this run
};

class Expectations {
 public:
  // `paths`: one file, or several separated by commas (one per suite),
  // whose entries are joined in order.
  static StatusOr<Expectations> Load(const std::string& paths);
  // The first entry whose pattern matches the case name, or null.
  const ExpectationEntry* Find(const std::string& case_name) const;
  const std::vector<ExpectationEntry>& entries() const { return entries_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::vector<ExpectationEntry> entries_;
};

}  // namespace parity
