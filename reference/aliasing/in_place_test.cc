// Tests of the evaluator's in-place mode (EvalOptions::in_place and
// writers_first) and of the checking mode (CheckAliasSharing): in-place runs
// give the functional outputs bit for bit, really write the caller's input
// buffer, keep views of it intact, and an annotation read after its write
// is shown as a difference.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "reference/aliasing/aliasing.h"
#include "reference/eval/evaluator.h"
#include "reference/model/text_syntax.h"
#include "reference/ops/attention/tensor_scatter.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

LoadedModel Load(std::string_view text, const std::vector<std::pair<std::string, std::string>>& annotations = {}) {
  StatusOr<onnx::ModelProto> proto = ParseModelText(text);
  EXPECT_TRUE(proto.ok()) << proto.status().ToString();
  if (!proto.ok()) return LoadedModel{std::make_shared<onnx::ModelProto>(), "bad.onnx", ""};
  for (const auto& [output, value] : annotations) {
    auto* prop = proto->mutable_graph()->add_metadata_props();
    prop->set_key(kAliasKeyPrefix + output);
    prop->set_value(value);
  }
  return LoadedModel{std::make_shared<onnx::ModelProto>(std::move(proto).value()), "m.onnx", ""};
}

StatusOr<std::vector<Value>> RunModel(const LoadedModel& model, const std::vector<Tensor>& inputs,
                                 EvalOptions options = {}) {
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(model, WithReferenceKernels(std::move(options))));
  std::vector<Value> values;
  for (const Tensor& t : inputs) values.push_back(Value::FromTensor(t));
  return evaluator->Run(values);
}

// 0, 1, 2, ... as float32 of `shape`.
Tensor Iota(Shape shape, double first = 0) {
  const int64_t n = *ElementCount(shape);
  std::vector<double> values;
  for (int64_t i = 0; i < n; ++i) values.push_back(first + static_cast<double>(i));
  return *Tensor::FromDoubles(DataType::kFloat, std::move(shape), values);
}

Tensor Filled(Shape shape, double value) {
  const int64_t n = *ElementCount(shape);
  return *Tensor::FromDoubles(DataType::kFloat, std::move(shape), std::vector<double>(static_cast<size_t>(n), value));
}

bool BitEqual(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() && a.byte_size() == b.byte_size() &&
         std::memcmp(a.raw_bytes(), b.raw_bytes(), a.byte_size()) == 0;
}

Alias ScatterAlias(std::string output = "present", std::string input = "past") {
  return Alias{std::move(output), std::move(input), AliasMode::kMay, AliasRegion::kScatter};
}

EvalOptions InPlace(std::vector<Alias> aliases, bool writers_first = false) {
  EvalOptions options;
  options.in_place = std::move(aliases);
  options.writers_first = writers_first;
  return options;
}

// Runs `model` functionally and in place (input 0 is the aliased cache, given
// as a tensor of the caller's own), and checks what in-place mode promises:
// the same outputs bit for bit, output 0 in the caller's buffer, and that
// buffer now holding the new cache.
void ExpectInPlaceMatchesFunctional(const LoadedModel& model, const std::vector<Tensor>& inputs, const Alias& alias) {
  StatusOr<std::vector<Value>> functional = RunModel(model, inputs);
  ASSERT_TRUE(functional.ok()) << functional.status().ToString();
  std::vector<Tensor> copies;
  for (const Tensor& t : inputs) copies.push_back(t.Clone());
  const Tensor caller_cache = copies[0];
  const Tensor before = caller_cache.Clone();
  StatusOr<std::vector<Value>> shared = RunModel(model, copies, InPlace({alias}));
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  ASSERT_EQ(shared->size(), functional->size());
  for (size_t i = 0; i < functional->size(); ++i) {
    EXPECT_TRUE(BitEqual((*functional)[i].tensor(), (*shared)[i].tensor())) << "output " << i;
  }
  // The proof of sharing: the output is the caller's buffer, which changed.
  EXPECT_EQ((*shared)[0].tensor().raw_bytes(), caller_cache.raw_bytes());
  EXPECT_TRUE(BitEqual(caller_cache, (*functional)[0].tensor()));
  EXPECT_FALSE(BitEqual(caller_cache, before)) << "the test's update changes nothing";
  // The functional run wrote nothing it was given.
  EXPECT_TRUE(BitEqual(inputs[0], before));
}

constexpr char kLinearScatter[] = R"(
  <ir_version: 10, opset_import: ["" : 24]>
  g (float[2,2,5,3] past, float[2,2,2,3] update, int64[2] at) => (float[2,2,5,3] present) {
    present = TensorScatter <axis = -2> (past, update, at)
  })";

constexpr char kCircularScatter[] = R"(
  <ir_version: 10, opset_import: ["" : 24]>
  g (float[2,3,4] past, float[2,3,3] update, int64[2] at) => (float[2,3,4] present) {
    present = TensorScatter <axis = 2, mode = "circular"> (past, update, at)
  })";

TEST(AliasInPlaceTensor, CloneOwnsItsBufferAndViewsShareTheirs) {
  const Tensor t = Iota({2, 3});
  const Tensor view = t.Reshaped({3, 2});
  const Tensor copy = t.Clone();
  EXPECT_TRUE(view.SharesBufferWith(t));
  EXPECT_FALSE(copy.SharesBufferWith(t));
  EXPECT_TRUE(BitEqual(copy, t));
  EXPECT_FALSE(Tensor().SharesBufferWith(Tensor()));
}

TEST(AliasInPlaceScatter, LinearMatchesFunctionalInTheCallersBuffer) {
  // One start for the whole batch (write_indices absent) ...
  const LoadedModel no_indices = Load(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,2,5,3] past, float[2,2,2,3] update) => (float[2,2,5,3] present) {
      present = TensorScatter (past, update)
    })");
  ExpectInPlaceMatchesFunctional(no_indices, {Iota({2, 2, 5, 3}), Iota({2, 2, 2, 3}, 100)}, ScatterAlias());
  // ... and a different start per batch entry.
  ExpectInPlaceMatchesFunctional(Load(kLinearScatter),
                                 {Iota({2, 2, 5, 3}), Iota({2, 2, 2, 3}, 100), Tensor::FromInt64s({2}, {3, 1})},
                                 ScatterAlias());
}

TEST(AliasInPlaceScatter, CircularWrapsPastTheEnd) {
  // Batch 0 writes positions 2, 3, 0; batch 1 writes 3, 0, 1.
  const std::vector<Tensor> inputs = {Iota({2, 3, 4}), Iota({2, 3, 3}, 100), Tensor::FromInt64s({2}, {2, 3})};
  ExpectInPlaceMatchesFunctional(Load(kCircularScatter), inputs, ScatterAlias());
  // Position 0 of batch 0, row 0 took update[0,0,2] (= 102) in place.
  Tensor cache = inputs[0].Clone();
  ASSERT_TRUE(RunModel(Load(kCircularScatter), {cache, inputs[1], inputs[2]}, InPlace({ScatterAlias()})).ok());
  EXPECT_EQ(cache.GetDouble(0), 102);
  EXPECT_EQ(cache.GetDouble(1), 1);  // position 1 of batch 0 is not written
}

TEST(AliasInPlaceScatter, RefusesWhatTheKernelRefusesAndWritesNothing) {
  const Tensor past = Iota({2, 2, 5, 3});
  Tensor cache = past.Clone();
  auto out = RunModel(Load(kLinearScatter), {cache, Iota({2, 2, 2, 3}), Tensor::FromInt64s({2}, {4, 0})},
                 InPlace({ScatterAlias()}));
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("write_indices[0] = 4"), std::string::npos) << out.status().ToString();
  EXPECT_TRUE(BitEqual(cache, past));
}

TEST(AliasInPlaceScatter, InPlaceFunctionNeedsTheCacheBuffer) {
  onnx::NodeProto node;
  node.set_op_type("TensorScatter");
  const Value past = Value::FromTensor(Iota({1, 3, 1}));
  const Value update = Value::FromTensor(Iota({1, 1, 1}, 9));
  KernelContext ctx(node, {&past, &update}, 24, nullptr);
  Tensor elsewhere = past.tensor().Clone();
  EXPECT_FALSE(ops::attention::TensorScatterInPlace(ctx, elsewhere).ok());
  Tensor same = past.tensor();
  ASSERT_TRUE(ops::attention::TensorScatterInPlace(ctx, same).ok());
  EXPECT_EQ(past.tensor().ToDoubles(), (std::vector<double>{9, 1, 2}));
}

TEST(AliasInPlaceWhole, ResultIsCopiedIntoTheInputBuffer) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present) {
      present = Add (past, delta)
    })");
  ExpectInPlaceMatchesFunctional(model, {Iota({2, 3}), Filled({2, 3}, 0.5)},
                                 Alias{"present", "past", AliasMode::kMust, AliasRegion::kWhole});
}

// A backend that keeps device copies of host buffers is told of each
// buffer the evaluator writes on the host (NodeKernels::host_wrote): the
// whole-region copy and the reference's own in-place scatter; never of a
// buffer its own in-place kernel wrote.
TEST(AliasInPlace, TheBackendIsToldOfEveryBufferWrittenOnTheHost) {
  std::vector<const Tensor*> told;
  Tensor whole_cache = Iota({2, 3});
  Tensor scatter_cache = Iota({2, 3, 4});
  NodeKernels kernels;
  kernels.host_wrote = [&](const Tensor& buffer) {
    told.push_back(buffer.SharesBufferWith(whole_cache) ? &whole_cache
                   : buffer.SharesBufferWith(scatter_cache) ? &scatter_cache : nullptr);
  };
  EvalOptions whole = InPlace({Alias{"present", "past", AliasMode::kMust, AliasRegion::kWhole}});
  whole.node_kernels = &kernels;
  ASSERT_TRUE(RunModel(Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present) {
      present = Add (past, delta)
    })"),
                       {whole_cache, Filled({2, 3}, 0.5)}, std::move(whole))
                  .ok());
  ASSERT_EQ(told.size(), 1u);
  EXPECT_EQ(told[0], &whole_cache);
  EvalOptions scatter = InPlace({ScatterAlias()});
  scatter.node_kernels = &kernels;
  ASSERT_TRUE(RunModel(Load(kCircularScatter), {scatter_cache, Iota({2, 3, 3}, 100), Tensor::FromInt64s({2}, {2, 3})},
                       std::move(scatter))
                  .ok());
  ASSERT_EQ(told.size(), 2u);
  EXPECT_EQ(told[1], &scatter_cache);
  // The backend's own in-place kernel writes both sides itself: nothing told.
  EvalOptions own = InPlace({ScatterAlias()});
  own.node_kernels = &kernels;
  const LoadedModel model = Load(kCircularScatter);
  const onnx::NodeProto* writer = &model.proto->graph().node(0);
  kernels.in_place[writer] = [](const KernelContext& ctx, Tensor& buffer) {
    return ops::attention::TensorScatterInPlace(ctx, buffer);
  };
  Tensor own_cache = Iota({2, 3, 4});
  ASSERT_TRUE(RunModel(model, {own_cache, Iota({2, 3, 3}, 100), Tensor::FromInt64s({2}, {2, 3})}, std::move(own)).ok());
  EXPECT_EQ(told.size(), 2u);
}

// A stand-in for a device that leaves its kernels' results where they were
// made until the host asks (NodeKernels::host_reads): each claimed node
// computes with the reference's kernel but hands the evaluator a tensor of
// NaN, its true bytes held back. A host read that does not ask first sees
// NaN, so a result that matches the reference's shows every read asked.
class LazyDevice {
 public:
  LazyDevice() {
    kernels_.host_reads = [this](const Tensor& t) { return Bring(t); };
  }
  // `node` runs on the stand-in device.
  void Claim(const onnx::NodeProto& node) {
    kernels_.kernels[&node] = [this](const KernelContext& ctx) -> StatusOr<std::vector<Value>> {
      const Kernel* kernel = ReferenceRegistry().Find(ctx.node().domain(), ctx.node().op_type(), ctx.opset());
      PARITY_ASSIGN_OR_RETURN(std::vector<Value> out, (*kernel)(ctx));
      for (Value& v : out) v = Value::FromTensor(Hold(v.tensor()));
      return out;
    };
  }
  // A copy of `value` as a device result: the host tensor NaN, the value held.
  Tensor Hold(const Tensor& value) {
    Tensor host = value.Clone();
    for (int64_t i = 0; i < host.size(); ++i) host.SetDouble(i, std::nan(""));
    held_.push_back({host, value.Clone()});
    return host;
  }
  Status Bring(const Tensor& t) {
    for (auto it = held_.begin(); it != held_.end(); ++it) {
      if (!it->first.SharesBufferWith(t)) continue;
      std::memcpy(it->first.mutable_raw_bytes(), it->second.raw_bytes(), it->second.byte_size());
      brought_.push_back(it->first);
      held_.erase(it);
      return Status::Ok();
    }
    return Status::Ok();
  }
  // Whole-region aliases filled on the stand-in device (copy_into): the
  // buffer's host bytes become NaN, its true value held; a buffer written
  // on the host is counted (host_wrote).
  void CopyOnDevice() {
    kernels_.copy_into = [this](const Tensor& from, const Tensor& into) -> StatusOr<bool> {
      for (const auto& [host, value] : held_) {
        if (!host.SharesBufferWith(from)) continue;
        const Tensor true_value = value.Clone();
        Tensor behind = into;
        for (int64_t i = 0; i < behind.size(); ++i) behind.SetDouble(i, std::nan(""));
        held_.push_back({into, true_value});
        ++copied_;
        return true;
      }
      return false;
    };
    kernels_.host_wrote = [this](const Tensor&) { ++host_wrote_; };
  }
  EvalOptions Options(EvalOptions options = {}) const {
    options.node_kernels = &kernels_;
    return options;
  }
  size_t copied() const { return copied_; }
  size_t host_wrote() const { return host_wrote_; }
  size_t brought() const { return brought_.size(); }
  size_t held() const { return held_.size(); }

 private:
  NodeKernels kernels_;
  std::vector<std::pair<Tensor, Tensor>> held_;  // (the host tensor handed out, its true value)
  std::vector<Tensor> brought_;
  size_t copied_ = 0, host_wrote_ = 0;
};

void ExpectSameValues(const StatusOr<std::vector<Value>>& got, const StatusOr<std::vector<Value>>& want) {
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  ASSERT_TRUE(want.ok()) << want.status().ToString();
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    EXPECT_TRUE(BitEqual((*got)[i].tensor(), (*want)[i].tensor())) << "output " << i;
  }
}

// A node on the host reads a device result only after asking for it, and a
// result no host node reads is never brought back by the evaluator.
TEST(AliasInPlaceHostReads, AHostNodeAsksForTheDeviceResultsItReads) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] x, float[2,3] y) => (float[2,3] z, float[2,3] s) {
      s = Add (x, y)
      r = Relu (s)
      z = Mul (r, y)
    })");
  LazyDevice device;
  device.Claim(model.proto->graph().node(0));
  const std::vector<Tensor> inputs = {Iota({2, 3}, -3), Filled({2, 3}, 0.5)};
  StatusOr<std::vector<Value>> lazy = RunModel(model, inputs, device.Options());
  ASSERT_TRUE(lazy.ok()) << lazy.status().ToString();
  EXPECT_EQ(device.brought(), 1u);  // Relu read s
  EXPECT_EQ(device.held(), 0u);
  ExpectSameValues(lazy, RunModel(model, inputs));
  // Read by no host node, s as a graph output stays where it was made: the
  // session asks for the outputs it returns (reference_session.h).
  const LoadedModel unread = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] x, float[2,3] y) => (float[2,3] s) {
      s = Add (x, y)
    })");
  LazyDevice quiet;
  quiet.Claim(unread.proto->graph().node(0));
  ASSERT_TRUE(RunModel(unread, inputs, quiet.Options()).ok());
  EXPECT_EQ(quiet.brought(), 0u);
  EXPECT_EQ(quiet.held(), 1u);
}

// A Loop body's output that names an outer value made on the device is
// read by the Loop kernel on the host, when it stacks the iterations.
TEST(AliasInPlaceHostReads, ALoopAsksForTheOuterDeviceResultsItsBodyReturns) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x, float[2] y) => (float[3,2] stacked) {
      s = Add (x, y)
      trips = Constant <value = int64 {3}> ()
      go = Constant <value = bool {1}> ()
      stacked = Loop (trips, go) <body = loop_body (int64 i, bool go_in) => (bool go_out, float[2] s) {
        go_out = Identity (go_in)
      }>
    })");
  LazyDevice device;
  device.Claim(model.proto->graph().node(0));
  const std::vector<Tensor> inputs = {Iota({2}, 1), Filled({2}, 0.5)};
  ExpectSameValues(RunModel(model, inputs, device.Options()), RunModel(model, inputs));
  EXPECT_EQ(device.brought(), 1u);
}

// A whole-region alias whose writer returns the buffer itself (a view of
// the input) writes nothing, so the backend is told of no write.
TEST(AliasInPlaceHostReads, AWholeAliasThatIsTheBufferAlreadyTellsOfNoWrite) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past) => (float[2,3] present) {
      present = Identity (past)
    })");
  int told = 0;
  NodeKernels kernels;
  kernels.host_wrote = [&](const Tensor&) { ++told; };
  EvalOptions options = InPlace({Alias{"present", "past", AliasMode::kMust, AliasRegion::kWhole}});
  options.node_kernels = &kernels;
  ASSERT_TRUE(RunModel(model, {Iota({2, 3})}, std::move(options)).ok());
  EXPECT_EQ(told, 0);
}

// The in-place paths read on the host too: a whole-region alias copies its
// writer's result into the buffer, the reference's in-place scatter reads
// its update, and a cache kept from a device run is read where it is copied.
TEST(AliasInPlaceHostReads, InPlaceWritesAskForTheDeviceResultsTheyRead) {
  const LoadedModel whole = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present) {
      present = Add (past, delta)
    })");
  LazyDevice device;
  device.Claim(whole.proto->graph().node(0));
  const std::vector<Tensor> inputs = {Iota({2, 3}), Filled({2, 3}, 0.5)};
  const StatusOr<std::vector<Value>> want = RunModel(whole, inputs);
  ExpectSameValues(RunModel(whole, {inputs[0].Clone(), inputs[1]},
                            device.Options(InPlace({Alias{"present", "past", AliasMode::kMust, AliasRegion::kWhole}}))),
                   want);
  EXPECT_EQ(device.brought(), 1u);

  // A device that fills the buffer itself: the writer's result never comes
  // back and the evaluator writes nothing on the host; the output (the
  // buffer) comes back once, when the session returns it.
  LazyDevice copying;
  copying.Claim(whole.proto->graph().node(0));
  copying.CopyOnDevice();
  StatusOr<std::vector<Value>> filled =
      RunModel(whole, {inputs[0].Clone(), inputs[1]},
               copying.Options(InPlace({Alias{"present", "past", AliasMode::kMust, AliasRegion::kWhole}})));
  ASSERT_TRUE(filled.ok()) << filled.status().ToString();
  EXPECT_TRUE(std::isnan((*filled)[0].tensor().GetDouble(0)));  // behind on the host until asked
  ASSERT_TRUE(copying.Bring((*filled)[0].tensor()).ok());
  ExpectSameValues(filled, want);
  EXPECT_EQ(copying.copied(), 1u);
  EXPECT_EQ(copying.host_wrote(), 0u);
  EXPECT_EQ(copying.brought(), 1u);
  EXPECT_EQ(copying.held(), 1u);  // the writer's own result, never read on the host

  const LoadedModel scatter = Load(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,3,4] past, float[2,3,3] update, int64[2] at) => (float[2,3,4] present) {
      doubled = Add (update, update)
      present = TensorScatter <axis = 2, mode = "circular"> (past, doubled, at)
    })");
  LazyDevice scatter_device;
  scatter_device.Claim(scatter.proto->graph().node(0));
  const Tensor at = Tensor::FromInt64s({2}, {2, 3});
  const StatusOr<std::vector<Value>> scattered = RunModel(scatter, {Iota({2, 3, 4}), Iota({2, 3, 3}, 100), at});
  // The cache itself a device result of an earlier run, held back too.
  const Tensor kept = scatter_device.Hold(Iota({2, 3, 4}));
  ExpectSameValues(RunModel(scatter, {kept, Iota({2, 3, 3}, 100), at}, scatter_device.Options(InPlace({ScatterAlias()}))),
                   scattered);
  EXPECT_EQ(scatter_device.brought(), 2u);  // the cache and the doubled update
  EXPECT_EQ(scatter_device.held(), 0u);
}

TEST(AliasInPlaceWhole, ShapeMismatchNamesBothValues) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,1] extra) => (float[2,4] present) {
      present = Concat <axis = 1> (past, extra)
    })");
  Tensor cache = Iota({2, 3});
  auto out = RunModel(model, {cache, Iota({2, 1})}, InPlace({Alias{"present", "past"}}));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(out.status().message().find("output 'present' is float32[2,4]"), std::string::npos)
      << out.status().ToString();
  EXPECT_NE(out.status().message().find("input 'past' is float32[2,3]"), std::string::npos);
  EXPECT_TRUE(BitEqual(cache, Iota({2, 3})));
}

TEST(AliasInPlaceViews, AViewTakenBeforeTheWriteKeepsTheOldValue) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[1,4,2] past, float[1,1,2] update) => (float[1,4,2] present, float[1,4,2] view, float[8] flat) {
      view = Identity (past)
      shape = Constant <value = int64[1] {8}> ()
      flat = Reshape (past, shape)
      present = TensorScatter (past, update)
    })");
  const Tensor past = Iota({1, 4, 2});
  // The views really are views (else this test would prove nothing).
  auto functional = RunModel(model, {past, Filled({1, 1, 2}, 50)});
  ASSERT_TRUE(functional.ok()) << functional.status().ToString();
  ASSERT_TRUE((*functional)[1].tensor().SharesBufferWith(past));
  ASSERT_TRUE((*functional)[2].tensor().SharesBufferWith(past));

  Tensor cache = past.Clone();
  auto shared = RunModel(model, {cache, Filled({1, 1, 2}, 50)}, InPlace({ScatterAlias()}));
  ASSERT_TRUE(shared.ok()) << shared.status().ToString();
  EXPECT_EQ((*shared)[0].tensor().raw_bytes(), cache.raw_bytes());
  EXPECT_TRUE(BitEqual((*shared)[1].tensor(), past));
  EXPECT_EQ((*shared)[2].tensor().ToDoubles(), past.ToDoubles());
  EXPECT_EQ(cache.GetDouble(0), 50);
}

TEST(AliasInPlaceViews, TheSameTensorPassedTwiceIsCopiedFirst) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[1,3,1] past, float[1,3,1] other, float[1,1,1] update) => (float[1,3,1] present, float[1,3,1] y) {
      present = TensorScatter (past, update)
      y = Identity (other)
    })");
  Tensor cache = Iota({1, 3, 1});
  auto out = RunModel(model, {cache, cache, Filled({1, 1, 1}, 7)}, InPlace({ScatterAlias()}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().raw_bytes(), cache.raw_bytes());
  EXPECT_EQ(cache.ToDoubles(), (std::vector<double>{7, 1, 2}));
  EXPECT_EQ((*out)[1].tensor().ToDoubles(), (std::vector<double>{0, 1, 2}));
}

TEST(AliasInPlaceViews, OutsideInPlaceModeNothingIsWritten) {
  const Tensor past = Iota({2, 2, 5, 3});
  auto out = RunModel(Load(kLinearScatter), {past, Iota({2, 2, 2, 3}, 100), Tensor::FromInt64s({2}, {0, 0})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_FALSE((*out)[0].tensor().SharesBufferWith(past));
  EXPECT_TRUE(BitEqual(past, Iota({2, 2, 5, 3})));
}

// y reads the cache but is not an ancestor of its writer: listed first, it
// runs first, unless writers_first moves the writer ahead of it.
constexpr char kReadAfterWrite[] = R"(
  <ir_version: 10, opset_import: ["" : 24]>
  g (float[1,1,3,2] past, float[1,1,1,2] update, int64[1] at) => (float[1,1,3,2] y, float[1,1,3,2] present) {
    one = Constant <value = float {1}> ()
    y = Add (past, one)
    present = TensorScatter (past, update, at)
  })";

TEST(AliasInPlaceOrder, WritersFirstRunsTheWriterBeforeIndependentReaders) {
  const LoadedModel model = Load(kReadAfterWrite);
  const std::vector<Tensor> inputs = {Filled({1, 1, 3, 2}, 0), Filled({1, 1, 1, 2}, 5), Tensor::FromInt64s({1}, {1})};
  auto in_order = RunModel(model, {inputs[0].Clone(), inputs[1], inputs[2]}, InPlace({ScatterAlias()}));
  ASSERT_TRUE(in_order.ok()) << in_order.status().ToString();
  EXPECT_EQ((*in_order)[0].tensor().ToDoubles(), std::vector<double>(6, 1));
  auto first = RunModel(model, {inputs[0].Clone(), inputs[1], inputs[2]}, InPlace({ScatterAlias()}, true));
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_EQ((*first)[0].tensor().ToDoubles(), (std::vector<double>{1, 1, 6, 6, 1, 1}));
}

TEST(AliasInPlaceCheck, FindsAReadAfterTheWrite) {
  const LoadedModel model = Load(kReadAfterWrite, {{"present", "input=past;region=scatter"}});
  const Tensor past = Filled({1, 1, 3, 2}, 0);
  std::vector<Value> inputs = {Value::FromTensor(past), Value::FromTensor(Filled({1, 1, 1, 2}, 5)),
                               Value::FromTensor(Tensor::FromInt64s({1}, {1}))};
  StatusOr<AliasCheck> check = CheckAliasSharing(model, inputs, WithReferenceKernels());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  ASSERT_EQ(check->differences.size(), 1u);
  // y = past + 1 is 1 everywhere; read after the write, row 1 is 5 + 1.
  EXPECT_EQ(check->differences[0],
            "output 'y': sharing 'present' with 'past' changed it (max abs error 5, first at index [0,0,1,0])");
  EXPECT_TRUE(BitEqual(past, Filled({1, 1, 3, 2}, 0))) << "the check wrote the caller's input";
  // The annotation is indeed one the rules refuse.
  std::vector<Status> problems = ValidateAliases(model);
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].message().rfind(kAliasRuleReadAfterWrite, 0), 0u) << problems[0].message();
}

TEST(AliasInPlaceCheck, NamesBothAliasesOfOneInput) {
  const LoadedModel model = Load(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[1,2,1] past, float[1,1,1] u, float[1,1,1] v) => (float[1,2,1] a, float[1,2,1] b) {
      a = Add (past, u)
      b = Sub (past, v)
    })",
                                 {{"a", "input=past"}, {"b", "input=past"}});
  std::vector<Value> inputs = {Value::FromTensor(Iota({1, 2, 1}, 1)), Value::FromTensor(Filled({1, 1, 1}, 10)),
                               Value::FromTensor(Filled({1, 1, 1}, 1))};
  StatusOr<AliasCheck> check = CheckAliasSharing(model, inputs, WithReferenceKernels());
  ASSERT_TRUE(check.ok()) << check.status().ToString();
  ASSERT_FALSE(check->differences.empty());
  std::string all;
  for (const auto& d : check->differences) all += d + "\n";
  EXPECT_NE(all.find("sharing 'a' with 'past'"), std::string::npos) << all;
}

TEST(AliasInPlaceCheck, ValidModelsChangeNothing) {
  const LoadedModel scatter = Load(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,3,4] past, float[2,3,3] update, int64[2] at) => (float[2,3,4] present, float[2,3,3] y) {
      one = Constant <value = float {1}> ()
      y = Add (update, one)
      present = TensorScatter <axis = 2, mode = "circular"> (past, update, at)
    })",
                                   {{"present", "input=past;mode=must;region=scatter"}});
  const LoadedModel whole = Load(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2,3] past, float[2,3] delta) => (float[2,3] present, float[2,3] scaled) {
      scaled = Mul (past, delta)
      present = Add (scaled, delta)
    })",
                                 {{"present", "input=past"}});
  for (const LoadedModel* model : {&scatter, &whole}) {
    EXPECT_TRUE(ValidateAliases(*model).empty());
  }
  auto s = CheckAliasSharing(scatter, {Value::FromTensor(Iota({2, 3, 4})), Value::FromTensor(Iota({2, 3, 3}, 50)),
                                       Value::FromTensor(Tensor::FromInt64s({2}, {2, 3}))},
                             WithReferenceKernels());
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_TRUE(s->differences.empty()) << s->differences[0];
  auto w = CheckAliasSharing(whole, {Value::FromTensor(Iota({2, 3})), Value::FromTensor(Filled({2, 3}, 2))}, WithReferenceKernels());
  ASSERT_TRUE(w.ok()) << w.status().ToString();
  EXPECT_TRUE(w->differences.empty()) << w->differences[0];
}

TEST(AliasInPlaceErrors, NameTheValues) {
  const LoadedModel model = Load(kLinearScatter);
  const std::vector<Tensor> inputs = {Iota({2, 2, 5, 3}), Iota({2, 2, 2, 3}), Tensor::FromInt64s({2}, {0, 0})};
  auto no_input = RunModel(model, inputs, InPlace({ScatterAlias("present", "cache")}));
  ASSERT_FALSE(no_input.ok());
  EXPECT_NE(no_input.status().message().find("input 'cache'"), std::string::npos) << no_input.status().ToString();
  auto no_writer = RunModel(model, inputs, InPlace({ScatterAlias("next", "past")}));
  ASSERT_FALSE(no_writer.ok());
  EXPECT_NE(no_writer.status().message().find("'next'"), std::string::npos) << no_writer.status().ToString();

  const LoadedModel bad_key = Load(kLinearScatter, {{"present", "input=past;region=rows"}});
  std::vector<Value> values;
  for (const Tensor& t : inputs) values.push_back(Value::FromTensor(t));
  auto check = CheckAliasSharing(bad_key, values, WithReferenceKernels());
  ASSERT_FALSE(check.ok());
  EXPECT_EQ(check.status().message().rfind(kAliasRuleKey, 0), 0u) << check.status().ToString();
}

}  // namespace
}  // namespace parity
