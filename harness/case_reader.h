// Reading conformance cases in the ONNX backend-test layout:
//   <case>/model.onnx
//   <case>/test_data_set_N/input_K.pb, output_K.pb
//   <case>/case.json   (optional metadata: tags, tolerance override, steps, ...;
//                       harness/case_file.h, spec/case.schema.json)
// A stateful case (case.json "steps") runs its data sets as the steps of one
// session, in order, carrying outputs into the next step's inputs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/case_file.h"
#include "reference/core/value.h"
#include "reference/model/loader.h"

namespace parity {

struct DataSet {
  std::string dir;
  std::vector<Value> inputs;
  std::vector<Value> outputs;  // expected
  // The graph input / output index of each file present, in order: 0, 1, 2...
  // except in a stateful case, where a carried value's file may be absent.
  // input_index is filled even when the inputs themselves are not read.
  std::vector<int> input_index;
  std::vector<int> output_index;
};

// One value a stateful case keeps between steps: after step k, graph output
// `output` is graph input `input` of step k+1 (case.json
// "steps": {"carry": [{"output", "input"}, ...]}).
struct StateCarry {
  std::string output;
  std::string input;
  int output_index = -1;  // in the graph's outputs
  int input_index = -1;   // in the graph's inputs
};

struct CaseInfo {
  std::string name;       // folder name
  std::string suite;      // parent folder name
  std::string dir;
  CaseFile case_file;  // case.json, parsed by ReadCaseMeta; empty without one
};

// Case folders under each root: a root that is itself a case is taken alone;
// otherwise every folder below it (recursively) holding a model.onnx. Sorted
// by path; a folder that overlapping roots find twice is listed once.
StatusOr<std::vector<CaseInfo>> DiscoverCases(const std::vector<std::string>& roots);

// Reads and checks case.json (if any) into info.case_file. A file that is not
// JSON, an unknown key, a value of the wrong type or an unknown enum value is
// an error naming the file and the key path (ParseCaseFile): the case's
// fault, which a run reports as ERROR.
Status ReadCaseMeta(CaseInfo& info);

// Whether case.json makes the case stateful (it has "steps").
bool IsStateful(const CaseInfo& info);

// The carried values of case.json "steps" (empty when the case has none),
// with their graph indices: each "output" must name a graph output and each
// "input" a graph input (the file's own shape is checked by ParseCaseFile).
// Errors name the case and the bad entry.
StatusOr<std::vector<StateCarry>> ReadStepCarries(const CaseInfo& info, const onnx::GraphProto& graph);

// Reads the data sets of a case, in order, against the model's declared input
// and output types; without `read_inputs`, only the expected outputs (a worker
// gets the input files' bytes as they are).
//
// Each value read is checked against the graph's declared type (kind,
// element type, rank, fixed dimensions); a mismatch is an error naming the
// file: the case's fault, reported ERROR, never the backend's.
//
// A plain case reads input_K up to the first K missing, and needs an
// output_K for every graph output (else an error naming the missing file). A stateful
// case reads every K below the graph's input / output count that exists, and
// allows two gaps only: a carried input's file at steps >= 1 (it comes from
// the state) and a carried output's expected file at any step (not compared
// then); any other missing file is an error. It also checks that the steps
// agree: where step k >= 1 holds a carried input's file and step k-1 its
// output's file, both hold the same value bit for bit, else the error says
// "case is inconsistent: ...".
// `outputs_required` false lets a plain case's data sets hold no expected
// outputs at all (parity expect, which writes them); partial sets stay errors.
StatusOr<std::vector<DataSet>> ReadDataSets(const CaseInfo& info, const onnx::ModelProto& model,
                                            bool read_inputs = true, bool outputs_required = true);

// The operator a case is about: the op_type of a one-node model, or else the
// case name's operator stem ("test_attention_4d_expanded" -> first node's
// op in the original single-node form is unknown, so the most frequent
// non-trivial op). Used for tolerance families and per-operator counts.
std::string CaseOperator(const CaseInfo& info, const onnx::ModelProto& model);

}  // namespace parity
