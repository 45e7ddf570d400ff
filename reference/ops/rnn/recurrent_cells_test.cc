// Tests of RunCells (recurrent_cells.cc) against a yardstick: the plain
// loop the kernel ran before (one batch row at a time, every dot product in
// index order), which also carries, for each value, a bound on how far the
// batched products may move it: the error bound of each sum from its length,
// propagated through the activations, gates and steps. Covers RNN, GRU
// (with and without linear_before_reset) and LSTM (peepholes, input_forget),
// every direction, both layouts, clip, sequence lengths from 0 to seq and
// initial states; and bit-identical results for every thread count.
#include "reference/ops/rnn/recurrent.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "reference/core/parallel.h"

namespace parity::ops::rnn {
namespace {

constexpr double kUnit = 0x1p-53;  // unit roundoff of double

// gamma_n: the relative error bound of a sum of n terms in double, in any
// order, with or without fused multiply-adds.
double Gamma(int64_t n) { return static_cast<double>(n) * kUnit / (1.0 - static_cast<double>(n) * kUnit); }

// A value of the yardstick and a bound `e` on |batched - yardstick|, both
// sides computing the same expression from operands at most `e` apart.
struct Approx {
  double v = 0, e = 0;
};

Approx Add(Approx a, Approx b) {
  // |a' + b' - (a + b)| <= ea + eb, plus one rounding on each side.
  return {a.v + b.v, a.e + b.e + 2 * kUnit * (std::fabs(a.v) + std::fabs(b.v) + a.e + b.e)};
}

Approx Mul(Approx a, Approx b) {
  const double ma = std::fabs(a.v) + a.e, mb = std::fabs(b.v) + b.e;
  return {a.v * b.v, std::fabs(a.v) * b.e + std::fabs(b.v) * a.e + a.e * b.e + 2 * kUnit * ma * mb};
}

// The activations of the tests, each with its Lipschitz constant.
struct TestActivation {
  Activation f;
  double lipschitz;
};

std::vector<TestActivation> Activations() {
  return {
      {[](double x) { return 1.0 / (1.0 + std::exp(-x)); }, 0.25},                   // sigmoid
      {[](double x) { return std::tanh(x); }, 1.0},                                  // tanh
      {[](double x) { return x / (1.0 + std::fabs(x)); }, 1.0},                      // softsign
      {[](double x) { return std::max(x, 0.0); }, 1.0},                              // relu
      {[](double x) { return std::max(0.0, std::min(1.0, 0.2 * x + 0.5)); }, 0.2},  // hardsigmoid
  };
}

// f(x) on both sides: the Lipschitz bound on the moved input, and a few
// units of roundoff of each side's evaluation (an absolute part for the
// cancellation inside hardsigmoid's 0.2 x + 0.5).
Approx Apply(const TestActivation& act, Approx x) {
  const double y = act.f(x.v);
  return {y, act.lipschitz * x.e + 8 * kUnit * (1.0 + std::fabs(x.v) + x.e + std::fabs(y))};
}

Approx Clip(const Problem& pb, Approx x) { return {pb.Clip(x.v), x.e}; }

// A problem with its activations' Lipschitz constants, per direction.
struct Case {
  Problem pb;
  std::vector<std::vector<TestActivation>> acts;
};

// The yardstick's outputs and their bounds, element by element.
struct Yardstick {
  States values, bounds;
};

// Row g of direction d's W times x_t, plus Wb: exact inputs, so only the
// two sides' roundings differ.
Approx InputGate(const Problem& pb, int64_t d, int64_t g, int64_t t, int64_t bb) {
  const int64_t gh = pb.gate_rows();
  double sum = 0, abs = 0;
  for (int64_t i = 0; i < pb.input; ++i) {
    const double term = pb.w[static_cast<size_t>((d * gh + g) * pb.input + i)] * pb.X(t, bb, i);
    sum += term;
    abs += std::fabs(term);
  }
  const double bias = pb.b[static_cast<size_t>(d * 2 * gh + g)];
  return {sum + bias, 2 * Gamma(pb.input + 1) * (abs + std::fabs(bias))};
}

// Row g of direction d's R times v, plus Rb; v's elements carry bounds.
Approx RecurrentGate(const Problem& pb, int64_t d, int64_t g, const std::vector<Approx>& v) {
  const int64_t gh = pb.gate_rows(), H = pb.hidden;
  double sum = 0, abs = 0, moved = 0;
  for (int64_t j = 0; j < H; ++j) {
    const double r = pb.r[static_cast<size_t>((d * gh + g) * H + j)];
    sum += r * v[static_cast<size_t>(j)].v;
    abs += std::fabs(r * v[static_cast<size_t>(j)].v);
    moved += std::fabs(r) * v[static_cast<size_t>(j)].e;
  }
  const double bias = std::fabs(pb.b[static_cast<size_t>(d * 2 * gh + gh + g)]);
  // The batched side sums r * v' (within `moved` of r * v) with its own roundoff.
  return {sum + pb.b[static_cast<size_t>(d * 2 * gh + gh + g)],
          moved + Gamma(H + 1) * (abs + moved + bias) + Gamma(H + 1) * (abs + bias)};
}

Yardstick RunYardstick(const Case& c) {
  const Problem& pb = c.pb;
  const int64_t H = pb.hidden;
  Yardstick out;
  for (States* s : {&out.values, &out.bounds}) {
    s->y.assign(static_cast<size_t>(pb.seq * pb.directions * pb.batch * H), 0.0);
    s->yh.assign(static_cast<size_t>(pb.directions * pb.batch * H), 0.0);
    s->yc.assign(s->yh.size(), 0.0);
  }
  for (int64_t d = 0; d < pb.directions; ++d) {
    const auto& act = c.acts[static_cast<size_t>(d)];
    const double* p = pb.cell == Cell::kLstm ? pb.p.data() + d * 3 * H : nullptr;
    for (int64_t bb = 0; bb < pb.batch; ++bb) {
      std::vector<Approx> h(static_cast<size_t>(H)), cs(static_cast<size_t>(H));
      for (int64_t k = 0; k < H; ++k) {
        h[static_cast<size_t>(k)] = {pb.h0[pb.StateIndex(d, bb, k)], 0};
        if (pb.cell == Cell::kLstm) cs[static_cast<size_t>(k)] = {pb.c0[pb.StateIndex(d, bb, k)], 0};
      }
      const int64_t len = pb.lengths[static_cast<size_t>(bb)];
      for (int64_t step = 0; step < len; ++step) {
        const int64_t t = pb.Reversed(d) ? len - 1 - step : step;
        std::vector<Approx> next_h(static_cast<size_t>(H)), next_c = cs;
        auto gate = [&](int64_t g, const std::vector<Approx>& v) {
          return Add(InputGate(pb, d, g, t, bb), RecurrentGate(pb, d, g, v));
        };
        if (pb.cell == Cell::kRnn) {
          for (int64_t k = 0; k < H; ++k) next_h[static_cast<size_t>(k)] = Apply(act[0], Clip(pb, gate(k, h)));
        } else if (pb.cell == Cell::kGru) {
          std::vector<Approx> z(static_cast<size_t>(H)), reset(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
          for (int64_t k = 0; k < H; ++k) {
            const size_t kk = static_cast<size_t>(k);
            z[kk] = Apply(act[0], Clip(pb, gate(k, h)));
            reset[kk] = Apply(act[0], Clip(pb, gate(H + k, h)));
            rh[kk] = Mul(reset[kk], h[kk]);
          }
          for (int64_t k = 0; k < H; ++k) {
            const size_t kk = static_cast<size_t>(k);
            const Approx recurrent = pb.linear_before_reset
                                         ? Mul(reset[kk], RecurrentGate(pb, d, 2 * H + k, h))
                                         : RecurrentGate(pb, d, 2 * H + k, rh);
            const Approx candidate = Apply(act[1], Clip(pb, Add(InputGate(pb, d, 2 * H + k, t, bb), recurrent)));
            next_h[kk] = Add(Mul(Add({1.0, 0}, {-z[kk].v, z[kk].e}), candidate), Mul(z[kk], h[kk]));
          }
        } else {
          for (int64_t k = 0; k < H; ++k) {
            const size_t kk = static_cast<size_t>(k);
            const Approx i_gate = Apply(act[0], Clip(pb, Add(gate(k, h), Mul({p[k], 0}, cs[kk]))));
            const Approx f_gate = pb.input_forget
                                      ? Add({1.0, 0}, {-i_gate.v, i_gate.e})
                                      : Apply(act[0], Clip(pb, Add(gate(2 * H + k, h), Mul({p[2 * H + k], 0}, cs[kk]))));
            const Approx cand = Apply(act[1], Clip(pb, gate(3 * H + k, h)));
            next_c[kk] = Add(Mul(f_gate, cs[kk]), Mul(i_gate, cand));
            const Approx o_gate = Apply(act[0], Clip(pb, Add(gate(H + k, h), Mul({p[H + k], 0}, next_c[kk]))));
            next_h[kk] = Mul(o_gate, Apply(act[2], next_c[kk]));
          }
          cs = next_c;
        }
        h = next_h;
        for (int64_t k = 0; k < H; ++k) {
          out.values.y[pb.YIndex(t, d, bb, k)] = h[static_cast<size_t>(k)].v;
          out.bounds.y[pb.YIndex(t, d, bb, k)] = h[static_cast<size_t>(k)].e;
        }
      }
      for (int64_t k = 0; k < H; ++k) {
        out.values.yh[pb.StateIndex(d, bb, k)] = h[static_cast<size_t>(k)].v;
        out.bounds.yh[pb.StateIndex(d, bb, k)] = h[static_cast<size_t>(k)].e;
        out.values.yc[pb.StateIndex(d, bb, k)] = cs[static_cast<size_t>(k)].v;
        out.bounds.yc[pb.StateIndex(d, bb, k)] = cs[static_cast<size_t>(k)].e;
      }
    }
  }
  return out;
}

struct Options {
  Cell cell = Cell::kRnn;
  int directions = 1;
  bool reverse = false, batch_first = false, linear_before_reset = false, input_forget = false;
  double clip = 0;
  bool peepholes = false;
  int64_t seq = 1, batch = 1, input = 1, hidden = 1;
};

std::vector<double> Uniform(int64_t count, double scale, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = u(rng);
  return v;
}

// Random weights scaled so that pre-activations stay near 1: W rows sum to
// about 1 in size, R rows to at most 1/2 (the recurrence stays tame over
// the steps), biases, peepholes and initial states in [-1/2, 1/2] or [-1, 1].
Case MakeCase(const Options& o, std::mt19937& rng) {
  Case c;
  Problem& pb = c.pb;
  pb.cell = o.cell;
  pb.gates = o.cell == Cell::kRnn ? 1 : o.cell == Cell::kGru ? 3 : 4;
  pb.seq = o.seq;
  pb.batch = o.batch;
  pb.input = o.input;
  pb.hidden = o.hidden;
  pb.directions = o.directions;
  pb.reverse = o.reverse;
  pb.layout_batch_first = o.batch_first;
  pb.linear_before_reset = o.linear_before_reset;
  pb.input_forget = o.input_forget;
  pb.clip = o.clip;
  const int64_t gh = pb.gate_rows(), dirs = pb.directions, H = pb.hidden;
  pb.x = Uniform(pb.seq * pb.batch * pb.input, 1.0, rng);
  pb.w = Uniform(dirs * gh * pb.input, 2.0 / static_cast<double>(pb.input), rng);
  pb.r = Uniform(dirs * gh * H, 0.5 / static_cast<double>(H), rng);
  pb.b = Uniform(dirs * 2 * gh, 0.5, rng);
  pb.h0 = Uniform(dirs * pb.batch * H, 1.0, rng);
  if (o.cell == Cell::kLstm) {
    pb.c0 = Uniform(dirs * pb.batch * H, 1.0, rng);
    pb.p = o.peepholes ? Uniform(dirs * 3 * H, 0.5, rng) : std::vector<double>(static_cast<size_t>(dirs * 3 * H), 0.0);
  }
  // Lengths anywhere in [0, seq], the longest always seq.
  pb.lengths.resize(static_cast<size_t>(pb.batch));
  for (int64_t& len : pb.lengths) len = static_cast<int64_t>(rng() % static_cast<uint32_t>(pb.seq + 1));
  pb.lengths[rng() % pb.lengths.size()] = pb.seq;
  const std::vector<TestActivation> all = Activations();
  const size_t per_dir = o.cell == Cell::kRnn ? 1 : o.cell == Cell::kGru ? 2 : 3;
  c.acts.resize(static_cast<size_t>(dirs));
  pb.act.resize(static_cast<size_t>(dirs));
  for (int64_t d = 0; d < dirs; ++d) {
    for (size_t i = 0; i < per_dir; ++i) {
      const TestActivation& a = all[rng() % all.size()];
      c.acts[static_cast<size_t>(d)].push_back(a);
      pb.act[static_cast<size_t>(d)].push_back(a.f);
    }
  }
  return c;
}

void ExpectWithinBounds(const std::vector<double>& got, const std::vector<double>& want,
                        const std::vector<double>& bound, const char* what, const std::string& label) {
  ASSERT_EQ(got.size(), want.size()) << what << " " << label;
  for (size_t i = 0; i < got.size(); ++i) {
    // The bounds stay near 1e-15 here: a wrong gate, bias or step is far out.
    ASSERT_LT(bound[i], 1e-10) << what << " " << label << " element " << i;
    EXPECT_LE(std::fabs(got[i] - want[i]), bound[i]) << what << " " << label << " element " << i;
  }
}

TEST(RecurrentCells, AgreeWithThePlainLoopForEveryCellDirectionAndLayout) {
  std::mt19937 rng(17);
  int covered = 0;
  for (Cell cell : {Cell::kRnn, Cell::kGru, Cell::kLstm}) {
    for (int direction = 0; direction < 3; ++direction) {  // forward, reverse, bidirectional
      for (int variant = 0; variant < 4; ++variant) {
        Options o;
        o.cell = cell;
        o.directions = direction == 2 ? 2 : 1;
        o.reverse = direction == 1;
        o.batch_first = variant & 1;
        o.linear_before_reset = cell == Cell::kGru && (variant & 2);
        o.input_forget = cell == Cell::kLstm && (variant & 2);
        o.peepholes = cell == Cell::kLstm && variant != 1;
        o.clip = variant == 3 ? 0.75 : 0;
        o.seq = 1 + static_cast<int64_t>(rng() % 5);
        o.batch = 1 + static_cast<int64_t>(rng() % 4);
        o.input = 1 + static_cast<int64_t>(rng() % 6);
        o.hidden = 1 + static_cast<int64_t>(rng() % 5);
        const Case c = MakeCase(o, rng);
        const std::string label = "cell " + std::to_string(static_cast<int>(cell)) + " direction " +
                                  std::to_string(direction) + " variant " + std::to_string(variant);
        const States got = RunCells(c.pb);
        const Yardstick want = RunYardstick(c);
        ExpectWithinBounds(got.y, want.values.y, want.bounds.y, "Y", label);
        ExpectWithinBounds(got.yh, want.values.yh, want.bounds.yh, "Y_h", label);
        ExpectWithinBounds(got.yc, want.values.yc, want.bounds.yc, "Y_c", label);
        ++covered;
      }
    }
  }
  EXPECT_EQ(covered, 36);
}

// Sizes at which the BLAS blocks and vectorises its sums, so that they
// really differ from the plain loop's order.
TEST(RecurrentCells, LargerProductsStayWithinTheBound) {
  std::mt19937 rng(19);
  for (Cell cell : {Cell::kRnn, Cell::kGru, Cell::kLstm}) {
    for (bool variant : {false, true}) {
      Options o;
      o.cell = cell;
      o.directions = 2;
      o.batch_first = variant;
      o.linear_before_reset = variant;
      o.input_forget = variant;
      o.peepholes = true;
      o.seq = 6;
      o.batch = 5;
      o.input = 53;
      o.hidden = 37;
      const Case c = MakeCase(o, rng);
      const std::string label = "cell " + std::to_string(static_cast<int>(cell)) + " variant " + std::to_string(variant);
      const States got = RunCells(c.pb);
      const Yardstick want = RunYardstick(c);
      ExpectWithinBounds(got.y, want.values.y, want.bounds.y, "Y", label);
      ExpectWithinBounds(got.yh, want.values.yh, want.bounds.yh, "Y_h", label);
      ExpectWithinBounds(got.yc, want.values.yc, want.bounds.yc, "Y_c", label);
    }
  }
}

TEST(RecurrentCells, RowsPastTheirLengthStayZeroAndKeepTheirState) {
  std::mt19937 rng(23);
  Options o;
  o.cell = Cell::kLstm;
  o.directions = 2;
  o.seq = 4;
  o.batch = 3;
  o.input = 2;
  o.hidden = 3;
  Case c = MakeCase(o, rng);
  c.pb.lengths = {0, 2, 4};
  // Sigmoid, tanh, tanh: no activation that returns exact zeros.
  const std::vector<TestActivation> all = Activations();
  for (auto& act : c.pb.act) act = {all[0].f, all[1].f, all[1].f};
  const States got = RunCells(c.pb);
  for (int64_t d = 0; d < 2; ++d) {
    for (int64_t k = 0; k < o.hidden; ++k) {
      // Length 0: no step at all, so Y_h and Y_c are the initial states.
      EXPECT_EQ(got.yh[c.pb.StateIndex(d, 0, k)], c.pb.h0[c.pb.StateIndex(d, 0, k)]);
      EXPECT_EQ(got.yc[c.pb.StateIndex(d, 0, k)], c.pb.c0[c.pb.StateIndex(d, 0, k)]);
      for (int64_t t = 0; t < o.seq; ++t) EXPECT_EQ(got.y[c.pb.YIndex(t, d, 0, k)], 0.0);
      // Length 2: steps 2 and 3 are zero in both directions.
      for (int64_t t = 2; t < o.seq; ++t) EXPECT_EQ(got.y[c.pb.YIndex(t, d, 1, k)], 0.0);
      EXPECT_NE(got.y[c.pb.YIndex(1, d, 1, k)], 0.0);
    }
    // The reverse direction's last step is t = 0: Y_h is Y there.
    for (int64_t k = 0; k < o.hidden; ++k) {
      EXPECT_EQ(got.yh[c.pb.StateIndex(1, 1, k)], got.y[c.pb.YIndex(0, 1, 1, k)]);
      EXPECT_EQ(got.yh[c.pb.StateIndex(0, 1, k)], got.y[c.pb.YIndex(1, 0, 1, k)]);
    }
  }
}

class RecurrentThreadsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetThreadCount(0); }
};

// Products past GemmDouble's split size (several tiles each), both
// directions side by side: the same bits for 1, 2 and 3 threads.
TEST_F(RecurrentThreadsTest, BitIdenticalForEveryThreadCount) {
  std::mt19937 rng(29);
  Options lstm;
  lstm.cell = Cell::kLstm;
  lstm.directions = 2;
  lstm.peepholes = true;
  lstm.seq = 3;
  lstm.batch = 20;
  lstm.input = 200;
  lstm.hidden = 300;
  Options gru = lstm;
  gru.cell = Cell::kGru;
  gru.batch = 30;
  gru.input = 100;
  gru.hidden = 400;
  for (const Options& o : {lstm, gru}) {
    const Case c = MakeCase(o, rng);
    std::vector<States> results;
    for (int threads : {1, 2, 3}) {
      SetThreadCount(threads);
      results.push_back(RunCells(c.pb));
    }
    for (size_t t = 1; t < results.size(); ++t) {
      for (auto member : {&States::y, &States::yh, &States::yc}) {
        const std::vector<double>& a = results[0].*member;
        const std::vector<double>& b = results[t].*member;
        ASSERT_EQ(a.size(), b.size());
        EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0) << t + 1 << " threads";
      }
    }
  }
}

}  // namespace
}  // namespace parity::ops::rnn
