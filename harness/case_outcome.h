// How a case's outputs become its state: the comparison of each data set's
// actual outputs with the expected ones under the tolerance policy, and the
// expectations file's say on the outcome. Shared by `parity eval` (the
// reference in process) and `parity run` (any adapter through a worker).
#pragma once

#include <map>

#include <string_view>
#include <vector>

#include "harness/case_reader.h"
#include "harness/compare.h"
#include "harness/error_budget.h"
#include "harness/expectations.h"
#include "harness/results/results.h"
#include "harness/shape_facts.h"

namespace parity {

// Compares one data set; records per-output statistics in r.outputs
// (replacing those of an earlier data set) and moves r.state from PASS to
// FAIL, MISTRUSTED or ERROR (a bad tolerance override in case.json) as due.
// `output_names` are the graph's output names, for messages; `actual[k]` is
// the value of set.outputs[k], graph output set.output_index[k]. `facts` are the
// data set's shape facts (harness/shape_facts.h), which the policy's formulas
// scale with; each output's journal entry records them as "shape_facts" when
// they are not both 1. Returns false when the case is decided and later data
// sets need not run.
//
// case.json may name the operator of single outputs, "output_operators":
// {"y": "Attention"}, when outputs of one case come from operators of other
// tolerance families (a cache written by TensorScatter is exact; the
// attention output beside it is not). `output_facts` holds the shape facts
// for each such operator (OutputOperatorFacts); without an entry, an output
// takes the case's operator and `facts`.
//
// `runs` (the reference on this data set's inputs; null where it cannot run
// them alone, as in a step of a stateful case whose carried inputs come from
// the session) gives the error budget of an output that fails its tolerance
// (spec/tolerance.md, "Error budgets"), and the reference's outputs that
// a case whose expected values come from elsewhere is also judged against
// ("Expected outputs from elsewhere"). Each output's journal entry says
// which term decided it ("decided_by").
using OutputFacts = std::map<std::string, ShapeFacts, std::less<>>;
bool CompareDataSet(const DataSet& set, const std::vector<Value>& actual, const std::vector<std::string>& output_names,
                    const TolerancePolicy& policy, const ShapeFacts& facts, const CaseInfo& info,
                    std::string_view adapter, CaseResult& r, const OutputFacts& output_facts = {},
                    ReferenceRuns* runs = nullptr);

// The shape facts of every operator case.json's "output_operators" names,
// for the data set whose inputs filled `dims` and `ints`.
OutputFacts OutputOperatorFacts(const CaseInfo& info, const onnx::ModelProto& model, const KnownDims& dims,
                                const KnownInts& ints);

// Turns an outcome into its expected form when an expectations entry covers
// it (FAIL -> XFAIL; PASS -> XPASS). Returns false when the gate must see
// the case: an uncovered non-pass, an XPASS, or a case that an entry names
// but that ended in another state than the entry expects.
bool ApplyExpectation(CaseResult& r, const Expectations* expectations);

}  // namespace parity
