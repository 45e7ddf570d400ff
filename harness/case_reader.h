// Reading conformance cases in the ONNX backend-test layout:
//   <case>/model.onnx
//   <case>/test_data_set_N/input_K.pb, output_K.pb
//   <case>/case.json   (optional metadata: tags, tolerance override, ...)
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/core/value.h"
#include "reference/model/loader.h"

namespace parity {

struct DataSet {
  std::string dir;
  std::vector<Value> inputs;
  std::vector<Value> outputs;  // expected
};

struct CaseInfo {
  std::string name;       // folder name
  std::string suite;      // parent folder name
  std::string dir;
  nlohmann::json meta = nlohmann::json::object();  // case.json, or {}
};

// Case folders under each root: a root that is itself a case is taken alone;
// otherwise every folder below it (recursively) holding a model.onnx. Sorted by path.
StatusOr<std::vector<CaseInfo>> DiscoverCases(const std::vector<std::string>& roots);

// Loads case.json (if any) into info.meta; an unparsable file is an error.
Status ReadCaseMeta(CaseInfo& info);

// Reads the data sets of a case against the model's declared input and
// output types; without `read_inputs`, only the expected outputs (a worker
// gets the input files' bytes as they are).
StatusOr<std::vector<DataSet>> ReadDataSets(const CaseInfo& info, const onnx::ModelProto& model,
                                            bool read_inputs = true);

// The operator a case is about: the op_type of a one-node model, or else the
// case name's operator stem ("test_attention_4d_expanded" -> first node's
// op in the original single-node form is unknown, so the most frequent
// non-trivial op). Used for tolerance families and per-operator counts.
std::string CaseOperator(const CaseInfo& info, const onnx::ModelProto& model);

}  // namespace parity
