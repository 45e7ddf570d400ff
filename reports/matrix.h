// What the Markdown and HTML reports draw: the suite × operator by
// adapter@device matrix (counts of each state per cell, NOT RUN where a cell
// was expected but has no result), run facts, failing cases and load times.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "reports/run_data.h"

namespace parity {

enum class CellKind {
  kEmpty,   // the run neither planned nor ran anything here, and no other run planned it
  kNotRun,  // expected here (planned by this run or another) but nothing ran
  kPass,    // every case ran and passed
  kFail,    // some case fails the gate (FAIL, CRASH, TIMEOUT, FELL_BACK, XPASS, or unforeseen)
  kMixed,   // no gate failure, but not all PASS (UNSUPPORTED, ERROR, NOT RUN, ...)
};

struct MatrixCell {
  std::map<std::string, int> states;  // state -> count of results
  int not_run = 0;                    // planned cases of this run without a result
  int absent = 0;  // rows planned by another run but absent from this run's plan and results
  int gate_failures = 0;  // results that the gate counts (CountsForGate)

  int Pass() const;
  int Total() const;  // results and NOT RUN cases
  CellKind Kind() const;
  // "FAIL 2, NOT RUN 1": the non-pass counts, for a tooltip or a note.
  std::string NonPassText() const;
  void Add(const MatrixCell& other);
};

struct MatrixRow {
  std::string suite;
  std::string op;
  std::vector<MatrixCell> cells;  // one per run, in the order of the runs
};

struct Matrix {
  std::vector<std::string> columns;  // run labels
  std::vector<MatrixRow> rows;       // sorted by suite, then operator, in natural order
  // Per suite, in the order of `rows`: the sum of its rows per column.
  std::vector<MatrixRow> suites;
  // A suite's rows: rows[first_row[i] .. first_row[i] + row_count[i]).
  std::vector<size_t> first_row;
  std::vector<size_t> row_count;
};

Matrix BuildMatrix(const std::vector<RunData>& runs);

// The cases a report lists as failing (IsListedFailure), most severe
// state first, then by suite and case.
std::vector<const CaseResult*> ListedFailures(const RunData& run);

// Run facts for a report's first table: (what, one value per run), raw text.
using FactRows = std::vector<std::pair<std::string, std::vector<std::string>>>;
FactRows RunFacts(const std::vector<RunData>& runs);

// The rows of the table "Variant models: session creation against the same
// model without entries": (what, one formatted value per run); empty when no
// run measured a stripped twin.
FactRows VariantLoadRows(const std::vector<RunData>& runs);

// Session creation times of one run, in milliseconds.
struct LoadTimes {
  std::vector<double> cold;         // per case, sorted
  std::vector<double> warm_median;  // per case, sorted
  static LoadTimes Of(const RunData& run);
  double ColdMedian() const;  // NaN when there are none
  double WarmMedian() const;
};

}  // namespace parity
