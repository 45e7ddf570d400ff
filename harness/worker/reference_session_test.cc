// Tests of the reference adapter's session in process
// (adapters/reference/reference_session.h): stateful runs keep Values, not
// bytes, and in-place mode keeps one buffer for an aliased cache across
// steps, with results identical to the functional session at every step.
#include "adapters/reference/reference_session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "harness/worker/worker_test_util.h"
#include "reference/ops/reference_registry.h"

namespace parity::adapters {
namespace {

using worker::test_util::ScatterCacheModel;

struct OwnedValue {
  std::string name;
  std::string bytes;
};

OwnedValue TensorValue(const std::string& name, const Tensor& tensor) {
  onnx::TensorProto proto;
  TensorToProto(tensor, &proto);
  proto.set_name(name);
  return {name, proto.SerializeAsString()};
}

std::unique_ptr<ReferenceSession> MakeSession(const std::string& model, bool in_place) {
  auto created = ReferenceSession::Create(model.data(), model.size(), nullptr, in_place);
  EXPECT_TRUE(created.ok()) << created.status().ToString();
  if (!created.ok()) return nullptr;
  std::unique_ptr<ReferenceSession> session = std::move(created).value();
  const parity_state_binding binding = {"present", "past"};
  const Status bound = session->BindState(&binding, 1);
  EXPECT_TRUE(bound.ok()) << bound.ToString();
  return session;
}

// Step `step` of the cache: row `step` gets {step+1, -3(step+1)}; step 0 also
// gives the cache, 0.5 everywhere.
Status RunStep(ReferenceSession& session, int step) {
  std::vector<OwnedValue> owned;
  if (step == 0) {
    PARITY_ASSIGN_OR_RETURN(Tensor past, Tensor::FromDoubles(DataType::kFloat, {1, 4, 2}, std::vector<double>(8, 0.5)));
    owned.push_back(TensorValue("past", past));
  }
  PARITY_ASSIGN_OR_RETURN(Tensor update, Tensor::FromDoubles(DataType::kFloat, {1, 1, 2},
                                                             {double(step + 1), -3.0 * (step + 1)}));
  owned.push_back(TensorValue("update", update));
  owned.push_back(TensorValue("index", Tensor::FromInt64s({1}, {step})));
  std::vector<parity_value> inputs;
  for (const OwnedValue& v : owned) {
    inputs.push_back({v.name.c_str(), PARITY_VALUE_TENSOR, v.bytes.data(), v.bytes.size()});
  }
  return session.Run(inputs.data(), inputs.size());
}

const void* KeptBuffer(ReferenceSession& session) {
  const Value* kept = session.kept_state("past");
  return kept && kept->is_tensor() ? kept->tensor().raw_bytes() : nullptr;
}

std::string ReadStateBytes(ReferenceSession& session) {
  parity_value value{};
  const Status read = session.ReadState("past", &value);
  EXPECT_TRUE(read.ok()) << read.ToString();
  return read.ok() ? std::string(static_cast<const char*>(value.data), value.size) : "";
}

// Whether the evaluator writes an aliased input's buffer (EvalOptions::in_place
// is honoured), seen on the evaluator alone: the output shares the input's buffer.
bool EvaluatorWritesInPlace(const onnx::ModelProto& model) {
  LoadedModel loaded{std::make_shared<const onnx::ModelProto>(model), "scatter_cache", ""};
  auto aliases = ValidAliases(loaded);
  if (!aliases.ok()) return false;
  EvalOptions options;
  options.in_place = *aliases;
  auto evaluator = Evaluator::Create(loaded, WithReferenceKernels(options));
  if (!evaluator.ok()) return false;
  auto past = Tensor::FromDoubles(DataType::kFloat, {1, 4, 2}, std::vector<double>(8, 0));
  auto update = Tensor::FromDoubles(DataType::kFloat, {1, 1, 2}, {1, 2});
  if (!past.ok() || !update.ok()) return false;
  auto results = (*evaluator)->Run({Value::FromTensor(*past), Value::FromTensor(*update),
                                    Value::FromTensor(Tensor::FromInt64s({1}, {0}))});
  return results.ok() && (*results)[0].tensor().SharesBufferWith(*past);
}

TEST(ReferenceSessionTest, InPlaceSessionKeepsOneCacheBufferWithFunctionalResults) {
  const onnx::ModelProto proto = ScatterCacheModel();
  const std::string model = proto.SerializeAsString();
  std::unique_ptr<ReferenceSession> in_place = MakeSession(model, true);
  std::unique_ptr<ReferenceSession> functional = MakeSession(model, false);
  ASSERT_TRUE(in_place && functional);
  EXPECT_EQ(in_place->in_place_aliases(), 1u);  // the annotation is the binding
  EXPECT_EQ(functional->in_place_aliases(), 0u);
  const bool evaluator_in_place = EvaluatorWritesInPlace(proto);

  const void* first_in_place = nullptr;
  const void* last_functional = nullptr;
  for (int step = 0; step < 4; ++step) {
    ASSERT_TRUE(RunStep(*in_place, step).ok());
    ASSERT_TRUE(RunStep(*functional, step).ok());
    // Only the unbound output is serialized; the cache stays a Value.
    ASSERT_EQ(in_place->output_count(), 1u);
    ASSERT_EQ(functional->output_count(), 1u);
    EXPECT_STREQ(in_place->outputs()[0].name, "total");
    const parity_value& a = in_place->outputs()[0];
    const parity_value& b = functional->outputs()[0];
    EXPECT_EQ(std::string(static_cast<const char*>(a.data), a.size),
              std::string(static_cast<const char*>(b.data), b.size))
        << "step " << step;
    EXPECT_EQ(ReadStateBytes(*in_place), ReadStateBytes(*functional)) << "step " << step;

    const void* kept_in_place = KeptBuffer(*in_place);
    const void* kept_functional = KeptBuffer(*functional);
    ASSERT_NE(kept_in_place, nullptr);
    ASSERT_NE(kept_functional, nullptr);
    if (step == 0) first_in_place = kept_in_place;
    if (evaluator_in_place) {
      EXPECT_EQ(kept_in_place, first_in_place) << "step " << step << ": the in-place cache moved";
    }
    // Each functional step makes a new cache while the last is still alive.
    if (step > 0) {
      EXPECT_NE(kept_functional, last_functional) << "step " << step;
    }
    last_functional = kept_functional;
  }
  if (!evaluator_in_place) {
    GTEST_SKIP() << "the evaluator does not honour EvalOptions::in_place yet: results were checked, "
                    "the kept buffer was not";
  }
}

TEST(ReferenceSessionTest, BindStateAndReadStateRefuseWhatTheyCannotServe) {
  const std::string model = ScatterCacheModel().SerializeAsString();
  auto created = ReferenceSession::Create(model.data(), model.size(), nullptr, false);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  ReferenceSession& session = **created;
  parity_value value{};
  const Status unbound = session.ReadState("past", &value);
  EXPECT_EQ(unbound.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(unbound.message().find("not a bound input"), std::string::npos) << unbound.message();

  const parity_state_binding bad_input = {"present", "future"};
  const Status no_input = session.BindState(&bad_input, 1);
  EXPECT_EQ(no_input.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_input.message().find("'future', which is not an input"), std::string::npos) << no_input.message();
  const parity_state_binding twice[] = {{"present", "past"}, {"total", "past"}};
  const Status bound_twice = session.BindState(twice, 2);
  EXPECT_NE(bound_twice.message().find("'past' is bound twice"), std::string::npos) << bound_twice.message();

  const parity_state_binding good = {"present", "past"};
  ASSERT_TRUE(session.BindState(&good, 1).ok());
  EXPECT_NE(session.BindState(&good, 1).message().find("once only"), std::string::npos);
  const Status before_run = session.ReadState("past", &value);
  EXPECT_NE(before_run.message().find("no run has finished yet"), std::string::npos) << before_run.message();
  // The first run must give the cache: nothing is kept yet.
  EXPECT_NE(RunStep(session, 1).message().find("'past' was given no value"), std::string::npos);
  ASSERT_TRUE(RunStep(session, 0).ok());
  EXPECT_TRUE(session.ReadState("past", &value).ok());
}

// A stand-in device for a backend whose kernels leave their results where
// they made them (NodeKernels::host_reads): each lowered node computes with
// the reference's kernel on the true values of its inputs, and hands the
// evaluator a host tensor of NaN whose true value waits here until the
// host asks for it.
class StandInDevice {
 public:
  class Node final : public LoweredNode {
   public:
    explicit Node(StandInDevice* device) : device_(device) {}
    StatusOr<std::vector<Value>> Run(const KernelContext& ctx) override {
      std::vector<Value> truth(ctx.input_count());
      std::vector<const Value*> inputs;
      for (size_t i = 0; i < ctx.input_count(); ++i) {
        if (!ctx.has_input(i)) {
          inputs.push_back(nullptr);
          continue;
        }
        truth[i] = ctx.input(i).is_tensor() ? Value::FromTensor(device_->Truth(ctx.tensor(i))) : ctx.input(i);
        inputs.push_back(&truth[i]);
      }
      const KernelContext on_device(ctx.node(), std::move(inputs), ctx.opset(), nullptr);
      const Kernel* kernel = ReferenceRegistry().Find(ctx.node().domain(), ctx.node().op_type(), ctx.opset());
      PARITY_ASSIGN_OR_RETURN(std::vector<Value> out, (*kernel)(on_device));
      for (Value& v : out) v = Value::FromTensor(device_->Hold(v.tensor()));
      return out;
    }

   private:
    StandInDevice* device_;
  };

  StandInDevice() {
    for (const char* op : {"TensorScatter", "ReduceSum"}) {
      lowering_.Add(op, [this](const NodeView&) -> StatusOr<std::unique_ptr<LoweredNode>> {
        return std::unique_ptr<LoweredNode>(std::make_unique<Node>(this));
      });
    }
    lowering_.host_reads = [this](const Tensor& t) {
      for (auto& [host, value] : held_) {
        if (!host.SharesBufferWith(t) || brought_.count(host.raw_bytes())) continue;
        std::memcpy(host.mutable_raw_bytes(), value.raw_bytes(), value.byte_size());
        brought_.insert(host.raw_bytes());
        ++copies_;
      }
      return Status::Ok();
    };
    backend_.lowering = &lowering_;
  }
  Tensor Hold(const Tensor& value) {
    Tensor host = value.Clone();
    for (int64_t i = 0; i < host.size(); ++i) host.SetDouble(i, std::nan(""));
    held_.emplace_back(host, value.Clone());
    return host;
  }
  // What the device holds for `host`, or `host` itself when it is the host's own.
  Tensor Truth(const Tensor& host) const {
    for (const auto& [held, value] : held_) {
      if (held.SharesBufferWith(host)) return value;
    }
    return host;
  }
  const SessionBackend* backend() const { return &backend_; }
  int copies() const { return copies_; }

 private:
  Lowering lowering_;
  SessionBackend backend_;
  std::vector<std::pair<Tensor, Tensor>> held_;  // (the host tensor handed out, its true value)
  std::set<const void*> brought_;
  int copies_ = 0;
};

// Only what goes back to the host is brought back: each step's unbound
// output, and the cache when a state is read; the bound cache, made on the
// device and read there by the next step, never is. The values are the
// reference's at every step.
TEST(ReferenceSessionTest, ADevicesResultsComeBackOnlyWhereTheHostReadsThem) {
  const std::string model = ScatterCacheModel().SerializeAsString();
  StandInDevice device;
  auto created = ReferenceSession::Create(model.data(), model.size(), nullptr, false, "", device.backend());
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  std::unique_ptr<ReferenceSession> on_device = std::move(created).value();
  std::unique_ptr<ReferenceSession> reference = MakeSession(model, false);
  ASSERT_TRUE(reference);
  const parity_state_binding binding = {"present", "past"};
  ASSERT_TRUE(on_device->BindState(&binding, 1).ok());
  ASSERT_EQ(on_device->partition()->fallback_count(), 0u);
  for (int step = 0; step < 3; ++step) {
    ASSERT_TRUE(RunStep(*on_device, step).ok());
    ASSERT_TRUE(RunStep(*reference, step).ok());
    EXPECT_EQ(device.copies(), step + 1) << "only 'total' came back at step " << step;
    ASSERT_EQ(on_device->output_count(), 1u);
    const parity_value& a = on_device->outputs()[0];
    const parity_value& b = reference->outputs()[0];
    EXPECT_EQ(std::string(static_cast<const char*>(a.data), a.size), std::string(static_cast<const char*>(b.data), b.size))
        << "step " << step;
  }
  EXPECT_EQ(ReadStateBytes(*on_device), ReadStateBytes(*reference));
  EXPECT_EQ(device.copies(), 4);  // the cache, once, for read_state
}

TEST(ReferenceSessionTest, InPlaceSessionRefusesAnInvalidAnnotation) {
  onnx::ModelProto proto = ScatterCacheModel();
  // TensorScatter writes 'present'; an annotation on 'total' with region
  // scatter breaks ALIAS-SCATTER (and its type differs: ALIAS-TYPE).
  onnx::StringStringEntryProto* entry = proto.mutable_graph()->add_metadata_props();
  entry->set_key("ai.onnx.alias.total");
  entry->set_value("input=update;region=scatter");
  const std::string model = proto.SerializeAsString();
  auto in_place = ReferenceSession::Create(model.data(), model.size(), nullptr, true);
  ASSERT_FALSE(in_place.ok());
  EXPECT_EQ(AbiCode(in_place.status().code()), PARITY_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(in_place.status().message().rfind("ALIAS-", 0), 0u) << in_place.status().message();
  EXPECT_TRUE(ReferenceSession::Create(model.data(), model.size(), nullptr, false).ok());
}

}  // namespace
}  // namespace parity::adapters
