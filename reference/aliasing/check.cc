// The checking mode of aliasing (spec/aliasing.md, "Checking"): runs a model
// functionally and with its annotations applied in place, and names every
// output that sharing the buffers changed.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>

#include "reference/aliasing/aliasing.h"
#include "reference/eval/evaluator.h"

namespace parity {
namespace {

// A copy of `value` that shares no buffer with it, so an in-place run on it
// leaves the caller's inputs as they were.
Value DeepCopy(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::kTensor: return Value::FromTensor(value.tensor().Clone());
    case Value::Kind::kSequence: {
      std::vector<Value> elements;
      for (const Value& e : value.sequence()) elements.push_back(DeepCopy(e));
      return Value::FromSequence(std::move(elements), value.sequence_element_type());
    }
    case Value::Kind::kOptional:
      return value.has_element() ? Value::SomeOptional(DeepCopy(value.element())) : value;
  }
  return value;
}

std::string IndexOf(int64_t flat, const Shape& shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      index[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  return ShapeToString(index);
}

bool ElementsEqual(const Tensor& a, const Tensor& b, int64_t i, size_t width) {
  if (a.dtype() == DataType::kString) {
    return a.strings()[static_cast<size_t>(i)] == b.strings()[static_cast<size_t>(i)];
  }
  return std::memcmp(a.raw_bytes() + static_cast<size_t>(i) * width, b.raw_bytes() + static_cast<size_t>(i) * width,
                     width) == 0;
}

// How `shared` differs from `functional`, bit for bit; empty when it does not.
std::string TensorDifference(const Tensor& functional, const Tensor& shared) {
  if (functional.dtype() != shared.dtype() || functional.shape() != shared.shape()) {
    return StrCat(shared.Description(), " instead of ", functional.Description());
  }
  const bool strings = functional.dtype() == DataType::kString;
  const bool complex = functional.dtype() == DataType::kComplex64 || functional.dtype() == DataType::kComplex128;
  const size_t width = strings ? 0 : StorageSize(functional.dtype());
  int64_t first = -1;
  double max_error = 0;
  for (int64_t i = 0; i < functional.size(); ++i) {
    if (ElementsEqual(functional, shared, i, width)) continue;
    if (first < 0) first = i;
    if (strings) continue;
    const double error = complex ? std::abs(functional.GetComplex(i) - shared.GetComplex(i))
                                 : std::fabs(functional.GetDouble(i) - shared.GetDouble(i));
    // NaN against a number, or two NaNs with other bits, count as infinitely far.
    max_error = std::isnan(error) ? INFINITY : std::max(max_error, error);
  }
  if (first < 0) return "";
  const std::string at = "first at index " + IndexOf(first, functional.shape());
  if (strings) return at;
  return StrCat("max abs error ", max_error, ", ", at);
}

std::string ValueDifference(const Value& functional, const Value& shared) {
  if (functional.kind() != shared.kind()) return shared.Description() + " instead of " + functional.Description();
  switch (functional.kind()) {
    case Value::Kind::kTensor: return TensorDifference(functional.tensor(), shared.tensor());
    case Value::Kind::kSequence: {
      const auto& f = functional.sequence();
      const auto& s = shared.sequence();
      if (f.size() != s.size()) return shared.Description() + " instead of " + functional.Description();
      for (size_t k = 0; k < f.size(); ++k) {
        std::string d = ValueDifference(f[k], s[k]);
        if (!d.empty()) return StrCat("element ", k, ": ", d);
      }
      return "";
    }
    case Value::Kind::kOptional:
      if (functional.has_element() != shared.has_element()) {
        return shared.Description() + " instead of " + functional.Description();
      }
      return functional.has_element() ? ValueDifference(functional.element(), shared.element()) : "";
  }
  return "";
}

// Each output's difference between the functional run and an in-place run
// with `aliases` applied (empty where there is none).
StatusOr<std::vector<std::string>> InPlaceDifferences(const LoadedModel& model, const std::vector<Value>& inputs,
                                                      const std::vector<Value>& functional,
                                                      std::vector<Alias> aliases, EvalOptions options) {
  options.in_place = std::move(aliases);
  options.writers_first = true;
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> evaluator, Evaluator::Create(model, std::move(options)));
  std::vector<Value> copies;
  copies.reserve(inputs.size());
  for (const Value& v : inputs) copies.push_back(DeepCopy(v));
  StatusOr<std::vector<Value>> shared = evaluator->Run(copies);
  if (!shared.ok()) return shared.status().WithContext("the in-place run");
  std::vector<std::string> differences(functional.size());
  for (size_t i = 0; i < functional.size() && i < shared->size(); ++i) {
    differences[i] = ValueDifference(functional[i], (*shared)[i]);
  }
  return differences;
}

std::string Sharing(const std::vector<const Alias*>& aliases) {
  std::string text = "sharing ";
  for (size_t k = 0; k < aliases.size(); ++k) {
    if (k) text += k + 1 == aliases.size() ? " and " : ", ";
    text += StrCat("'", aliases[k]->output, "' with '", aliases[k]->input, "'");
  }
  return text;
}

}  // namespace

StatusOr<AliasCheck> CheckAliasSharing(const LoadedModel& model, const std::vector<Value>& inputs,
                                       const EvalOptions& options) {
  if (!model.proto) return Internal("CheckAliasSharing: no model");
  PARITY_ASSIGN_OR_RETURN(std::vector<Alias> aliases, ReadAliases(model.proto->graph()));
  PARITY_ASSIGN_OR_RETURN(std::unique_ptr<Evaluator> functional_evaluator, Evaluator::Create(model, options));
  StatusOr<std::vector<Value>> functional = functional_evaluator->Run(inputs);
  if (!functional.ok()) return functional.status().WithContext("the functional run");
  AliasCheck check;
  if (aliases.empty()) return check;
  PARITY_ASSIGN_OR_RETURN(std::vector<std::string> together,
                          InPlaceDifferences(model, inputs, *functional, aliases, options));
  const bool any = std::any_of(together.begin(), together.end(), [](const std::string& d) { return !d.empty(); });
  if (!any) return check;
  // Name the annotation that changed each output: the one whose sharing
  // alone changes it, or all of them when only their combination does (two
  // outputs sharing one input, for instance).
  std::vector<std::vector<std::string>> alone;
  if (aliases.size() > 1) {
    for (const Alias& alias : aliases) {
      PARITY_ASSIGN_OR_RETURN(std::vector<std::string> d, InPlaceDifferences(model, inputs, *functional, {alias}, options));
      alone.push_back(std::move(d));
    }
  }
  const auto& outputs = model.proto->graph().output();
  for (size_t i = 0; i < together.size(); ++i) {
    if (together[i].empty()) continue;
    std::vector<const Alias*> culprits;
    for (size_t a = 0; a < alone.size(); ++a) {
      if (!alone[a][i].empty()) culprits.push_back(&aliases[a]);
    }
    if (culprits.empty()) {
      for (const Alias& alias : aliases) culprits.push_back(&alias);
    }
    const std::string name = i < static_cast<size_t>(outputs.size()) ? outputs[static_cast<int>(i)].name() : "?";
    check.differences.push_back(
        StrCat("output '", name, "': ", Sharing(culprits), " changed it (", together[i], ")"));
  }
  return check;
}

}  // namespace parity
