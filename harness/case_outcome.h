// How a case's outputs become its state: the comparison of each data set's
// actual outputs with the expected ones under the tolerance policy, and the
// expectations file's say on the outcome. Shared by `parity eval` (the
// reference in process) and `parity run` (any adapter through a worker).
#pragma once

#include <string_view>
#include <vector>

#include "harness/case_reader.h"
#include "harness/compare.h"
#include "harness/expectations.h"
#include "harness/results.h"

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
bool CompareDataSet(const DataSet& set, const std::vector<Value>& actual, const std::vector<std::string>& output_names,
                    const TolerancePolicy& policy, const ShapeFacts& facts, const CaseInfo& info,
                    std::string_view adapter, CaseResult& r);

// Turns an outcome into its expected form when an expectations entry covers
// it (FAIL -> XFAIL; PASS -> XPASS). Returns false when the gate must see
// the case: an uncovered non-pass, an XPASS, or a case that an entry names
// but that ended in another state than the entry expects.
bool ApplyExpectation(CaseResult& r, const Expectations* expectations);

}  // namespace parity
