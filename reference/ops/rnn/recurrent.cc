// RNN, GRU and LSTM (Operators.md, versions 7 to 22; layout since 14): reads
// and checks the node's inputs and attributes into a Problem (recurrent.h),
// runs the cells (recurrent_cells.cc) and rounds each output once. Clip
// bounds the pre-activations fed to f, g and h. Batch b runs
// sequence_lens[b] steps; the Y rows of later steps are zero and Y_h/Y_c
// hold the last valid state.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <string>

#include "reference/core/checked_size.h"
#include "reference/ops/common.h"
#include "reference/ops/rnn/recurrent.h"
#include "reference/ops/rnn/rnn.h"

namespace parity::ops::rnn {
namespace {

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Activation `name`, taking its alpha/beta from the attribute lists in order
// (ONNX RNN activation_alpha/activation_beta) or from the defaults.
StatusOr<Activation> MakeActivation(const KernelContext& ctx, const std::string& name, const std::vector<float>& alphas,
                                    const std::vector<float>& betas, size_t& next_alpha, size_t& next_beta) {
  auto alpha = [&](double fallback) {
    return next_alpha < alphas.size() ? static_cast<double>(alphas[next_alpha++]) : fallback;
  };
  auto beta = [&](double fallback) {
    return next_beta < betas.size() ? static_cast<double>(betas[next_beta++]) : fallback;
  };
  const std::string n = Lower(name);
  if (n == "relu") return Activation([](double x) { return std::max(x, 0.0); });
  if (n == "tanh") return Activation([](double x) { return std::tanh(x); });
  if (n == "sigmoid") return Activation([](double x) { return 1.0 / (1.0 + std::exp(-x)); });
  if (n == "softsign") return Activation([](double x) { return x / (1.0 + std::fabs(x)); });
  if (n == "softplus") return Activation([](double x) { return std::log1p(std::exp(x)); });
  if (n == "affine") {
    const double a = alpha(1.0), b = beta(0.0);
    return Activation([a, b](double x) { return a * x + b; });
  }
  if (n == "leakyrelu") {
    const double a = alpha(0.01);
    return Activation([a](double x) { return x >= 0 ? x : a * x; });
  }
  if (n == "thresholdedrelu") {
    const double a = alpha(1.0);
    return Activation([a](double x) { return x > a ? x : 0.0; });
  }
  if (n == "scaledtanh") {
    const double a = alpha(1.0), b = beta(1.0);
    return Activation([a, b](double x) { return a * std::tanh(b * x); });
  }
  if (n == "hardsigmoid") {
    const double a = alpha(0.2), b = beta(0.5);
    return Activation([a, b](double x) { return std::max(0.0, std::min(1.0, a * x + b)); });
  }
  if (n == "elu") {
    const double a = alpha(1.0);
    return Activation([a](double x) { return x >= 0 ? x : a * (std::exp(x) - 1.0); });
  }
  return ctx.Error("unknown activation '", name, "'");
}

StatusOr<std::vector<Value>> RunRecurrent(const KernelContext& ctx, Cell cell) {
  Problem pb;
  pb.cell = cell;
  pb.gates = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4;
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
  PARITY_ASSIGN_OR_RETURN(const Tensor* r, ctx.RequireTensor(2));
  pb.layout_batch_first = ctx.GetInt("layout", 0) != 0;
  const std::string direction = ctx.GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.Error("direction '", direction, "' is not forward, reverse or bidirectional");
  }
  pb.directions = direction == "bidirectional" ? 2 : 1;
  pb.reverse = direction == "reverse";
  if (x->rank() != 3 || w->rank() != 3 || r->rank() != 3) {
    return ctx.Error("X, W and R must be 3-D, got ", x->Description(), ", ", w->Description(), ", ", r->Description());
  }
  pb.seq = pb.layout_batch_first ? x->dim(1) : x->dim(0);
  pb.batch = pb.layout_batch_first ? x->dim(0) : x->dim(1);
  pb.input = x->dim(2);
  pb.hidden = ctx.has_attribute("hidden_size") ? ctx.GetInt("hidden_size", 0) : r->dim(2);
  // hidden_size comes from the model: its product is checked (reference/core/checked_size.h).
  // Once R's shape [dirs, gates*hidden, hidden] matches, every later size is
  // bounded by tensors that exist.
  const std::optional<int64_t> checked_gh = CheckedMul(pb.gates, pb.hidden);
  if (!checked_gh) return ctx.Error("hidden_size ", pb.hidden, " times ", pb.gates, " gates overflows a 64-bit size");
  const int64_t gh = *checked_gh;
  if (pb.hidden <= 0 || w->shape() != Shape({pb.directions, gh, pb.input}) ||
      r->shape() != Shape({pb.directions, gh, pb.hidden})) {
    return ctx.Error("W ", w->Description(), " or R ", r->Description(), " does not match ", pb.directions,
                     " directions, ", pb.gates, " gates, hidden size ", pb.hidden, " and input size ", pb.input);
  }
  pb.x = x->ToDoubles();
  pb.w = w->ToDoubles();
  pb.r = r->ToDoubles();
  pb.b.assign(static_cast<size_t>(pb.directions * 2 * gh), 0.0);
  if (ctx.has_input(3)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(3));
    if (b->shape() != Shape({pb.directions, 2 * gh})) return ctx.Error("B ", b->Description(), " must be [dirs, 2*gates*hidden]");
    pb.b = b->ToDoubles();
  }
  pb.lengths.assign(static_cast<size_t>(pb.batch), pb.seq);
  if (ctx.has_input(4)) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* lens, ctx.RequireTensor(4));
    if (lens->size() != pb.batch) return ctx.Error("sequence_lens must hold ", pb.batch, " values");
    pb.lengths = lens->ToInt64s();
    for (int64_t len : pb.lengths) {
      if (len < 0 || len > pb.seq) return ctx.Error("sequence length ", len, " is outside [0, ", pb.seq, "]");
    }
  }
  const Shape state_shape = pb.layout_batch_first ? Shape{pb.batch, pb.directions, pb.hidden}
                                                  : Shape{pb.directions, pb.batch, pb.hidden};
  auto read_state = [&](size_t i, std::vector<double>& out, const char* name) -> Status {
    out.assign(static_cast<size_t>(pb.directions * pb.batch * pb.hidden), 0.0);
    if (!ctx.has_input(i)) return Status::Ok();
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
    if (t->shape() != state_shape) return ctx.Error(name, " ", t->Description(), " must have shape ", ShapeToString(state_shape));
    out = t->ToDoubles();
    return Status::Ok();
  };
  PARITY_RETURN_IF_ERROR(read_state(5, pb.h0, "initial_h"));
  if (cell == Cell::kLstm) {
    PARITY_RETURN_IF_ERROR(read_state(6, pb.c0, "initial_c"));
    pb.p.assign(static_cast<size_t>(pb.directions * 3 * pb.hidden), 0.0);
    if (ctx.has_input(7)) {
      PARITY_ASSIGN_OR_RETURN(const Tensor* p, ctx.RequireTensor(7));
      if (p->shape() != Shape({pb.directions, 3 * pb.hidden})) return ctx.Error("P ", p->Description(), " must be [dirs, 3*hidden]");
      pb.p = p->ToDoubles();
    }
    pb.input_forget = ctx.GetInt("input_forget", 0) != 0;
  }
  pb.linear_before_reset = cell == Cell::kGru && ctx.GetInt("linear_before_reset", 0) != 0;
  pb.clip = ctx.has_attribute("clip") ? static_cast<double>(ctx.GetFloat("clip", 0.0f)) : 0.0;
  if (ctx.has_attribute("clip") && pb.clip <= 0) return ctx.Error("clip must be positive");

  // Activations: per direction, 1 (RNN), 2 (GRU) or 3 (LSTM) functions.
  const size_t per_dir = cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3;
  std::vector<std::string> names = ctx.GetStrings("activations");
  if (names.empty()) {
    const std::vector<std::string> defaults = cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
                                              : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                                   : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int64_t d = 0; d < pb.directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  if (names.size() != per_dir * static_cast<size_t>(pb.directions)) {
    return ctx.Error("expected ", per_dir * static_cast<size_t>(pb.directions), " activations, got ", names.size());
  }
  const std::vector<float> alphas = ctx.GetFloats("activation_alpha"), betas = ctx.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  pb.act.resize(static_cast<size_t>(pb.directions));
  for (size_t i = 0; i < names.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(Activation a, MakeActivation(ctx, names[i], alphas, betas, next_alpha, next_beta));
    pb.act[i / per_dir].push_back(std::move(a));
  }

  const States states = RunCells(pb);
  const DataType dtype = x->dtype();
  const Shape y_shape = pb.layout_batch_first ? Shape{pb.batch, pb.seq, pb.directions, pb.hidden}
                                              : Shape{pb.seq, pb.directions, pb.batch, pb.hidden};
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value y_out, MakeResult(ctx, dtype, y_shape, states.y));
  outputs.push_back(std::move(y_out));
  if (ctx.output_count() > 1) {
    PARITY_ASSIGN_OR_RETURN(Value h_out, MakeResult(ctx, dtype, state_shape, states.yh));
    outputs.push_back(std::move(h_out));
  }
  if (cell == Cell::kLstm && ctx.output_count() > 2) {
    PARITY_ASSIGN_OR_RETURN(Value c_out, MakeResult(ctx, dtype, state_shape, states.yc));
    outputs.push_back(std::move(c_out));
  }
  return outputs;
}

}  // namespace

StatusOr<std::vector<Value>> Rnn(const KernelContext& ctx) { return RunRecurrent(ctx, Cell::kRnn); }
StatusOr<std::vector<Value>> Gru(const KernelContext& ctx) { return RunRecurrent(ctx, Cell::kGru); }
StatusOr<std::vector<Value>> Lstm(const KernelContext& ctx) { return RunRecurrent(ctx, Cell::kLstm); }

}  // namespace parity::ops::rnn
