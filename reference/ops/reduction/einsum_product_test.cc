// Tests of Einsum's batched-product path (einsum_product.cc): which
// equations take it, agreement with a plain summation over every label
// assignment within the error bound of the sum lengths, on random
// equations, permutations, broadcasts and ellipses, for the reference and
// the conventional arithmetic (the plain loop), and bit-identical results
// for every thread count.
#include "reference/ops/reduction/einsum_product.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "reference/core/parallel.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/test_util.h"

namespace parity::ops {
namespace {

constexpr double kUnit = 0x1p-53;  // unit roundoff of double

// gamma_n: the bound on the relative error of a sum of n terms in double,
// whatever its order (and with or without fused multiply-adds).
double Gamma(int64_t n) { return static_cast<double>(n) * kUnit / (1.0 - static_cast<double>(n) * kUnit); }

// One operand of the yardstick: letters (no ellipsis), shape, values.
struct Operand {
  std::string labels;
  Shape shape;
  std::vector<double> values;
};

// The yardstick: every assignment of the labels in turn (size-1 dimensions
// broadcast), with, per output element, the sum of |products| and the
// number of terms.
struct Plain {
  Shape shape;
  std::vector<double> sum, abs_sum;
  int64_t terms = 0;
};

Plain PlainEinsum(const Operand& a, const Operand& b, const std::string& out) {
  std::map<char, int64_t> extent;
  for (const Operand* op : {&a, &b}) {
    for (size_t d = 0; d < op->labels.size(); ++d) {
      extent[op->labels[d]] = std::max(extent[op->labels[d]], op->shape[d]);
    }
  }
  std::string summed;
  for (const auto& [label, size] : extent) {
    if (out.find(label) == std::string::npos) summed += label;
  }
  const std::string all = out + summed;
  Plain p;
  for (char label : out) p.shape.push_back(extent[label]);
  int64_t out_count = 1, total = 1;
  for (char label : out) out_count *= extent[label];
  for (char label : all) total *= extent[label];
  p.sum.assign(static_cast<size_t>(out_count), 0.0);
  p.abs_sum.assign(static_cast<size_t>(out_count), 0.0);
  p.terms = out_count == 0 ? 0 : total / out_count;
  auto flat = [&](const Operand& op, const std::map<char, int64_t>& at) {
    int64_t index = 0;
    for (size_t d = 0; d < op.labels.size(); ++d) index = index * op.shape[d] + (op.shape[d] == 1 ? 0 : at.at(op.labels[d]));
    return op.values[static_cast<size_t>(index)];
  };
  std::map<char, int64_t> at;
  for (int64_t step = 0; step < total; ++step) {
    int64_t rest = step;
    for (size_t j = all.size(); j-- > 0;) {
      at[all[j]] = rest % extent[all[j]];
      rest /= extent[all[j]];
    }
    const int64_t o = step / p.terms;  // outputs are the outer labels
    const double product = flat(a, at) * flat(b, at);
    p.sum[static_cast<size_t>(o)] += product;
    p.abs_sum[static_cast<size_t>(o)] += std::fabs(product);
  }
  return p;
}

std::vector<double> RandomValues(int64_t count, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = u(rng);
  return v;
}

int64_t Count(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

// The kernel on its own context, so that the conventional arithmetic
// (float32_sums, which keeps the plain loop) can be chosen.
Tensor RunKernel(const std::string& equation, const Tensor& a, const Tensor& b, bool float32_sums) {
  onnx::NodeProto node;
  node.set_op_type("Einsum");
  node.add_input("a");
  node.add_input("b");
  node.add_output("y");
  onnx::AttributeProto* attr = node.add_attribute();
  attr->set_name("equation");
  attr->set_type(onnx::AttributeProto::STRING);
  attr->set_s(equation);
  const Value va = Value::FromTensor(a), vb = Value::FromTensor(b);
  KernelContext ctx(node, {&va, &vb}, 12, nullptr);
  ctx.set_float32_sums(float32_sums);
  StatusOr<std::vector<Value>> out = EinsumKernel(ctx);
  EXPECT_TRUE(out.ok()) << out.status().ToString();
  return out.ok() ? (*out)[0].tensor() : Tensor();
}

// Expects the kernel's output on float64 operands, by either path, within
// both sums' error bound of the yardstick; float32 operands add the one
// rounding to float32.
void ExpectMatchesPlain(const std::string& equation, const Operand& a, const Operand& b, const std::string& plain_out,
                        DataType dtype) {
  const Tensor ta = testing::Make(dtype, a.shape, a.values), tb = testing::Make(dtype, b.shape, b.values);
  // The yardstick reads the operands as the kernel holds them.
  Operand ra = a, rb = b;
  ra.values = ta.ToDoubles();
  rb.values = tb.ToDoubles();
  const Plain exact = PlainEinsum(ra, rb, plain_out);
  for (bool float32_sums : {false, true}) {
    const Tensor got = RunKernel(equation, ta, tb, float32_sums);
    ASSERT_EQ(got.shape(), exact.shape) << equation;
    for (int64_t i = 0; i < got.size(); ++i) {
      const size_t s = static_cast<size_t>(i);
      double bound = 2 * Gamma(exact.terms) * exact.abs_sum[s];
      if (dtype == DataType::kFloat) bound += std::ldexp(std::fabs(exact.sum[s]) + bound, -24);
      EXPECT_LE(std::fabs(got.GetDouble(i) - exact.sum[s]), bound)
          << equation << " element " << i << (float32_sums ? " (plain loop)" : " (product)");
    }
  }
}

TEST(EinsumProductTest, PlanRolesAndRefusals) {
  auto ids = [](const std::string& s) {
    std::vector<int> v;
    for (char c : s) v.push_back(c);
    return v;
  };
  const std::optional<EinsumProductPlan> plan = PlanEinsumProduct(ids("bji"), ids("kbj"), ids("kib"));
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->batch, ids("b"));
  EXPECT_EQ(plan->m, ids("i"));
  EXPECT_EQ(plan->n, ids("k"));
  EXPECT_EQ(plan->k, ids("j"));
  // An outer product (no k) and a full contraction (no m, n, batch) qualify.
  EXPECT_TRUE(PlanEinsumProduct(ids("i"), ids("j"), ids("ij")).has_value());
  EXPECT_TRUE(PlanEinsumProduct(ids("ij"), ids("ij"), ids("")).has_value());
  // A diagonal, and labels summed inside one operand, do not.
  EXPECT_FALSE(PlanEinsumProduct(ids("ii"), ids("ij"), ids("j")).has_value());
  EXPECT_FALSE(PlanEinsumProduct(ids("ij"), ids("jk"), ids("k")).has_value());
  EXPECT_FALSE(PlanEinsumProduct(ids("ij"), ids("kl"), ids("ik")).has_value());
}

// Random contractions: up to two labels in each role, every term and the
// output in a random order, and now and then a batch or summed dimension of
// size 1 in one operand (broadcast).
TEST(EinsumProductTest, RandomContractionsAgreeWithThePlainSum) {
  std::mt19937 rng(7);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
  for (int trial = 0; trial < 60; ++trial) {
    std::string letters = "abcdefghpqrsBCDE";
    std::shuffle(letters.begin(), letters.end(), rng);
    size_t next = 0;
    auto take = [&](int n) {
      const std::string s = letters.substr(next, static_cast<size_t>(n));
      next += static_cast<size_t>(n);
      return s;
    };
    const std::string batch = take(pick(3)), m = take(pick(3)), n = take(pick(3)), k = take(pick(3));
    std::string a_labels = batch + m + k, b_labels = batch + k + n, out = batch + m + n;
    std::shuffle(a_labels.begin(), a_labels.end(), rng);
    std::shuffle(b_labels.begin(), b_labels.end(), rng);
    std::shuffle(out.begin(), out.end(), rng);
    std::map<char, int64_t> extent;
    for (char c : batch + m + n + k) extent[c] = 1 + pick(4);
    Operand a{a_labels, {}, {}}, b{b_labels, {}, {}};
    for (Operand* op : {&a, &b}) {
      for (char c : op->labels) {
        const bool shared = batch.find(c) != std::string::npos || k.find(c) != std::string::npos;
        op->shape.push_back(shared && pick(5) == 0 ? 1 : extent[c]);
      }
      op->values = RandomValues(Count(op->shape), rng);
    }
    const std::string equation = a_labels + "," + b_labels + "->" + out;
    std::vector<int> ia(a_labels.begin(), a_labels.end()), ib(b_labels.begin(), b_labels.end()),
        io(out.begin(), out.end());
    ASSERT_TRUE(PlanEinsumProduct(ia, ib, io).has_value()) << equation;
    ExpectMatchesPlain(equation, a, b, out, trial % 3 == 0 ? DataType::kFloat : DataType::kDouble);
  }
}

TEST(EinsumProductTest, EllipsisBatchesBroadcastAndImplicitOutput) {
  std::mt19937 rng(11);
  // A has two ellipsis dimensions, B one of size 1: both broadcast. The
  // yardstick names them x and y.
  const Operand a{"xyij", {2, 3, 4, 5}, RandomValues(2 * 3 * 4 * 5, rng)};
  const Operand b{"yjk", {1, 5, 6}, RandomValues(5 * 6, rng)};
  ExpectMatchesPlain("...ij,...jk->...ik", a, b, "xyik", DataType::kDouble);
  ExpectMatchesPlain("...ij,...jk", a, b, "xyik", DataType::kDouble);
  // The output puts the ellipsis last and sums j.
  ExpectMatchesPlain("...ij,...jk->ik...", a, b, "ikxy", DataType::kDouble);
}

// Products past the plain-loop size go through the BLAS; permuted terms
// and output, and a broadcast batch.
TEST(EinsumProductTest, LargerProductsThroughTheBlas) {
  std::mt19937 rng(13);
  const Operand a{"jbi", {30, 3, 40}, RandomValues(30 * 3 * 40, rng)};
  const Operand b{"kjb", {50, 30, 1}, RandomValues(50 * 30, rng)};
  ExpectMatchesPlain("jbi,kjb->ibk", a, b, "ibk", DataType::kDouble);
  ExpectMatchesPlain("jbi,kjb->ibk", a, b, "ibk", DataType::kFloat);
}

TEST(EinsumProductTest, EmptyDimensionsAndEmptySums) {
  std::mt19937 rng(3);
  // j of size 0: every output element is an empty sum, zero.
  const Tensor y = RunKernel("ij,jk->ik", testing::Make(DataType::kDouble, {2, 0}, {}),
                             testing::Make(DataType::kDouble, {0, 3}, {}), false);
  testing::ExpectNear(y, {2, 3}, std::vector<double>(6, 0.0), 0.0);
  // A batch of size 0 gives an empty output.
  const Tensor e = RunKernel("bij,bjk->bik", testing::Make(DataType::kDouble, {0, 2, 2}, {}),
                             testing::Make(DataType::kDouble, {0, 2, 2}, {}), false);
  EXPECT_EQ(e.shape(), Shape({0, 2, 2}));
}

TEST(EinsumProductTest, SpecialValuesPropagate) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  const Tensor a = testing::Make(DataType::kDouble, {2, 2}, {inf, 1, nan, 2});
  const Tensor b = testing::Make(DataType::kDouble, {2, 2}, {1, -1, 3, 4});
  for (bool float32_sums : {false, true}) {
    const Tensor y = RunKernel("ij,jk->ik", a, b, float32_sums);
    ASSERT_EQ(y.shape(), Shape({2, 2}));
    EXPECT_EQ(y.GetDouble(0), inf);   // inf * 1 + 1 * 3
    EXPECT_EQ(y.GetDouble(1), -inf);  // inf * -1 + 1 * 4
    EXPECT_TRUE(std::isnan(y.GetDouble(2)));
    EXPECT_TRUE(std::isnan(y.GetDouble(3)));
  }
}

TEST(EinsumProductTest, IntegersStayExact) {
  // 2^31 * 2^31 + 1 * 1 = 2^62 + 1 needs 63 bits: no double holds it.
  const Tensor a = testing_util::MakeInts(DataType::kInt64, {1, 2}, {int64_t{1} << 31, 1});
  const Tensor b = testing_util::MakeInts(DataType::kInt64, {2, 1}, {int64_t{1} << 31, 1});
  const Tensor y = RunKernel("ij,jk->ik", a, b, false);
  EXPECT_EQ(y.GetInt64(0), (int64_t{1} << 62) + 1);
}

class EinsumThreadsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetThreadCount(0); }
};

void ExpectSameBitsForEveryThreadCount(const std::string& equation, const Tensor& a, const Tensor& b) {
  std::vector<Tensor> results;
  for (int threads : {1, 2, 3}) {
    SetThreadCount(threads);
    results.push_back(RunKernel(equation, a, b, false));
  }
  for (size_t t = 1; t < results.size(); ++t) {
    ASSERT_EQ(results[t].shape(), results[0].shape());
    for (int64_t i = 0; i < results[0].size(); ++i) {
      const float x = static_cast<float>(results[0].GetDouble(i)), y = static_cast<float>(results[t].GetDouble(i));
      ASSERT_EQ(std::memcmp(&x, &y, sizeof x), 0) << equation << " element " << i << " with " << t + 1 << " threads";
    }
  }
}

// Three products of 600 x 600 x 70, each split into tiles inside its own
// task, and a transposed output; then 5000 small products, many to a task.
// The same bits for 1, 2 and 3 threads.
TEST_F(EinsumThreadsTest, BitIdenticalForEveryThreadCount) {
  std::mt19937 rng(5);
  ExpectSameBitsForEveryThreadCount(
      "bij,jbk->kbi", testing::Make(DataType::kFloat, {3, 600, 70}, RandomValues(3 * 600 * 70, rng)),
      testing::Make(DataType::kFloat, {70, 3, 600}, RandomValues(70 * 3 * 600, rng)));
  ExpectSameBitsForEveryThreadCount(
      "bij,bjk->bik", testing::Make(DataType::kFloat, {5000, 4, 8}, RandomValues(5000 * 4 * 8, rng)),
      testing::Make(DataType::kFloat, {5000, 8, 4}, RandomValues(5000 * 8 * 4, rng)));
}

}  // namespace
}  // namespace parity::ops
