// Scan: a body run once per slice of its scan inputs, carrying state from one
// iteration to the next (Operators.md, Scan-8 with a batch axis and
// sequence_lens, Scan-9 and later with per-input axes and directions).
#include <algorithm>
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/controlflow/controlflow.h"
#include "reference/ops/controlflow/slicing.h"

namespace parity::ops::controlflow {
namespace {

// The attribute list `name` padded with `fallback` to `count` entries.
std::vector<int64_t> PerInput(const KernelContext& ctx, const char* name, size_t count, int64_t fallback) {
  std::vector<int64_t> values = ctx.GetInts(name);
  values.resize(std::max(values.size(), count), fallback);
  return values;
}

Status CheckDirections(const KernelContext& ctx, const std::vector<int64_t>& directions, const char* name) {
  for (int64_t d : directions) {
    if (d != 0 && d != 1) return ctx.Error("attribute '", name, "' holds ", d, "; only 0 and 1 are directions");
  }
  return Status::Ok();
}

struct ScanBody {
  const onnx::GraphProto* graph = nullptr;
  size_t state_count = 0;
  size_t scan_input_count = 0;
  size_t scan_output_count = 0;
};

StatusOr<ScanBody> ReadBody(const KernelContext& ctx, size_t state_count, size_t scan_input_count) {
  ScanBody body;
  body.graph = ctx.GetGraph("body");
  if (!body.graph) return ctx.Error("attribute 'body' (a graph) is missing");
  body.state_count = state_count;
  body.scan_input_count = scan_input_count;
  if (body.graph->input_size() != static_cast<int>(state_count + scan_input_count)) {
    return ctx.Error("body takes ", body.graph->input_size(), " inputs; expected ", state_count, " states + ",
                     scan_input_count, " scan inputs");
  }
  if (body.graph->output_size() < static_cast<int>(state_count)) {
    return ctx.Error("body produces ", body.graph->output_size(), " outputs, fewer than the ", state_count, " states");
  }
  body.scan_output_count = static_cast<size_t>(body.graph->output_size()) - state_count;
  return body;
}

// Runs the body over `steps` iterations. `slice(j, t)` gives scan input j at
// iteration t. Returns the final states and, per scan output, its slices in
// iteration order.
struct ScanRun {
  std::vector<Value> states;
  std::vector<std::vector<Tensor>> scan_slices;
};

template <typename SliceFn>
StatusOr<ScanRun> RunIterations(const KernelContext& ctx, const ScanBody& body, std::vector<Value> states,
                                int64_t steps, SliceFn slice) {
  ScanRun run;
  run.scan_slices.resize(body.scan_output_count);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Value> inputs = states;
    for (size_t j = 0; j < body.scan_input_count; ++j) {
      PARITY_ASSIGN_OR_RETURN(Tensor s, slice(j, t));
      inputs.push_back(Value::FromTensor(std::move(s)));
    }
    StatusOr<std::vector<Value>> outputs = ctx.RunSubgraph(*body.graph, inputs);
    if (!outputs.ok()) return outputs.status().WithContext(ctx.NodeLabel() + ": body, iteration " + std::to_string(t));
    for (size_t i = 0; i < body.state_count; ++i) states[i] = (*outputs)[i];
    for (size_t k = 0; k < body.scan_output_count; ++k) {
      const Value& v = (*outputs)[body.state_count + k];
      if (!v.is_tensor()) return ctx.Error("scan output ", k, " must be a tensor, got ", v.Description());
      run.scan_slices[k].push_back(v.tensor());
    }
  }
  run.states = std::move(states);
  return run;
}

}  // namespace

StatusOr<std::vector<Value>> Scan(const KernelContext& ctx) {
  const int64_t scan_input_count = ctx.GetInt("num_scan_inputs", 0);
  const int64_t total_inputs = ctx.node().input_size();
  if (scan_input_count <= 0 || scan_input_count > total_inputs) {
    return ctx.Error("attribute 'num_scan_inputs' is ", scan_input_count, " for ", total_inputs, " inputs");
  }
  const size_t state_count = static_cast<size_t>(total_inputs - scan_input_count);
  PARITY_ASSIGN_OR_RETURN(ScanBody body, ReadBody(ctx, state_count, static_cast<size_t>(scan_input_count)));

  std::vector<Value> states;
  for (size_t i = 0; i < state_count; ++i) {
    if (!ctx.has_input(i)) return ctx.Error("state input ", i, " is absent");
    states.push_back(ctx.input(i));
  }
  std::vector<const Tensor*> scan_inputs;
  for (size_t j = 0; j < body.scan_input_count; ++j) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(state_count + j));
    scan_inputs.push_back(t);
  }
  const std::vector<int64_t> in_axes_raw = PerInput(ctx, "scan_input_axes", body.scan_input_count, 0);
  const std::vector<int64_t> in_dirs = PerInput(ctx, "scan_input_directions", body.scan_input_count, 0);
  const std::vector<int64_t> out_axes_raw = PerInput(ctx, "scan_output_axes", body.scan_output_count, 0);
  const std::vector<int64_t> out_dirs = PerInput(ctx, "scan_output_directions", body.scan_output_count, 0);
  PARITY_RETURN_IF_ERROR(CheckDirections(ctx, in_dirs, "scan_input_directions"));
  PARITY_RETURN_IF_ERROR(CheckDirections(ctx, out_dirs, "scan_output_directions"));

  std::vector<int64_t> in_axes(body.scan_input_count);
  int64_t steps = -1;
  for (size_t j = 0; j < body.scan_input_count; ++j) {
    PARITY_ASSIGN_OR_RETURN(in_axes[j], NormalizeAxis(ctx, in_axes_raw[j], scan_inputs[j]->rank()));
    const int64_t len = scan_inputs[j]->dim(in_axes[j]);
    if (steps >= 0 && len != steps) {
      return ctx.Error("scan inputs disagree on the sequence length: ", steps, " and ", len, " (input ",
                       state_count + j, ")");
    }
    steps = len;
  }
  auto slice = [&](size_t j, int64_t t) -> StatusOr<Tensor> {
    const int64_t index = in_dirs[j] == 1 ? steps - 1 - t : t;
    return TakeSlice(ctx, *scan_inputs[j], in_axes[j], index);
  };
  PARITY_ASSIGN_OR_RETURN(ScanRun run, RunIterations(ctx, body, std::move(states), steps, slice));

  std::vector<Value> results = std::move(run.states);
  for (size_t k = 0; k < body.scan_output_count; ++k) {
    std::vector<Tensor>& parts = run.scan_slices[k];
    if (out_dirs[k] == 1) std::reverse(parts.begin(), parts.end());
    const onnx::TypeProto& type = body.graph->output(static_cast<int>(state_count + k)).type();
    const Shape element_shape = parts.empty() ? DeclaredShapeOrZero(type) : parts[0].shape();
    PARITY_ASSIGN_OR_RETURN(int64_t axis,
                            NormalizeAxis(ctx, out_axes_raw[k], static_cast<int64_t>(element_shape.size()) + 1));
    PARITY_ASSIGN_OR_RETURN(Tensor stacked, Stack(ctx, parts, axis, DeclaredElementType(type), element_shape));
    results.push_back(Value::FromTensor(std::move(stacked)));
  }
  if (results.size() > ctx.output_count()) results.resize(ctx.output_count());
  return results;
}

// Scan-8: every state and scan input has a leading batch axis; scan inputs
// are [batch, sequence, ...]. Batch b runs sequence_lens[b] steps (all steps
// when absent); its scan outputs are padded with zeros to the longest
// sequence. `directions` reverses the order a scan input is read in.
StatusOr<std::vector<Value>> Scan8(const KernelContext& ctx) {
  const int64_t scan_input_count = ctx.GetInt("num_scan_inputs", 0);
  const int64_t total_inputs = ctx.node().input_size() - 1;  // input 0 is sequence_lens
  if (scan_input_count <= 0 || scan_input_count > total_inputs) {
    return ctx.Error("attribute 'num_scan_inputs' is ", scan_input_count, " for ", total_inputs, " inputs");
  }
  const size_t state_count = static_cast<size_t>(total_inputs - scan_input_count);
  PARITY_ASSIGN_OR_RETURN(ScanBody body, ReadBody(ctx, state_count, static_cast<size_t>(scan_input_count)));
  const std::vector<int64_t> dirs = PerInput(ctx, "directions", body.scan_input_count, 0);
  PARITY_RETURN_IF_ERROR(CheckDirections(ctx, dirs, "directions"));

  std::vector<const Tensor*> states;
  for (size_t i = 0; i < state_count; ++i) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(1 + i));
    states.push_back(t);
  }
  std::vector<const Tensor*> scan_inputs;
  for (size_t j = 0; j < body.scan_input_count; ++j) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(1 + state_count + j));
    if (t->rank() < 2) return ctx.Error("scan input ", j, " must have batch and sequence axes, got ", t->Description());
    scan_inputs.push_back(t);
  }
  const int64_t batch = scan_inputs[0]->dim(0);
  const int64_t max_steps = scan_inputs[0]->dim(1);
  for (const Tensor* t : scan_inputs) {
    if (t->dim(0) != batch || t->dim(1) != max_steps) {
      return ctx.Error("scan inputs disagree on batch or sequence length: ", t->Description(), " and ",
                       scan_inputs[0]->Description());
    }
  }
  for (const Tensor* t : states) {
    if (t->rank() < 1 || t->dim(0) != batch) return ctx.Error("state ", t->Description(), " lacks the batch axis ", batch);
  }
  std::vector<int64_t> lengths(static_cast<size_t>(batch), max_steps);
  if (ctx.has_input(0)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* lens, ctx.RequireTensor(0));
    if (lens->size() != batch) return ctx.Error("sequence_lens has ", lens->size(), " entries for batch ", batch);
    for (int64_t b = 0; b < batch; ++b) {
      lengths[static_cast<size_t>(b)] = lens->GetInt64(b);
      if (lengths[static_cast<size_t>(b)] < 0 || lengths[static_cast<size_t>(b)] > max_steps) {
        return ctx.Error("sequence_lens[", b, "] = ", lengths[static_cast<size_t>(b)], " is outside [0, ", max_steps, "]");
      }
    }
  }

  std::vector<std::vector<Tensor>> final_states(state_count);
  std::vector<std::vector<Tensor>> scan_outputs(body.scan_output_count);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value> batch_states;
    for (const Tensor* s : states) {
      PARITY_ASSIGN_OR_RETURN(Tensor slice, TakeSlice(ctx, *s, 0, b));
      batch_states.push_back(Value::FromTensor(std::move(slice)));
    }
    std::vector<Tensor> rows;  // scan input j of batch b, [sequence, ...]
    for (const Tensor* t : scan_inputs) {
      PARITY_ASSIGN_OR_RETURN(Tensor row, TakeSlice(ctx, *t, 0, b));
      rows.push_back(std::move(row));
    }
    const int64_t steps = lengths[static_cast<size_t>(b)];
    auto slice = [&](size_t j, int64_t t) -> StatusOr<Tensor> {
      return TakeSlice(ctx, rows[j], 0, dirs[j] == 1 ? steps - 1 - t : t);
    };
    PARITY_ASSIGN_OR_RETURN(ScanRun run, RunIterations(ctx, body, std::move(batch_states), steps, slice));
    for (size_t i = 0; i < state_count; ++i) {
      if (!run.states[i].is_tensor()) return ctx.Error("state ", i, " must stay a tensor");
      final_states[i].push_back(run.states[i].tensor());
    }
    for (size_t k = 0; k < body.scan_output_count; ++k) {
      std::vector<Tensor>& parts = run.scan_slices[k];
      const onnx::TypeProto& type = body.graph->output(static_cast<int>(state_count + k)).type();
      DataType dtype = parts.empty() ? DeclaredElementType(type) : parts[0].dtype();
      Shape shape = parts.empty() ? DeclaredShapeOrZero(type) : parts[0].shape();
      while (static_cast<int64_t>(parts.size()) < max_steps) {
        PARITY_ASSIGN_OR_RETURN(Tensor zeros, Allocate(ctx, dtype, shape));
        parts.push_back(std::move(zeros));
      }
      PARITY_ASSIGN_OR_RETURN(Tensor stacked, Stack(ctx, parts, 0, dtype, shape));
      scan_outputs[k].push_back(std::move(stacked));
    }
  }
  std::vector<Value> results;
  for (size_t i = 0; i < state_count; ++i) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, Stack(ctx, final_states[i], 0, states[i]->dtype(),
                                            Shape(states[i]->shape().begin() + 1, states[i]->shape().end())));
    results.push_back(Value::FromTensor(std::move(t)));
  }
  for (size_t k = 0; k < body.scan_output_count; ++k) {
    const onnx::TypeProto& type = body.graph->output(static_cast<int>(state_count + k)).type();
    Shape shape = DeclaredShapeOrZero(type);
    shape.insert(shape.begin(), max_steps);
    PARITY_ASSIGN_OR_RETURN(Tensor t, Stack(ctx, scan_outputs[k], 0, DeclaredElementType(type), shape));
    results.push_back(Value::FromTensor(std::move(t)));
  }
  if (results.size() > ctx.output_count()) results.resize(ctx.output_count());
  return results;
}

}  // namespace parity::ops::controlflow
