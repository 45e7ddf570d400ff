// Test-only support for the body-consistency tests (header-only, included by
// *_bodies_test.cc / *_body_test.cc alone): one node run with its kernel and
// with its function body, and the two sets of outputs compared under
// spec/tolerance.json. Each test file keeps its cases, its domain and
// opsets, and any allowance for bodies that round in a narrow type, with
// its reason; this header holds only the machinery they share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "harness/compare.h"
#include "reference/eval/evaluator.h"
#include "reference/ops/reference_registry.h"

namespace parity::testing_util {

inline onnx::AttributeProto IntAttr(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}
inline onnx::AttributeProto FloatAttr(const std::string& name, float value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::FLOAT);
  a.set_f(value);
  return a;
}
inline onnx::AttributeProto StringAttr(const std::string& name, const std::string& value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(value);
  return a;
}

struct OpsetImport {
  std::string domain;  // "": the default ONNX domain
  int64_t version = 0;
};

// One node to check. Inputs and outputs are positional: an absent optional
// input is a null pointer and an output the node does not ask for is an
// empty name, as a real model spells them. The tensors are not owned; they
// must outlive every model and run made from this.
struct SingleNode {
  std::string op;
  std::string domain;                // the node's domain; "" for ONNX's
  std::vector<OpsetImport> opsets;   // what the model imports
  std::string graph_name = "body_check";
  std::vector<onnx::AttributeProto> attributes;
  std::vector<const Tensor*> inputs;
  std::vector<std::string> outputs = {"output"};
  // Whether graph inputs declare their shapes as well as their element
  // types (the contrib checks have always declared element types alone).
  bool declare_input_shapes = true;
};

// A model of the one node; graph inputs are its present inputs, named
// input_<position>, and graph outputs its named outputs.
inline LoadedModel SingleNodeModel(const SingleNode& n) {
  auto proto = std::make_shared<onnx::ModelProto>();
  proto->set_ir_version(10);
  for (const OpsetImport& import : n.opsets) {
    auto* opset = proto->add_opset_import();
    opset->set_domain(import.domain);
    opset->set_version(import.version);
  }
  onnx::GraphProto* graph = proto->mutable_graph();
  graph->set_name(n.graph_name);
  onnx::NodeProto* node = graph->add_node();
  node->set_op_type(n.op);
  if (!n.domain.empty()) node->set_domain(n.domain);
  node->set_name("checked");
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    if (n.inputs[i] == nullptr) {
      node->add_input("");
      continue;
    }
    const std::string name = "input_" + std::to_string(i);
    node->add_input(name);
    onnx::ValueInfoProto* info = graph->add_input();
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(static_cast<int32_t>(n.inputs[i]->dtype()));
    if (n.declare_input_shapes) {
      auto* shape = type->mutable_shape();
      for (int64_t d : n.inputs[i]->shape()) shape->add_dim()->set_dim_value(d);
    }
  }
  for (const std::string& name : n.outputs) {
    node->add_output(name);
    if (!name.empty()) graph->add_output()->set_name(name);
  }
  for (const auto& a : n.attributes) *node->add_attribute() = a;
  return LoadedModel{proto, n.op + " body check", ""};
}

// Runs the node once, with its kernel or (prefer_bodies) its function body
// from `functions` (null: the standard library).
inline StatusOr<std::vector<Value>> RunOnce(const SingleNode& n, bool prefer_bodies,
                                            const FunctionLibrary* functions = nullptr) {
  EvalOptions options;
  if (functions != nullptr) options.functions = functions;
  options.prefer_function_bodies = prefer_bodies;
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(SingleNodeModel(n), WithReferenceKernels(options)));
  std::vector<Value> inputs;
  for (const Tensor* in : n.inputs) {
    if (in != nullptr) inputs.push_back(Value::FromTensor(*in));
  }
  return evaluator->Run(inputs);
}

// spec/tolerance.json, read once per test binary; a policy that does not
// load fails the test that first asks and leaves an empty policy.
inline const TolerancePolicy& SpecTolerancePolicy() {
  static const TolerancePolicy* policy = [] {
    StatusOr<TolerancePolicy> loaded = TolerancePolicy::Load(PARITY_SOURCE_DIR "/spec/tolerance.json");
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return new TolerancePolicy(loaded.ok() ? std::move(loaded).value() : TolerancePolicy());
  }();
  return *policy;
}

// Half a unit in the last place at 1 (2^-p for a p-bit significand).
inline double UnitRoundoff(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat16: return std::ldexp(1.0, -11);
    case DataType::kBfloat16: return std::ldexp(1.0, -8);
    case DataType::kFloat: return std::ldexp(1.0, -24);
    default: return std::ldexp(1.0, -53);
  }
}

// `tol` widened for a body that rounds in `dtype` after each of `steps`
// steps where the kernel rounds once: `steps` ULP of dtype, and `steps` unit
// roundoffs of dtype in absolute terms (for outputs of magnitude about 1).
// Which types get this, how many steps and why is the calling file's to say.
inline Tolerance AllowStepwiseRounding(Tolerance tol, DataType dtype, int steps, std::string reason) {
  tol.ulp = std::max<int64_t>(tol.ulp, steps);
  tol.atol = std::max(tol.atol, steps * UnitRoundoff(dtype));
  tol.reason = std::move(reason);
  return tol;
}

// How the outputs of one check are compared.
struct BodyComparison {
  // The tolerance for an output whose kernel result has type `dtype`.
  std::function<Tolerance(DataType dtype)> tolerance;
  // Names of the compared outputs for failure messages, in order; where
  // empty, "graph output <k>".
  std::vector<std::string> output_names;
  // An output the policy mistrusts (a result that is zero by definition)
  // must then be equal exactly; otherwise mistrust is a failure.
  bool mistrusted_must_be_exact = false;
};

// Runs `n` with its kernel and with its body and expects every output of
// the two runs to agree (count, type, shape, and values under the
// tolerance); returns the number of outputs compared.
inline int ExpectBodyMatchesKernel(const SingleNode& n, const BodyComparison& how,
                                   const FunctionLibrary* functions = nullptr) {
  StatusOr<std::vector<Value>> kernel = RunOnce(n, false, functions);
  StatusOr<std::vector<Value>> body = RunOnce(n, true, functions);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_TRUE(body.ok()) << body.status().ToString();
  if (!kernel.ok() || !body.ok()) return 0;
  EXPECT_EQ(kernel->size(), body->size());
  int compared = 0;
  for (size_t k = 0; k < kernel->size() && k < body->size(); ++k) {
    const std::string name =
        k < how.output_names.size() ? how.output_names[k] : "graph output " + std::to_string(k);
    SCOPED_TRACE(name);
    const Tensor& expected = (*kernel)[k].tensor();
    const Tensor& actual = (*body)[k].tensor();
    EXPECT_EQ(expected.dtype(), actual.dtype());
    EXPECT_EQ(ShapeToString(expected.shape()), ShapeToString(actual.shape()));
    OutputComparison cmp = CompareValues((*kernel)[k], (*body)[k], how.tolerance(expected.dtype()));
    if (how.mistrusted_must_be_exact && cmp.verdict == CompareVerdict::kMistrusted) {
      EXPECT_EQ(cmp.stats.max_abs_error, 0.0) << cmp.message;
    } else {
      EXPECT_STREQ(CompareVerdictName(cmp.verdict), "match")
          << cmp.message << " " << cmp.stats.first_mismatch << " (max ulp error " << cmp.stats.max_ulp_error
          << ", max abs error " << cmp.stats.max_abs_error << ")";
    }
    ++compared;
  }
  return compared;
}

// The floating-point types the checks run each case in.
inline constexpr DataType kFloatTypes[] = {DataType::kFloat, DataType::kFloat16, DataType::kBfloat16};

// Seeded inputs, so that a failure reproduces.
class Draw {
 public:
  explicit Draw(uint32_t seed) : engine_(seed) {}
  std::vector<double> Uniform(int64_t n, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = d(engine_);
    return v;
  }
  int64_t Int(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(engine_); }
  // A tensor of `dtype` and `shape` uniform in [lo, hi), rounded once to dtype.
  Tensor Make(DataType dtype, const Shape& shape, double lo, double hi) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    return *Tensor::FromDoubles(dtype, shape, Uniform(n, lo, hi));
  }
  // A bool tensor (an Attention mask) that allows about three keys in four.
  Tensor Bools(const Shape& shape) {
    std::bernoulli_distribution allow(0.75);
    StatusOr<Tensor> t = Tensor::Create(DataType::kBool, shape);
    for (int64_t i = 0; i < t->size(); ++i) t->SetInt64(i, allow(engine_) ? 1 : 0);
    return std::move(t).value();
  }

 private:
  std::mt19937 engine_;
};

// "[2,3,8]", for case labels.
// The standard function library; a test that uses it fails (rather than
// crashes) when it does not load.
inline const FunctionLibrary& StandardBodies() {
  static const FunctionLibrary empty;
  StatusOr<const FunctionLibrary*> standard = FunctionLibrary::Standard();
  EXPECT_TRUE(standard.ok()) << standard.status().ToString();
  return standard.ok() ? **standard : empty;
}

inline std::string ShapeLabel(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// The domain of ONNX Parity's contrib functions (spec/functions/*.md).
inline constexpr const char* kContribDomain = "org.onnxparity.contrib";

// One node of a contrib function, its inputs and the outputs it names.
struct ContribCase {
  std::string label;  // attributes, shapes and dtype, for failure messages
  std::string op;
  std::vector<onnx::AttributeProto> attributes;
  std::vector<std::optional<Tensor>> inputs;  // nullopt: an absent optional input
  std::vector<bool> requested;                // which outputs the node names
  ShapeFacts facts;
};

// The contrib node as a one-node model that imports ONNX at 23 and the
// contrib domain at 1. Graph inputs declare element types alone. The node
// points into `c`, which must outlive it.
inline SingleNode ContribNode(const ContribCase& c, std::string graph_name) {
  SingleNode node;
  node.op = c.op;
  node.domain = kContribDomain;
  node.opsets = {{"", 23}, {kContribDomain, 1}};
  node.graph_name = std::move(graph_name);
  node.attributes = c.attributes;
  node.outputs.clear();
  node.declare_input_shapes = false;
  for (const auto& in : c.inputs) node.inputs.push_back(in ? &*in : nullptr);
  for (size_t k = 0; k < c.requested.size(); ++k) {
    node.outputs.push_back(c.requested[k] ? "output_" + std::to_string(k) : "");
  }
  return node;
}

}  // namespace parity::testing_util
