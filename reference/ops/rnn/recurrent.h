// The problem of one RNN, GRU or LSTM node once its inputs and attributes are
// read and checked (recurrent.cc), and the loop that runs its cells over the
// sequence (recurrent_cells.cc). Internal to the rnn family.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

namespace parity::ops::rnn {

enum class Cell { kRnn, kGru, kLstm };

using Activation = std::function<double(double)>;

// Every tensor in double, in the operator's own layout: W [dirs, gates*hidden,
// input], R [dirs, gates*hidden, hidden], B [dirs, 2*gates*hidden] (W bias,
// then R bias), P [dirs, 3*hidden]; X, the initial states and the outputs in
// the order `layout` says.
struct Problem {
  Cell cell = Cell::kRnn;
  int gates = 1;  // 1 (RNN), 3 (GRU), 4 (LSTM)
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, directions = 1;
  bool reverse = false;  // direction "reverse" (with two directions, the second runs backwards)
  bool layout_batch_first = false;
  bool linear_before_reset = false;
  bool input_forget = false;
  double clip = 0.0;  // 0: no clipping
  std::vector<double> x, w, r, b, h0, c0, p;
  std::vector<int64_t> lengths;              // per batch row, in [0, seq]
  std::vector<std::vector<Activation>> act;  // per direction: f (, g (, h))

  int64_t gate_rows() const { return gates * hidden; }
  bool Reversed(int64_t d) const { return reverse || d == 1; }
  // The row of X (as a [seq*batch, input] matrix) that holds (t, b).
  int64_t XRow(int64_t t, int64_t bb) const { return layout_batch_first ? bb * seq + t : t * batch + bb; }
  double X(int64_t t, int64_t bb, int64_t i) const { return x[static_cast<size_t>(XRow(t, bb) * input + i)]; }
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

// The outputs in double: Y (rows of steps past a batch row's length stay
// zero), Y_h and Y_c (the last valid states; Y_c is zero for RNN and GRU).
struct States {
  std::vector<double> y, yh, yc;
};

// Runs every direction over the sequence. The input projection X W^T of all
// steps is one GemmDouble and the recurrence H R^T one per step (over the
// batch rows), every product and sum in double; the caller rounds once.
States RunCells(const Problem& pb);

}  // namespace parity::ops::rnn
