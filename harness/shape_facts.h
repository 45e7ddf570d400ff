// The shape facts n and k that spec/tolerance.json's formulas scale with
// (spec/tolerance.md, "n is ShapeFacts.reduced_length and k is inner_dim"),
// worked out from a case's model and the actual inputs of one data set.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "harness/compare.h"
#include "onnx/onnx-ml.pb.h"
#include "reference/core/value.h"

namespace parity {

// Value name -> dims, or value name -> the contents of a small integer tensor.
using KnownDims = std::map<std::string, std::vector<int64_t>>;
using KnownInts = std::map<std::string, std::vector<int64_t>>;

// Integer tensors up to this many elements are worth reading for their
// contents (axes, dft_length, frame_length, total_sequence_length).
inline constexpr int64_t kMaxKnownIntElements = 16;

// The facts for the nodes of `op_type` in the model's top-level graph; with
// several such nodes, the largest n and the largest k over them (the loosest
// bound any of them needs). Never fails: a fact that cannot be worked out
// (an unknown dim, an axis out of range, an operator without a rule, a model
// with no node of `op_type`, as in an `_expanded` case whose operator is
// spread over primitive nodes) is 1.
//
// Dims come from `known_dims` first (the data set's actual inputs, which the
// caller fills in), then from initializers and Constant nodes, then from
// graph inputs, outputs and value_info whose shapes are fully static. The
// contents of attribute-like inputs (ReduceSum's axes, DFT's dft_length) come
// from `known_int_values` first, then from int32/int64 initializers and
// Constant nodes. The rule of each operator is written beside its code in
// shape_facts.cc.
ShapeFacts ShapeFactsFor(const onnx::ModelProto& model, std::string_view op_type, const KnownDims& known_dims,
                         const KnownInts& known_int_values = {});

// For callers filling the two maps from a data set's inputs: records a
// tensor's dims under `name`, and its contents when it is an int32 or int64
// tensor of at most kMaxKnownIntElements elements. Sequences, optionals and
// unreadable tensors are left out (their facts fall back to 1).
void NoteKnownValue(const std::string& name, const Value& value, KnownDims& dims, KnownInts& ints);
void NoteKnownTensor(const std::string& name, const onnx::TensorProto& tensor, KnownDims& dims, KnownInts& ints);

}  // namespace parity
