// The recurrent loop of RNN, GRU and LSTM on matrix products (GemmDouble,
// reference/ops/gemm.h): per direction, the input projection X W^T + Wb of
// every step in one product, then per step H R^T + Rb over all batch rows
// and the cell update of each row still inside its sequence. Each gate's
// pre-activation is summed as (x W^T + Wb) + (h R^T + Rb) (+ peephole).
#include <algorithm>

#include "reference/core/parallel.h"
#include "reference/ops/gemm.h"
#include "reference/ops/rnn/recurrent.h"

namespace parity::ops::rnn {
namespace {

// Adds bias[g] to column g < columns of every row of a [rows, ld] matrix.
void AddBias(double* m, int64_t rows, int64_t columns, int64_t ld, const double* bias) {
  for (int64_t row = 0; row < rows; ++row) {
    double* r = m + row * ld;
    for (int64_t g = 0; g < columns; ++g) r[g] += bias[g];
  }
}

// One direction over the sequence: writes its elements of Y, Y_h and Y_c.
void RunDirection(const Problem& pb, int64_t d, States& out) {
  const int64_t H = pb.hidden, gh = pb.gate_rows(), batch = pb.batch;
  const auto& act = pb.act[static_cast<size_t>(d)];
  const double* wb = pb.b.data() + d * 2 * gh;
  const double* rb = wb + gh;
  const double* r = pb.r.data() + d * gh * H;
  // X is a [seq*batch, input] matrix in either layout; row XRow(t, b) of xw
  // holds (t, b)'s pre-activations from the input, gates side by side.
  std::vector<double> xw(static_cast<size_t>(pb.seq * batch * gh));
  GemmDouble(pb.seq * batch, gh, pb.input, MatrixView{pb.x.data(), pb.input, false},
             MatrixView{pb.w.data() + d * gh * pb.input, pb.input, true}, xw.data(), gh);
  AddBias(xw.data(), pb.seq * batch, gh, gh, wb);

  std::vector<double> h(static_cast<size_t>(batch * H)), c(static_cast<size_t>(batch * H), 0.0);
  for (int64_t bb = 0; bb < batch; ++bb) {
    for (int64_t k = 0; k < H; ++k) {
      h[static_cast<size_t>(bb * H + k)] = pb.h0[pb.StateIndex(d, bb, k)];
      if (pb.cell == Cell::kLstm) c[static_cast<size_t>(bb * H + k)] = pb.c0[pb.StateIndex(d, bb, k)];
    }
  }
  // GRU without linear_before_reset multiplies R_h by (r . h), known only
  // after the reset gate: its R_h product is a second one per step.
  const bool split_candidate = pb.cell == Cell::kGru && !pb.linear_before_reset;
  const int64_t from_h = split_candidate ? 2 * H : gh;
  std::vector<double> hr(static_cast<size_t>(batch * gh));
  std::vector<double> z, reset, rh;
  if (pb.cell == Cell::kGru) {
    z.resize(static_cast<size_t>(batch * H));
    reset.resize(static_cast<size_t>(batch * H));
    rh.assign(static_cast<size_t>(batch * H), 0.0);
  }
  const int64_t steps = batch == 0 ? 0 : *std::max_element(pb.lengths.begin(), pb.lengths.end());
  auto time_of = [&](int64_t bb, int64_t step) {
    const int64_t len = pb.lengths[static_cast<size_t>(bb)];
    return pb.Reversed(d) ? len - 1 - step : step;
  };
  for (int64_t step = 0; step < steps; ++step) {
    GemmDouble(batch, from_h, H, MatrixView{h.data(), H, false}, MatrixView{r, H, true}, hr.data(), gh);
    AddBias(hr.data(), batch, from_h, gh, rb);
    auto active = [&](int64_t bb) { return step < pb.lengths[static_cast<size_t>(bb)]; };
    if (pb.cell == Cell::kGru) {
      // Gate order z, r, h.
      for (int64_t bb = 0; bb < batch; ++bb) {
        if (!active(bb)) continue;
        const double* gx = xw.data() + pb.XRow(time_of(bb, step), bb) * gh;
        const double* hrow = hr.data() + bb * gh;
        for (int64_t k = 0; k < H; ++k) {
          const size_t i = static_cast<size_t>(bb * H + k);
          z[i] = act[0](pb.Clip(gx[k] + hrow[k]));
          reset[i] = act[0](pb.Clip(gx[H + k] + hrow[H + k]));
          rh[i] = reset[i] * h[i];
        }
      }
      if (split_candidate) {
        // Rows past their length keep rh = 0 or an earlier value; their
        // products are not read.
        GemmDouble(batch, H, H, MatrixView{rh.data(), H, false}, MatrixView{r + 2 * H * H, H, true},
                   hr.data() + 2 * H, gh);
        AddBias(hr.data() + 2 * H, batch, H, gh, rb + 2 * H);
      }
    }
    for (int64_t bb = 0; bb < batch; ++bb) {
      if (!active(bb)) continue;
      const int64_t t = time_of(bb, step);
      const double* gx = xw.data() + pb.XRow(t, bb) * gh;
      const double* hrow = hr.data() + bb * gh;
      double* hb = h.data() + bb * H;
      double* cb = c.data() + bb * H;
      // Each unit k reads only element k of h and c, so both update in place.
      for (int64_t k = 0; k < H; ++k) {
        if (pb.cell == Cell::kRnn) {
          hb[k] = act[0](pb.Clip(gx[k] + hrow[k]));
        } else if (pb.cell == Cell::kGru) {
          const size_t i = static_cast<size_t>(bb * H + k);
          const double recurrent = pb.linear_before_reset ? reset[i] * hrow[2 * H + k] : hrow[2 * H + k];
          const double candidate = act[1](pb.Clip(gx[2 * H + k] + recurrent));
          hb[k] = (1.0 - z[i]) * candidate + z[i] * hb[k];
        } else {
          // Gate order i, o, f, c; peepholes P in order i, o, f.
          const double* p = pb.p.data() + d * 3 * H;
          const double i_gate = act[0](pb.Clip(gx[k] + hrow[k] + p[k] * cb[k]));
          const double f_gate = pb.input_forget
                                    ? 1.0 - i_gate
                                    : act[0](pb.Clip(gx[2 * H + k] + hrow[2 * H + k] + p[2 * H + k] * cb[k]));
          const double cand = act[1](pb.Clip(gx[3 * H + k] + hrow[3 * H + k]));
          cb[k] = f_gate * cb[k] + i_gate * cand;
          const double o_gate = act[0](pb.Clip(gx[H + k] + hrow[H + k] + p[H + k] * cb[k]));
          hb[k] = o_gate * act[2](cb[k]);
        }
        out.y[pb.YIndex(t, d, bb, k)] = hb[k];
      }
    }
  }
  for (int64_t bb = 0; bb < batch; ++bb) {
    for (int64_t k = 0; k < H; ++k) {
      out.yh[pb.StateIndex(d, bb, k)] = h[static_cast<size_t>(bb * H + k)];
      out.yc[pb.StateIndex(d, bb, k)] = c[static_cast<size_t>(bb * H + k)];
    }
  }
}

}  // namespace

States RunCells(const Problem& pb) {
  States out;
  out.y.assign(static_cast<size_t>(pb.seq * pb.directions * pb.batch * pb.hidden), 0.0);
  out.yh.assign(static_cast<size_t>(pb.directions * pb.batch * pb.hidden), 0.0);
  out.yc.assign(out.yh.size(), 0.0);
  // The two directions are independent and write disjoint elements; each
  // product inside splits into its own tiles (ParallelFor nests).
  ParallelFor(pb.directions, [&](int64_t d) { RunDirection(pb, d, out); });
  return out;
}

}  // namespace parity::ops::rnn
