// Tests of graph execution: opset resolution, topological order, model-local
// functions (overloads, nesting, attribute references and defaults),
// expansion of spec function bodies, subgraphs with outer scope, errors.
#include "reference/eval/evaluator.h"

#include <gtest/gtest.h>

#include "reference/model/text_syntax.h"
#include "reference/ops/reference_registry.h"

namespace parity {
namespace {

StatusOr<std::vector<Value>> RunText(const std::string& text, const std::vector<Tensor>& inputs,
                                     EvalOptions options = {}) {
  PARITY_ASSIGN_OR_RETURN(onnx::ModelProto proto, ParseModelText(text));
  LoadedModel model{std::make_shared<onnx::ModelProto>(proto), "test model", ""};
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(model, WithReferenceKernels(options)));
  std::vector<Value> values;
  for (const auto& t : inputs) values.push_back(Value::FromTensor(t));
  return evaluator->Run(values);
}

Tensor Floats(Shape shape, std::vector<double> values) {
  return *Tensor::FromDoubles(DataType::kFloat, std::move(shape), values);
}

TEST(OpRegistryTest, ResolvesTheLatestSinceVersionAtOrBelowTheOpset) {
  OpRegistry registry;
  auto kernel = [](int tag) {
    return [tag](const KernelContext&) -> StatusOr<std::vector<Value>> {
      return std::vector<Value>{Value::FromTensor(Tensor::Scalar(DataType::kInt64, tag))};
    };
  };
  registry.Register("Op", 1, kernel(1));
  registry.Register("ai.onnx", "Op", 13, kernel(13));
  int since = 0;
  EXPECT_EQ(registry.Find("", "Op", 0), nullptr);
  ASSERT_NE(registry.Find("", "Op", 12, &since), nullptr);
  EXPECT_EQ(since, 1);
  ASSERT_NE(registry.Find("ai.onnx", "Op", 13, &since), nullptr);
  EXPECT_EQ(since, 13);
  ASSERT_NE(registry.Find("", "Op", 21, &since), nullptr);
  EXPECT_EQ(since, 13);
  EXPECT_EQ(registry.Find("com.other", "Op", 13), nullptr);
}

TEST(EvaluatorTest, RunsNodesGivenOutOfOrder) {
  // The second node is listed first; the evaluator sorts them.
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x) => (float[2] z) {
      z = Mul (y, y)
      y = Add (x, x)
    })", {Floats({2}, {1, 3})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetDouble(0), 4.0);
  EXPECT_EQ((*out)[0].tensor().GetDouble(1), 36.0);
}

TEST(EvaluatorTest, LocalFunctionOverloadsAreDistinct) {
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[1] x) => (float[1] a, float[1] b) {
      a = local.Scale:twice (x)
      b = local.Scale:thrice (x)
    }
    <domain: "local", opset_import: ["" : 21], overload: "twice">
    Scale (x) => (y) { y = Add (x, x) }
    <domain: "local", opset_import: ["" : 21], overload: "thrice">
    Scale (x) => (y) { t = Add (x, x)  y = Add (t, x) }
  )", {Floats({1}, {5})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetDouble(0), 10.0);
  EXPECT_EQ((*out)[1].tensor().GetDouble(0), 15.0);
}

TEST(EvaluatorTest, NestedFunctionsWithAttributeReferencesAndDefaults) {
  // Outer passes its attribute on to Inner by reference; Inner's default
  // applies when the caller gives none.
  const std::string functions = R"(
    <domain: "local", opset_import: ["" : 21, "local" : 1]>
    Outer <k> (x) => (y) { y = local.Inner <k: float = @k> (x) }
    <domain: "local", opset_import: ["" : 21]>
    Inner <k: float = 0.5> (x) => (y) {
      kv = Constant <value_float: float = @k> ()
      y = Mul (x, kv)
    }
    <domain: "local", opset_import: ["" : 21, "local" : 1]>
    UsesDefault (x) => (y) { y = local.Inner (x) }
  )";
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[1] x) => (float[1] a, float[1] b) {
      a = local.Outer <k: float = 3.0> (x)
      b = local.UsesDefault (x)
    })" + functions, {Floats({1}, {2})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetDouble(0), 6.0);
  EXPECT_EQ((*out)[1].tensor().GetDouble(0), 1.0);
}

TEST(EvaluatorTest, OperatorWithoutKernelExpandsItsSpecFunctionBody) {
  FunctionLibrary library;
  StatusOr<onnx::FunctionProto> f = ParseFunctionText(R"(
    <domain: "org.test", opset_import: ["" : 21]>
    AddThenSquare (a, b) => (y) { s = Add (a, b)  y = Mul (s, s) }
  )");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(library.Add(*f, "test").ok());
  EvalOptions options;
  options.functions = &library;
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21, "org.test" : 1]>
    g (float[1] a, float[1] b) => (float[1] y) { y = org.test.AddThenSquare (a, b) }
  )", {Floats({1}, {1}), Floats({1}, {2})}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetDouble(0), 9.0);
}

TEST(EvaluatorTest, StandardLibraryHoldsSwiGluAndTheEvaluatorUsesIt) {
  StatusOr<const FunctionLibrary*> loaded = FunctionLibrary::Standard();
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const FunctionLibrary& standard = **loaded;
  ASSERT_NE(standard.Find("", "SwiGLU"), nullptr) << "spec/functions/swiglu.onnxtxt not loaded";
  // A registry without SwiGLU forces the expansion.
  OpRegistry registry;
  const OpRegistry& full = ReferenceRegistry();
  for (const auto& [domain, op] : full.Operators()) {
    if (op == "SwiGLU") continue;
    for (int v : {1, 6, 7, 11, 13, 14, 21}) {
      int since = 0;
      if (const Kernel* k = full.Find(domain, op, v, &since)) registry.Register(domain, op, since, *k);
    }
  }
  EvalOptions options;
  options.registry = &registry;
  auto out = RunText(R"(
    <ir_version: 11, opset_import: ["" : 28]>
    g (float[2] a, float[2] b) => (float[2] y) { y = SwiGLU <alpha: float = 2.0> (a, b) }
  )", {Floats({2}, {1, -1}), Floats({2}, {3, 4})}, options);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const double s1 = 1.0 / (1.0 + std::exp(-2.0)), s2 = 1.0 / (1.0 + std::exp(2.0));
  EXPECT_NEAR((*out)[0].tensor().GetDouble(0), 1 * s1 * 3, 1e-6);
  EXPECT_NEAR((*out)[0].tensor().GetDouble(1), -1 * s2 * 4, 1e-6);
}

TEST(EvaluatorTest, PreferFunctionBodiesExpandsABodyEvenWhereAKernelExists) {
  // A test-only SwiGLU body that adds, so the result tells which one ran.
  FunctionLibrary library;
  StatusOr<onnx::FunctionProto> f = ParseFunctionText(R"(
    <domain: "", opset_import: ["" : 28]>
    SwiGLU <alpha: float = 1.0> (A, B) => (Y) { Y = Add (A, B) }
  )");
  ASSERT_TRUE(f.ok()) << f.status().ToString();
  ASSERT_TRUE(library.Add(*f, "test").ok());
  const std::string model = R"(
    <ir_version: 11, opset_import: ["" : 28]>
    g (float[1] a, float[1] b) => (float[1] y) { y = SwiGLU (a, b) }
  )";
  EvalOptions options;
  options.functions = &library;
  auto kernel = RunText(model, {Floats({1}, {2}), Floats({1}, {3})}, options);
  ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
  EXPECT_NEAR((*kernel)[0].tensor().GetDouble(0), 2 * 3 / (1 + std::exp(-2.0)), 1e-6);
  options.prefer_function_bodies = true;
  auto body = RunText(model, {Floats({1}, {2}), Floats({1}, {3})}, options);
  ASSERT_TRUE(body.ok()) << body.status().ToString();
  EXPECT_EQ((*body)[0].tensor().GetDouble(0), 5.0);
}

TEST(EvaluatorTest, AbsentFunctionInputsAreAbsentInTheBody) {
  // `w` is left out by the call: OptionalHasElement sees it absent, and the
  // If branch that would read it does not run. The body is reused across
  // calls (two nodes, a loop of runs) with its subgraphs intact.
  const std::string text = R"(
    <ir_version: 10, opset_import: ["" : 21, "local" : 1]>
    g (float[1] x, float[1] w) => (float[1] a, float[1] b) {
      a = local.AddIfGiven (x)
      b = local.AddIfGiven (x, w)
    }
    <domain: "local", opset_import: ["" : 21]>
    AddIfGiven (x, w) => (y) {
      given = OptionalHasElement (w)
      y = If (given) <
        then_branch = t () => (r) { r = Add (x, w) },
        else_branch = e () => (r) { r = Identity (x) }
      >
    })";
  for (int run = 0; run < 3; ++run) {
    auto out = RunText(text, {Floats({1}, {1}), Floats({1}, {10})});
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].tensor().GetDouble(0), 1.0);
    EXPECT_EQ((*out)[1].tensor().GetDouble(0), 11.0);
  }
}

TEST(EvaluatorTest, SubgraphReadsOuterScope) {
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (bool c, float[1] x) => (float[1] y) {
      outer = Add (x, x)
      y = If (c) <
        then_branch = t () => (float[1] r) { r = Mul (outer, x) },
        else_branch = e () => (float[1] r) { r = Identity (outer) }
      >
    })", {*Tensor::FromDoubles(DataType::kBool, {}, {1}), Floats({1}, {3})});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ((*out)[0].tensor().GetDouble(0), 18.0);
}

TEST(EvaluatorTest, EndlessLoopStopsAtTheTimeLimit) {
  EvalOptions options;
  options.time_limit_seconds = 0.2;
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (int64 m, bool c, float[1] x) => (float[1] y) {
      y = Loop (m, c, x) <
        body = b (int64 i, bool ci, float[1] xi) => (bool co, float[1] xo) {
          co = Identity (ci)
          xo = Identity (xi)
        }
      >
    })", {Tensor::FromInt64s({}, {int64_t{1} << 60}), *Tensor::FromDoubles(DataType::kBool, {}, {1}),
          Floats({1}, {1})}, options);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kDeadlineExceeded) << out.status().ToString();
}

TEST(EvaluatorTest, OperatorWithoutKernelIsUnimplementedAndNamed) {
  // ImageDecoder is a valid ONNX operator that the reference has no kernel for.
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (uint8[4] x) => (uint8[1,1,3] y) { y = ImageDecoder (x) }
  )", {*Tensor::FromDoubles(DataType::kUint8, {4}, {1, 2, 3, 4})});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(out.status().message().find("op not implemented: ImageDecoder"), std::string::npos);
  // An operator of a domain nobody defines is unimplemented too.
  auto custom = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21, "com.example" : 1]>
    g (float[1] x) => (float[1] y) { y = com.example.NoSuchOp (x) }
  )", {Floats({1}, {1})});
  ASSERT_FALSE(custom.ok());
  EXPECT_EQ(custom.status().code(), StatusCode::kUnimplemented);
  // One that the pinned onnx does not define in its own domain may be newer
  // than the pin: unimplemented, naming the operator, opset and onnx release.
  auto unknown = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[1] x) => (float[1] y) { y = NoSuchOp (x) }
  )", {Floats({1}, {1})});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(unknown.status().message().find("operator NoSuchOp of domain 'ai.onnx' at opset 21 is unknown to onnx 1."),
            std::string::npos)
      << unknown.status().message();
  // Beside a real problem, the model is invalid first.
  auto broken = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[1] x) => (float[1] y) { y = NoSuchOp (z) }
  )", {Floats({1}, {1})});
  ASSERT_FALSE(broken.ok());
  EXPECT_EQ(broken.status().code(), StatusCode::kInvalidModel);
}

TEST(EvaluatorTest, KernelErrorNamesModelAndNode) {
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[2] x, float[3] z) => (float[2] y) { y = Add (x, z) }
  )", {Floats({2}, {1, 2}), Floats({3}, {1, 2, 3})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("test model"), std::string::npos) << out.status().message();
  EXPECT_NE(out.status().message().find("(Add)"), std::string::npos) << out.status().message();
}

TEST(EvaluatorTest, MissingInputIsAnError) {
  auto out = RunText(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[1] x, float[1] w) => (float[1] y) { y = Add (x, w) }
  )", {Floats({1}, {1})});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("'w' was given no value"), std::string::npos) << out.status().message();
}

}  // namespace
}  // namespace parity
