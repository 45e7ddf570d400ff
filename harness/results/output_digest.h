// SHA-256 digests of the outputs a run computed (results.jsonl
// "output_sha256", spec/results.md): each output is hashed as the bytes of
// the file `parity expect` writes for it (output_K.pb, named after the graph
// output), so two runs whose digests agree computed the same bits, and the
// digest of a case whose expected outputs the reference wrote equals
// `sha256sum test_data_set_N/output_K.pb`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reference/core/status.h"
#include "reference/core/value.h"

namespace parity {

// Lowercase hex SHA-256 of `bytes`.
StatusOr<std::string> Sha256Hex(std::string_view bytes);

// The serialized TensorProto, SequenceProto or OptionalProto of `value`
// with `name`, byte for byte what WriteValueFile (reference/model/tensor_io.h)
// writes to a file.
std::string SerializedValue(const Value& value, const std::string& name);

// The digest of each output, in order; `names` are the graph outputs' names
// (as many as `outputs`).
StatusOr<std::vector<std::string>> OutputDigests(const std::vector<Value>& outputs,
                                                 const std::vector<std::string>& names);

}  // namespace parity
