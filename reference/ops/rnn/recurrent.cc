// RNN, GRU and LSTM (Operators.md, versions 7 to 22; layout since 14):
// one recurrent loop over time for each direction, with the cell update of
// each operator. Gate pre-activations are summed in double; clip bounds the
// pre-activations fed to f, g and h. Batch b runs sequence_lens[b] steps;
// the Y rows of later steps are zero and Y_h/Y_c hold the last valid state.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <optional>
#include <string>

#include "reference/core/checked_size.h"
#include "reference/ops/common.h"
#include "reference/ops/rnn/rnn.h"

namespace parity::ops::rnn {
namespace {

enum class Cell { kRnn, kGru, kLstm };

using Activation = std::function<double(double)>;

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

struct Problem {
  Cell cell;
  int gates = 1;            // 1 (RNN), 3 (GRU), 4 (LSTM)
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool layout_batch_first = false;
  bool linear_before_reset = false;
  bool input_forget = false;
  double clip = 0.0;        // 0: no clipping
  std::vector<double> x, w, r, b, h0, c0, p;
  std::vector<int64_t> lengths;
  std::vector<std::vector<Activation>> act;  // per direction: f (, g (, h))

  double X(int64_t t, int64_t bb, int64_t i) const {
    return layout_batch_first ? x[static_cast<size_t>((bb * seq + t) * input + i)]
                              : x[static_cast<size_t>((t * batch + bb) * input + i)];
  }
  // Index of state (direction d, batch b, unit k) in initial_h/Y_h order.
  size_t StateIndex(int64_t d, int64_t bb, int64_t k) const {
    return static_cast<size_t>(layout_batch_first ? (bb * directions + d) * hidden + k : (d * batch + bb) * hidden + k);
  }
  size_t YIndex(int64_t t, int64_t d, int64_t bb, int64_t k) const {
    return static_cast<size_t>(layout_batch_first ? ((bb * seq + t) * directions + d) * hidden + k
                                                  : ((t * directions + d) * batch + bb) * hidden + k);
  }
  double Clip(double v) const { return clip > 0 ? std::max(-clip, std::min(clip, v)) : v; }
};

// Row `row` of gate matrix M ([dirs, gates*hidden, cols]) times vector v.
double Dot(const std::vector<double>& m, int64_t d, int64_t rows, int64_t row, int64_t cols, const double* v) {
  double acc = 0.0;
  const size_t base = static_cast<size_t>((d * rows + row) * cols);
  for (int64_t c = 0; c < cols; ++c) acc += m[base + static_cast<size_t>(c)] * v[c];
  return acc;
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

  std::vector<double> y(static_cast<size_t>(pb.seq * pb.directions * pb.batch * pb.hidden), 0.0);
  std::vector<double> yh(pb.h0.size()), yc(pb.h0.size());
  const int64_t H = pb.hidden;
  std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H)), xt(static_cast<size_t>(pb.input)),
      next_h(static_cast<size_t>(H)), next_c(static_cast<size_t>(H)), gate(static_cast<size_t>(gh));
  for (int64_t d = 0; d < pb.directions; ++d) {
    const bool reverse = direction == "reverse" || d == 1;
    const auto& act = pb.act[static_cast<size_t>(d)];
    const double* wb = pb.b.data() + d * 2 * gh;  // W bias, then R bias at + gh
    const double* rb = wb + gh;
    for (int64_t bb = 0; bb < pb.batch; ++bb) {
      for (int64_t k = 0; k < H; ++k) {
        h[static_cast<size_t>(k)] = pb.h0[pb.StateIndex(d, bb, k)];
        c[static_cast<size_t>(k)] = cell == Cell::kLstm ? pb.c0[pb.StateIndex(d, bb, k)] : 0.0;
      }
      const int64_t len = pb.lengths[static_cast<size_t>(bb)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = reverse ? len - 1 - step : step;
        for (int64_t i = 0; i < pb.input; ++i) xt[static_cast<size_t>(i)] = pb.X(t, bb, i);
        // x W^T + Wb for all gates; h R^T + Rb kept apart for GRU's reset gate.
        for (int64_t g = 0; g < gh; ++g) gate[static_cast<size_t>(g)] = Dot(pb.w, d, gh, g, pb.input, xt.data()) + wb[g];
        auto hr = [&](int64_t g, const double* hv) { return Dot(pb.r, d, gh, g, H, hv) + rb[g]; };
        if (cell == Cell::kRnn) {
          for (int64_t k = 0; k < H; ++k) {
            next_h[static_cast<size_t>(k)] = act[0](pb.Clip(gate[static_cast<size_t>(k)] + hr(k, h.data())));
          }
        } else if (cell == Cell::kGru) {
          // Gate order z, r, h.
          std::vector<double> z(static_cast<size_t>(H)), rr(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
          for (int64_t k = 0; k < H; ++k) {
            z[static_cast<size_t>(k)] = act[0](pb.Clip(gate[static_cast<size_t>(k)] + hr(k, h.data())));
            rr[static_cast<size_t>(k)] = act[0](pb.Clip(gate[static_cast<size_t>(H + k)] + hr(H + k, h.data())));
            rh[static_cast<size_t>(k)] = rr[static_cast<size_t>(k)] * h[static_cast<size_t>(k)];
          }
          for (int64_t k = 0; k < H; ++k) {
            const int64_t g = 2 * H + k;
            const double recurrent = pb.linear_before_reset ? rr[static_cast<size_t>(k)] * hr(g, h.data())
                                                            : hr(g, rh.data());
            const double candidate = act[1](pb.Clip(gate[static_cast<size_t>(g)] + recurrent));
            next_h[static_cast<size_t>(k)] =
                (1.0 - z[static_cast<size_t>(k)]) * candidate + z[static_cast<size_t>(k)] * h[static_cast<size_t>(k)];
          }
        } else {
          // Gate order i, o, f, c; peepholes P in order i, o, f.
          const double* p = pb.p.data() + d * 3 * H;
          for (int64_t k = 0; k < H; ++k) {
            const size_t kk = static_cast<size_t>(k);
            const double i_gate = act[0](pb.Clip(gate[kk] + hr(k, h.data()) + p[k] * c[kk]));
            const double f_gate = pb.input_forget
                                      ? 1.0 - i_gate
                                      : act[0](pb.Clip(gate[static_cast<size_t>(2 * H + k)] + hr(2 * H + k, h.data()) +
                                                       p[2 * H + k] * c[kk]));
            const double cand = act[1](pb.Clip(gate[static_cast<size_t>(3 * H + k)] + hr(3 * H + k, h.data())));
            next_c[kk] = f_gate * c[kk] + i_gate * cand;
            const double o_gate =
                act[0](pb.Clip(gate[static_cast<size_t>(H + k)] + hr(H + k, h.data()) + p[H + k] * next_c[kk]));
            next_h[kk] = o_gate * act[2](next_c[kk]);
          }
          c = next_c;
        }
        h = next_h;
        for (int64_t k = 0; k < H; ++k) y[pb.YIndex(t, d, bb, k)] = h[static_cast<size_t>(k)];
      }
      for (int64_t k = 0; k < H; ++k) {
        yh[pb.StateIndex(d, bb, k)] = h[static_cast<size_t>(k)];
        yc[pb.StateIndex(d, bb, k)] = c[static_cast<size_t>(k)];
      }
    }
  }
  const DataType dtype = x->dtype();
  const Shape y_shape = pb.layout_batch_first ? Shape{pb.batch, pb.seq, pb.directions, H}
                                              : Shape{pb.seq, pb.directions, pb.batch, H};
  std::vector<Value> outputs;
  PARITY_ASSIGN_OR_RETURN(Value y_out, MakeResult(ctx, dtype, y_shape, y));
  outputs.push_back(std::move(y_out));
  if (ctx.output_count() > 1) {
    PARITY_ASSIGN_OR_RETURN(Value h_out, MakeResult(ctx, dtype, state_shape, yh));
    outputs.push_back(std::move(h_out));
  }
  if (cell == Cell::kLstm && ctx.output_count() > 2) {
    PARITY_ASSIGN_OR_RETURN(Value c_out, MakeResult(ctx, dtype, state_shape, yc));
    outputs.push_back(std::move(c_out));
  }
  return outputs;
}

}  // namespace

StatusOr<std::vector<Value>> Rnn(const KernelContext& ctx) { return RunRecurrent(ctx, Cell::kRnn); }
StatusOr<std::vector<Value>> Gru(const KernelContext& ctx) { return RunRecurrent(ctx, Cell::kGru); }
StatusOr<std::vector<Value>> Lstm(const KernelContext& ctx) { return RunRecurrent(ctx, Cell::kLstm); }

}  // namespace parity::ops::rnn
