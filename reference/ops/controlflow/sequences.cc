// The sequence operators (Operators.md: SequenceConstruct, SequenceEmpty,
// SequenceInsert, SequenceErase, SequenceAt, SequenceLength, SplitToSequence,
// ConcatFromSequence, SequenceMap).
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/controlflow/controlflow.h"
#include "reference/ops/controlflow/slicing.h"

namespace parity::ops::controlflow {
namespace {

StatusOr<const Value*> RequireSequence(const KernelContext& ctx, size_t i) {
  if (!ctx.has_input(i)) return ctx.Error("input ", i, " (a sequence) is required but absent");
  if (!ctx.input(i).is_sequence()) return ctx.Error("input ", i, " must be a sequence, got ", ctx.input(i).Description());
  return &ctx.input(i);
}

// A position input (a scalar integer tensor), checked against [low, high].
StatusOr<int64_t> ReadPosition(const KernelContext& ctx, size_t i, int64_t low, int64_t high) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (t->size() != 1 || !IsInteger(t->dtype())) {
    return ctx.Error("position must be an integer scalar, got ", t->Description());
  }
  const int64_t position = t->GetInt64(0);
  if (position < low || position > high) {
    return ctx.Error("position ", position, " is outside [", low, ", ", high, "]");
  }
  return position;
}

StatusOr<std::vector<Value>> SingleValue(Value v) { return std::vector<Value>{std::move(v)}; }

}  // namespace

StatusOr<std::vector<Value>> SequenceConstruct(const KernelContext& ctx) {
  std::vector<Value> elements;
  DataType dtype = DataType::kUndefined;
  for (size_t i = 0; i < ctx.input_count(); ++i) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
    if (dtype != DataType::kUndefined && t->dtype() != dtype) {
      return ctx.Error("input ", i, " is ", t->Description(), "; every input must have type ", DataTypeName(dtype));
    }
    dtype = t->dtype();
    elements.push_back(ctx.input(i));
  }
  if (elements.empty()) return ctx.Error("SequenceConstruct needs at least one input");
  return SingleValue(Value::FromSequence(std::move(elements), dtype));
}

StatusOr<std::vector<Value>> SequenceEmpty(const KernelContext& ctx) {
  const int64_t dtype = ctx.GetInt("dtype", static_cast<int64_t>(DataType::kFloat));
  if (!IsKnownDataType(static_cast<int32_t>(dtype))) return ctx.Error("attribute 'dtype' ", dtype, " is not a type");
  return SingleValue(Value::FromSequence({}, static_cast<DataType>(dtype)));
}

StatusOr<std::vector<Value>> SequenceInsert(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* tensor, ctx.RequireTensor(1));
  const std::vector<Value>& old = seq->sequence();
  const int64_t n = static_cast<int64_t>(old.size());
  if (seq->sequence_element_type() != DataType::kUndefined && seq->sequence_element_type() != tensor->dtype()) {
    return ctx.Error("cannot insert ", tensor->Description(), " into a sequence of ",
                     DataTypeName(seq->sequence_element_type()));
  }
  int64_t position = n;
  if (ctx.has_input(2)) {
    PARITY_ASSIGN_OR_RETURN(position, ReadPosition(ctx, 2, -n, n));
    if (position < 0) position += n;
  }
  std::vector<Value> elements = old;
  elements.insert(elements.begin() + position, ctx.input(1));
  return SingleValue(Value::FromSequence(std::move(elements), tensor->dtype()));
}

StatusOr<std::vector<Value>> SequenceErase(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence().size());
  if (n == 0) return ctx.Error("cannot erase from an empty sequence");
  int64_t position = n - 1;
  if (ctx.has_input(1)) {
    PARITY_ASSIGN_OR_RETURN(position, ReadPosition(ctx, 1, -n, n - 1));
    if (position < 0) position += n;
  }
  std::vector<Value> elements = seq->sequence();
  elements.erase(elements.begin() + position);
  return SingleValue(Value::FromSequence(std::move(elements), seq->sequence_element_type()));
}

StatusOr<std::vector<Value>> SequenceAt(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  const int64_t n = static_cast<int64_t>(seq->sequence().size());
  PARITY_ASSIGN_OR_RETURN(int64_t position, ReadPosition(ctx, 1, -n, n - 1));
  if (position < 0) position += n;
  return SingleValue(seq->sequence()[static_cast<size_t>(position)]);
}

StatusOr<std::vector<Value>> SequenceLength(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kInt64, {}));
  out.SetInt64(0, static_cast<int64_t>(seq->sequence().size()));
  return Single(std::move(out));
}

// SplitToSequence: `split` absent cuts pieces of length 1 (and keepdims=0
// drops the split axis); a scalar `split` cuts pieces of that length with a
// shorter last one; a 1-D `split` gives the lengths, which must sum to the
// dimension.
StatusOr<std::vector<Value>> SplitToSequence(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
  if (input->rank() == 0) return ctx.Error("input must have rank >= 1, got a scalar");
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), input->rank()));
  const int64_t dim = input->dim(axis);
  const bool keepdims = ctx.GetInt("keepdims", 1) != 0;
  std::vector<int64_t> lengths;
  const bool has_split = ctx.has_input(1);
  if (!has_split) {
    lengths.assign(static_cast<size_t>(dim), 1);
  } else {
    PARITY_ASSIGN_OR_RETURN(const Tensor* split, ctx.RequireTensor(1));
    if (!IsInteger(split->dtype())) return ctx.Error("split must be an integer tensor, got ", split->Description());
    if (split->rank() == 0) {
      const int64_t length = split->GetInt64(0);
      if (length <= 0) return ctx.Error("split length ", length, " must be positive");
      for (int64_t at = 0; at < dim; at += length) lengths.push_back(std::min(length, dim - at));
    } else if (split->rank() == 1) {
      int64_t total = 0;
      for (int64_t i = 0; i < split->size(); ++i) {
        const int64_t length = split->GetInt64(i);
        if (length < 0) return ctx.Error("split length ", length, " is negative");
        total += length;
        lengths.push_back(length);
      }
      if (total != dim) return ctx.Error("split lengths sum to ", total, ", the axis has ", dim);
    } else {
      return ctx.Error("split must be a scalar or 1-D, got ", split->Description());
    }
  }
  std::vector<Value> pieces;
  int64_t at = 0;
  for (int64_t length : lengths) {
    PARITY_ASSIGN_OR_RETURN(Tensor piece, Narrow(ctx, *input, axis, at, length));
    at += length;
    if (!has_split && !keepdims) {
      Shape shape = piece.shape();
      shape.erase(shape.begin() + axis);
      piece = piece.Reshaped(shape);
    }
    pieces.push_back(Value::FromTensor(std::move(piece)));
  }
  return SingleValue(Value::FromSequence(std::move(pieces), input->dtype()));
}

StatusOr<std::vector<Value>> ConcatFromSequence(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Value* seq, RequireSequence(ctx, 0));
  if (!ctx.has_attribute("axis")) return ctx.Error("attribute 'axis' is required");
  const bool new_axis = ctx.GetInt("new_axis", 0) != 0;
  std::vector<Tensor> parts;
  for (const Value& v : seq->sequence()) {
    if (!v.is_tensor()) return ctx.Error("sequence elements must be tensors, got ", v.Description());
    parts.push_back(v.tensor());
  }
  if (parts.empty()) return ctx.Error("cannot concatenate an empty sequence");
  const int64_t rank = parts[0].rank();
  PARITY_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(ctx, ctx.GetInt("axis", 0), new_axis ? rank + 1 : rank));
  if (new_axis) return Single(Stack(ctx, parts, axis, parts[0].dtype(), parts[0].shape()));
  return Single(Concatenate(ctx, parts, axis));
}

// SequenceMap: the body runs once per position of the sequences; sequence
// inputs give their element at that position, tensor inputs are passed
// whole every time. Each body output becomes a sequence.
StatusOr<std::vector<Value>> SequenceMap(const KernelContext& ctx) {
  const onnx::GraphProto* body = ctx.GetGraph("body");
  if (!body) return ctx.Error("attribute 'body' (a graph) is missing");
  PARITY_ASSIGN_OR_RETURN(const Value* first, RequireSequence(ctx, 0));
  const size_t length = first->sequence().size();
  for (size_t i = 1; i < ctx.input_count(); ++i) {
    if (!ctx.has_input(i)) return ctx.Error("input ", i, " is absent");
    if (ctx.input(i).is_sequence() && ctx.input(i).sequence().size() != length) {
      return ctx.Error("input ", i, " has ", ctx.input(i).sequence().size(), " elements, input 0 has ", length);
    }
  }
  if (body->input_size() != static_cast<int>(ctx.input_count())) {
    return ctx.Error("body takes ", body->input_size(), " inputs, the node gives ", ctx.input_count());
  }
  const size_t output_count = static_cast<size_t>(body->output_size());
  std::vector<std::vector<Value>> collected(output_count);
  for (size_t p = 0; p < length; ++p) {
    std::vector<Value> inputs;
    for (size_t i = 0; i < ctx.input_count(); ++i) {
      const Value& v = ctx.input(i);
      inputs.push_back(v.is_sequence() ? v.sequence()[p] : v);
    }
    StatusOr<std::vector<Value>> outputs = ctx.RunSubgraph(*body, inputs);
    if (!outputs.ok()) return outputs.status().WithContext(ctx.NodeLabel() + ": body, position " + std::to_string(p));
    for (size_t k = 0; k < output_count; ++k) collected[k].push_back((*outputs)[k]);
  }
  std::vector<Value> results;
  for (size_t k = 0; k < output_count && k < ctx.output_count(); ++k) {
    const DataType dtype = DeclaredElementType(body->output(static_cast<int>(k)).type());
    results.push_back(Value::FromSequence(std::move(collected[k]), dtype));
  }
  return results;
}

}  // namespace parity::ops::controlflow
