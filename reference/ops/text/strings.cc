// String operators (Operators.md): StringConcat-20, StringSplit-20,
// StringNormalizer-10, RegexFullMatch-20 and TfIdfVectorizer-9.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>

#include "reference/ops/common.h"
#include "reference/ops/text/text.h"

namespace parity::ops::text {
namespace {

StatusOr<const Tensor*> RequireStrings(const KernelContext& ctx, size_t i) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
  if (t->dtype() != DataType::kString) return ctx.Error("input ", i, " must be a string tensor, got ", t->Description());
  return t;
}

bool IsSpace(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Python's str.split(sep, maxsplit) for a non-empty separator.
std::vector<std::string> SplitOn(const std::string& s, const std::string& sep, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) {
    const size_t at = s.find(sep, begin);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(begin, at - begin));
    begin = at + sep.size();
  }
  parts.push_back(s.substr(begin));
  return parts;
}

// Python's str.split(None, maxsplit): runs of whitespace separate, leading
// and trailing whitespace yield nothing; the unsplit remainder keeps its
// trailing whitespace.
std::vector<std::string> SplitOnWhitespace(const std::string& s, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t i = 0;
  const size_t n = s.size();
  while (true) {
    while (i < n && IsSpace(s[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
      parts.push_back(s.substr(i));
      break;
    }
    size_t j = i;
    while (j < n && !IsSpace(s[j])) ++j;
    parts.push_back(s.substr(i, j - i));
    i = j;
  }
  return parts;
}

std::string ChangeCase(std::string s, bool upper) {
  for (char& c : s) c = static_cast<char>(upper ? std::toupper(static_cast<unsigned char>(c)) : std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

StatusOr<std::vector<Value>> StringConcat(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* a, RequireStrings(ctx, 0));
  PARITY_ASSIGN_OR_RETURN(const Tensor* b, RequireStrings(ctx, 1));
  PARITY_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(ctx, {a->shape(), b->shape()}));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kString, shape));
  BroadcastIndexer ia(a->shape(), shape), ib(b->shape(), shape);
  for (int64_t i = 0; i < out.size(); ++i) {
    out.mutable_strings()[static_cast<size_t>(i)] =
        a->strings()[static_cast<size_t>(ia(i))] + b->strings()[static_cast<size_t>(ib(i))];
  }
  return Single(std::move(out));
}

// StringSplit: output 0 holds the parts padded with "" to the largest count
// (a new last axis), output 1 the number of parts of each element. An empty
// or absent delimiter splits on runs of whitespace.
StatusOr<std::vector<Value>> StringSplit(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, RequireStrings(ctx, 0));
  const std::string delimiter = ctx.GetString("delimiter", "");
  const int64_t maxsplit = ctx.has_attribute("maxsplit") ? ctx.GetInt("maxsplit", -1) : -1;
  std::vector<std::vector<std::string>> parts(static_cast<size_t>(x->size()));
  size_t widest = 0;
  for (int64_t i = 0; i < x->size(); ++i) {
    const std::string& s = x->strings()[static_cast<size_t>(i)];
    parts[static_cast<size_t>(i)] = delimiter.empty() ? SplitOnWhitespace(s, maxsplit) : SplitOn(s, delimiter, maxsplit);
    widest = std::max(widest, parts[static_cast<size_t>(i)].size());
  }
  Shape shape = x->shape();
  shape.push_back(static_cast<int64_t>(widest));
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kString, shape));
  PARITY_ASSIGN_OR_RETURN(Tensor counts, Allocate(ctx, DataType::kInt64, x->shape()));
  for (size_t i = 0; i < parts.size(); ++i) {
    for (size_t k = 0; k < parts[i].size(); ++k) out.mutable_strings()[i * widest + k] = parts[i][k];
    counts.SetInt64(static_cast<int64_t>(i), static_cast<int64_t>(parts[i].size()));
  }
  return std::vector<Value>{Value::FromTensor(std::move(out)), Value::FromTensor(std::move(counts))};
}

// StringNormalizer: drops the elements equal to a stop word (compared
// case-insensitively unless is_case_sensitive), then changes case (ASCII
// letters; `locale` is not consulted). An input [C] or [1, C] whose every
// element is dropped gives [""] or [1, 1] holding "".
StatusOr<std::vector<Value>> StringNormalizer(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, RequireStrings(ctx, 0));
  const bool two_d = x->rank() == 2;
  if (!(x->rank() == 1 || (two_d && x->dim(0) == 1))) return ctx.Error("input must be [C] or [1, C], got ", x->Description());
  const std::string action = ctx.GetString("case_change_action", "NONE");
  if (action != "NONE" && action != "LOWER" && action != "UPPER") {
    return ctx.Error("case_change_action '", action, "' is not NONE, LOWER or UPPER");
  }
  const bool case_sensitive = ctx.GetInt("is_case_sensitive", 0) != 0;
  std::set<std::string> stops;
  for (const std::string& w : ctx.GetStrings("stopwords")) stops.insert(case_sensitive ? w : ChangeCase(w, false));
  std::vector<std::string> kept;
  for (const std::string& s : x->strings()) {
    if (stops.count(case_sensitive ? s : ChangeCase(s, false))) continue;
    kept.push_back(action == "NONE" ? s : ChangeCase(s, action == "UPPER"));
  }
  if (kept.empty()) kept.push_back("");
  const int64_t count = static_cast<int64_t>(kept.size());
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kString, two_d ? Shape{1, count} : Shape{count}));
  out.mutable_strings() = kept;
  return Single(std::move(out));
}

// RegexFullMatch: whether the whole string matches the pattern. The spec
// names RE2 syntax; std::regex's ECMAScript grammar agrees on the common
// subset (classes, quantifiers, groups, alternation, anchors) but lacks RE2's
// (?P<name>...) groups and \pN classes, and is not linear-time.
StatusOr<std::vector<Value>> RegexFullMatch(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, RequireStrings(ctx, 0));
  const std::string pattern = ctx.GetString("pattern", "");
  std::regex re;
  try {
    re = std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return ctx.Error("pattern '", pattern, "' is not a valid regular expression: ", e.what());
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kBool, x->shape()));
  try {
    for (int64_t i = 0; i < x->size(); ++i) {
      out.SetInt64(i, std::regex_match(x->strings()[static_cast<size_t>(i)], re) ? 1 : 0);
    }
  } catch (const std::regex_error& e) {
    return ctx.Error("matching pattern '", pattern, "' failed: ", e.what());
  }
  return Single(std::move(out));
}

// TfIdfVectorizer-9: counts the pool's n-grams in each row. For skip
// distance d = 1 .. max_skip_count + 1, an n-gram starting at item s takes
// items s, s + d, ..., s + (n - 1) d; unigrams count only at d = 1. Pool
// n-gram j adds to output ngram_indexes[j]; mode TF keeps counts, IDF gives
// the output's weight (1 without weights) where the count is positive, TFIDF
// multiplies the count by the weight.
StatusOr<std::vector<Value>> TfIdfVectorizer(const KernelContext& ctx) {
  PARITY_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  const bool strings = x->dtype() == DataType::kString;
  if (!strings && x->dtype() != DataType::kInt32 && x->dtype() != DataType::kInt64) {
    return ctx.Error("input must be string, int32 or int64, got ", x->Description());
  }
  if (x->rank() > 2) return ctx.Error("input must be 1-D or 2-D, got ", x->Description());
  const int64_t min_gram = ctx.GetInt("min_gram_length", 1), max_gram = ctx.GetInt("max_gram_length", 1);
  const int64_t max_skip = ctx.GetInt("max_skip_count", 0);
  const std::string mode = ctx.GetString("mode", "TF");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF") return ctx.Error("mode '", mode, "' is not TF, IDF or TFIDF");
  if (min_gram < 1 || max_gram < min_gram || max_skip < 0) {
    return ctx.Error("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  }
  const std::vector<int64_t> counts = ctx.GetInts("ngram_counts"), indexes = ctx.GetInts("ngram_indexes");
  const std::vector<float> weights = ctx.GetFloats("weights");
  std::vector<std::string> pool = ctx.GetStrings("pool_strings");
  if (pool.empty()) {
    for (int64_t v : ctx.GetInts("pool_int64s")) pool.push_back(std::to_string(v));
  }
  if (indexes.empty()) return ctx.Error("ngram_indexes is required");
  const int64_t output_size = *std::max_element(indexes.begin(), indexes.end()) + 1;
  // Pool n-grams of sizes min..max, keyed by their items, to their ordinal.
  std::map<std::vector<std::string>, size_t> grams;
  size_t ordinal = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    const int64_t n = static_cast<int64_t>(k) + 1;
    const int64_t begin = counts[k];
    const int64_t end = k + 1 < counts.size() ? counts[k + 1] : static_cast<int64_t>(pool.size());
    if (begin < 0 || end < begin || end > static_cast<int64_t>(pool.size()) || (end - begin) % n != 0) {
      return ctx.Error("ngram_counts ", begin, " .. ", end, " do not split the pool into ", n, "-grams");
    }
    for (int64_t at = begin; at < end; at += n, ++ordinal) {
      if (n < min_gram || n > max_gram) continue;
      grams.emplace(std::vector<std::string>(pool.begin() + at, pool.begin() + at + n), ordinal);
    }
  }
  for (const auto& [gram, j] : grams) {
    if (j >= indexes.size() || indexes[j] < 0) return ctx.Error("n-gram ", j, " has no valid entry in ngram_indexes");
  }
  const int64_t rows = x->rank() == 2 ? x->dim(0) : 1;
  const int64_t row_size = x->rank() == 0 ? 1 : x->dim(x->rank() - 1);
  std::vector<double> freq(static_cast<size_t>(rows * output_size), 0.0);
  auto item = [&](int64_t r, int64_t i) {
    const int64_t at = r * row_size + i;
    return strings ? x->strings()[static_cast<size_t>(at)] : std::to_string(x->GetInt64(at));
  };
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t d = 1; d <= max_skip + 1; ++d) {
      const int64_t smallest = d == 1 ? min_gram : std::max<int64_t>(min_gram, 2);
      if (smallest > max_gram) break;
      for (int64_t s = 0; s < row_size; ++s) {
        std::vector<std::string> gram;
        for (int64_t n = 1; n <= max_gram && s + (n - 1) * d < row_size; ++n) {
          gram.push_back(item(r, s + (n - 1) * d));
          if (n < smallest) continue;
          auto it = grams.find(gram);
          if (it != grams.end()) freq[static_cast<size_t>(r * output_size + indexes[it->second])] += 1.0;
        }
      }
    }
  }
  std::vector<double> weight_of(static_cast<size_t>(output_size), 1.0);
  if (!weights.empty()) {
    // Indexed by output position, as ONNX's reference and ONNX Runtime do
    // (the spec's wording says by pool n-gram; the two agree when
    // ngram_indexes is the identity).
    for (size_t k = 0; k < weights.size() && k < weight_of.size(); ++k) weight_of[k] = static_cast<double>(weights[k]);
  }
  for (size_t i = 0; i < freq.size(); ++i) {
    const double w = weight_of[i % static_cast<size_t>(output_size)];
    if (mode == "IDF") freq[i] = freq[i] > 0 ? w : 0.0;
    if (mode == "TFIDF") freq[i] *= w;
  }
  const Shape shape = x->rank() == 2 ? Shape{rows, output_size} : Shape{output_size};
  PARITY_ASSIGN_OR_RETURN(Value out, MakeResult(ctx, DataType::kFloat, shape, freq));
  return std::vector<Value>{std::move(out)};
}

}  // namespace parity::ops::text
