// ai.onnx.ml operators: LabelEncoder (1, 2 and 4), Binarizer-1 and
// ArrayFeatureExtractor-1.
#include <cmath>
#include <map>

#include "reference/ops/common.h"
#include "reference/ops/ml/ml.h"

namespace parity::ops::ml {
namespace {

// One key or value of a LabelEncoder: a string or a number. Numbers compare
// by value with every NaN equal to every other (so a NaN key can match).
struct Label {
  bool is_string = false;
  std::string text;
  double number = 0.0;
  bool operator<(const Label& o) const {
    if (is_string != o.is_string) return is_string < o.is_string;
    if (is_string) return text < o.text;
    const bool a_nan = std::isnan(number), b_nan = std::isnan(o.number);
    if (a_nan || b_nan) return !a_nan && b_nan;
    return number < o.number;
  }
};

struct LabelList {
  DataType dtype = DataType::kUndefined;
  std::vector<Label> labels;
};

// The keys or values of a LabelEncoder from its `<prefix>_strings`,
// `<prefix>_int64s`, `<prefix>_floats` or (version 4) `<prefix>_tensor`.
StatusOr<LabelList> ReadLabels(const KernelContext& ctx, const std::string& prefix) {
  LabelList list;
  int found = 0;
  if (ctx.has_attribute(prefix + "_strings")) {
    ++found;
    list.dtype = DataType::kString;
    for (const auto& s : ctx.GetStrings(prefix + "_strings")) list.labels.push_back({true, s, 0.0});
  }
  if (ctx.has_attribute(prefix + "_int64s")) {
    ++found;
    list.dtype = DataType::kInt64;
    for (int64_t v : ctx.GetInts(prefix + "_int64s")) list.labels.push_back({false, "", static_cast<double>(v)});
  }
  if (ctx.has_attribute(prefix + "_floats")) {
    ++found;
    list.dtype = DataType::kFloat;
    for (float v : ctx.GetFloats(prefix + "_floats")) list.labels.push_back({false, "", static_cast<double>(v)});
  }
  if (ctx.opset() >= 4 && ctx.has_attribute(prefix + "_tensor")) {
    ++found;
    PARITY_ASSIGN_OR_RETURN(Tensor t, ctx.GetTensor(prefix + "_tensor"));
    list.dtype = t.dtype();
    for (int64_t i = 0; i < t.size(); ++i) {
      if (t.dtype() == DataType::kString) list.labels.push_back({true, t.strings()[static_cast<size_t>(i)], 0.0});
      else list.labels.push_back({false, "", t.GetDouble(i)});
    }
  }
  if (found != 1) return ctx.Error("exactly one of the ", prefix, "_* attributes must be given, found ", found);
  return list;
}

}  // namespace

// LabelEncoder: maps each input element through keys -> values; elements
// without a key take the default (default_string "_Unused", default_int64
// -1, default_float -0.0, or default_tensor in version 4).
StatusOr<std::vector<Value>> LabelEncoder(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(LabelList keys, ReadLabels(ctx, "keys"));
  PARITY_ASSIGN_OR_RETURN(LabelList values, ReadLabels(ctx, "values"));
  if (keys.labels.size() != values.labels.size()) {
    return ctx.Error(keys.labels.size(), " keys but ", values.labels.size(), " values");
  }
  if ((x->dtype() == DataType::kString) != (keys.dtype == DataType::kString)) {
    return ctx.Error("input ", x->Description(), " does not match keys of type ", DataTypeName(keys.dtype));
  }
  std::map<Label, Label> table;
  for (size_t i = 0; i < keys.labels.size(); ++i) table.emplace(keys.labels[i], values.labels[i]);
  Label fallback;
  if (values.dtype == DataType::kString) fallback = {true, ctx.GetString("default_string", "_Unused"), 0.0};
  else if (values.dtype == DataType::kFloat || values.dtype == DataType::kDouble)
    fallback = {false, "", static_cast<double>(ctx.GetFloat("default_float", -0.0f))};
  else fallback = {false, "", static_cast<double>(ctx.GetInt("default_int64", -1))};
  if (ctx.opset() >= 4 && ctx.has_attribute("default_tensor")) {
    PARITY_ASSIGN_OR_RETURN(Tensor t, ctx.GetTensor("default_tensor"));
    if (t.size() != 1) return ctx.Error("default_tensor must hold one value, got ", t.Description());
    fallback = t.dtype() == DataType::kString ? Label{true, t.strings()[0], 0.0} : Label{false, "", t.GetDouble(0)};
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, values.dtype, x->shape()));
  for (int64_t i = 0; i < x->size(); ++i) {
    Label key = x->dtype() == DataType::kString ? Label{true, x->strings()[static_cast<size_t>(i)], 0.0}
                                                : Label{false, "", x->GetDouble(i)};
    auto it = table.find(key);
    const Label& v = it == table.end() ? fallback : it->second;
    if (values.dtype == DataType::kString) out.mutable_strings()[static_cast<size_t>(i)] = v.text;
    else out.SetDouble(i, v.number);
  }
  return Single(std::move(out));
}

StatusOr<std::vector<Value>> Binarizer(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  if (x->dtype() == DataType::kString || IsComplex(x->dtype())) return ctx.Error("input must be numeric, got ", x->Description());
  const double threshold = static_cast<double>(ctx.GetFloat("threshold", 0.0f));
  std::vector<double> y(static_cast<size_t>(x->size()));
  for (int64_t i = 0; i < x->size(); ++i) y[static_cast<size_t>(i)] = x->GetDouble(i) > threshold ? 1.0 : 0.0;
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, x->dtype(), x->shape(), y));
  return std::vector<Value>{std::move(out)};
}

// ArrayFeatureExtractor: selects indices Y of X's last axis; a 1-D X gives [1, |Y|].
StatusOr<std::vector<Value>> ArrayFeatureExtractor(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* y, ctx.RequireTensor(1));
  if (x->rank() < 1) return ctx.Error("X must have rank >= 1");
  if (!IsInteger(y->dtype())) return ctx.Error("Y must hold integer indices, got ", y->Description());
  const int64_t last = x->dim(x->rank() - 1);
  const std::vector<int64_t> indices = y->ToInt64s();
  for (int64_t i : indices) {
    if (i < 0 || i >= last) return ctx.Error("index ", i, " is outside [0, ", last, ")");
  }
  const int64_t k = static_cast<int64_t>(indices.size());
  Shape shape = x->rank() == 1 ? Shape{1, k} : x->shape();
  shape.back() = k;
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, x->dtype(), shape));
  const int64_t rows = last == 0 ? 0 : x->size() / last;
  const size_t width = StorageSize(x->dtype());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t src = r * last + indices[static_cast<size_t>(j)], dst = r * k + j;
      if (x->dtype() == DataType::kString) {
        out.mutable_strings()[static_cast<size_t>(dst)] = x->strings()[static_cast<size_t>(src)];
      } else {
        std::copy(x->raw_bytes() + static_cast<size_t>(src) * width, x->raw_bytes() + static_cast<size_t>(src + 1) * width,
                  out.mutable_raw_bytes() + static_cast<size_t>(dst) * width);
      }
    }
  }
  return Single(std::move(out));
}

}  // namespace parity::ops::ml
