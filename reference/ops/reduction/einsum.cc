// Einsum (opset 12): a general evaluator of the equation by summing over
// every assignment of the labels. Handles an ellipsis per term (broadcast
// numpy-style, right-aligned), repeated labels in a term (diagonals and
// traces) and the implicit output (ellipsis dimensions, then the labels that
// occur once, in ASCII order so upper case precedes lower case).
//
// Two floating operands whose equation is one batched matrix product go
// through GemmDouble (einsum_product.h). The rest, integers and the
// conventional arithmetic (ctx.float32_sums) take the plain loop, which sums
// every product in double in label order.
#include <algorithm>
#include <map>
#include <optional>
#include <string>

#include "reference/ops/common.h"
#include "reference/ops/reduction/einsum_product.h"
#include "reference/ops/reduction/reduction.h"
#include "reference/ops/reduction/reduction_util.h"

namespace parity::ops {
namespace {

constexpr int kLetterLabels = 52;  // 'A'..'Z' -> 0..25, 'a'..'z' -> 26..51 (ASCII order)
constexpr int kEllipsis = -1;

// A term as written: label ids, kEllipsis where "..." stands.
StatusOr<std::vector<int>> ParseTerm(const KernelContext& ctx, const std::string& term) {
  std::vector<int> labels;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c >= 'A' && c <= 'Z') {
      labels.push_back(c - 'A');
    } else if (c >= 'a' && c <= 'z') {
      labels.push_back(26 + (c - 'a'));
    } else if (c == '.' && term.compare(i, 3, "...") == 0) {
      if (seen_ellipsis) return ctx.Error("term '", term, "' has more than one ellipsis");
      seen_ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
    } else {
      return ctx.Error("unexpected character '", c, "' in einsum term '", term, "'");
    }
  }
  return labels;
}

// Replaces the ellipsis of a term by `count` labels, the last `count` of the
// ellipsis labels kLetterLabels .. kLetterLabels + ellipsis_rank - 1.
std::vector<int> ExpandEllipsis(const std::vector<int>& term, int64_t count, int64_t ellipsis_rank) {
  std::vector<int> out;
  for (int label : term) {
    if (label != kEllipsis) {
      out.push_back(label);
      continue;
    }
    for (int64_t e = ellipsis_rank - count; e < ellipsis_rank; ++e) out.push_back(kLetterLabels + static_cast<int>(e));
  }
  return out;
}

}  // namespace

StatusOr<std::vector<Value>> EinsumKernel(const KernelContext& ctx) {
  std::string equation;
  for (char c : ctx.GetString("equation")) {
    if (c != ' ') equation += c;
  }
  if (!ctx.has_attribute("equation")) return ctx.Error("attribute 'equation' is required");
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  std::vector<std::vector<int>> terms;
  for (size_t start = 0;;) {
    const size_t comma = lhs.find(',', start);
    PARITY_ASSIGN_OR_RETURN(std::vector<int> term, ParseTerm(ctx, lhs.substr(start, comma - start)));
    terms.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != ctx.input_count()) {
    return ctx.Error("equation '", equation, "' has ", terms.size(), " terms for ", ctx.input_count(), " inputs");
  }
  std::vector<const Tensor*> operands;
  for (size_t i = 0; i < terms.size(); ++i) {
    PARITY_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
    PARITY_RETURN_IF_ERROR(RequireNumeric(ctx, *t, "einsum operand"));
    if (!operands.empty() && t->dtype() != operands[0]->dtype()) {
      return ctx.Error("einsum operands must share one type, got ", t->Description());
    }
    operands.push_back(t);
  }
  // Expand ellipses and find each label's extent (size-1 dimensions broadcast).
  int64_t ellipsis_rank = 0;
  std::vector<int64_t> ellipsis_counts(terms.size(), 0);
  for (size_t i = 0; i < terms.size(); ++i) {
    int64_t letters = 0;
    bool has_ellipsis = false;
    for (int label : terms[i]) {
      if (label == kEllipsis) has_ellipsis = true;
      else ++letters;
    }
    const int64_t rank = operands[i]->rank();
    if (has_ellipsis ? rank < letters : rank != letters) {
      return ctx.Error("term ", i, " of '", equation, "' does not match the rank of ", operands[i]->Description());
    }
    ellipsis_counts[i] = rank - letters;
    ellipsis_rank = std::max(ellipsis_rank, ellipsis_counts[i]);
  }
  std::map<int, int64_t> extent;
  std::map<int, int> occurrences;
  std::vector<std::vector<int>> expanded(terms.size());
  for (size_t i = 0; i < terms.size(); ++i) {
    expanded[i] = ExpandEllipsis(terms[i], ellipsis_counts[i], ellipsis_rank);
    for (size_t d = 0; d < expanded[i].size(); ++d) {
      const int label = expanded[i][d];
      const int64_t size = operands[i]->dim(static_cast<int64_t>(d));
      ++occurrences[label];
      auto [it, inserted] = extent.emplace(label, size);
      if (inserted || it->second == size || size == 1) continue;
      if (it->second == 1) {
        it->second = size;
        continue;
      }
      return ctx.Error("label dimension mismatch in '", equation, "': ", it->second, " vs ", size);
    }
  }
  // The output labels.
  std::vector<int> out_labels;
  if (arrow != std::string::npos) {
    PARITY_ASSIGN_OR_RETURN(std::vector<int> rhs, ParseTerm(ctx, equation.substr(arrow + 2)));
    out_labels = ExpandEllipsis(rhs, ellipsis_rank, ellipsis_rank);
    for (size_t j = 0; j < out_labels.size(); ++j) {
      if (!extent.contains(out_labels[j])) return ctx.Error("output label of '", equation, "' is not in any input");
      for (size_t k = 0; k < j; ++k) {
        if (out_labels[k] == out_labels[j]) return ctx.Error("output label repeated in '", equation, "'");
      }
    }
  } else {
    for (int64_t e = 0; e < ellipsis_rank; ++e) out_labels.push_back(kLetterLabels + static_cast<int>(e));
    for (const auto& [label, count] : occurrences) {  // std::map: ascending ids = ASCII order
      if (label < kLetterLabels && count == 1) out_labels.push_back(label);
    }
  }
  const DataType dtype = operands[0]->dtype();
  const bool is_float = IsFloatingPoint(dtype);
  if (is_float && !ctx.float32_sums() && terms.size() == 2) {
    if (std::optional<EinsumProductPlan> plan = PlanEinsumProduct(expanded[0], expanded[1], out_labels)) {
      PARITY_ASSIGN_OR_RETURN(Value result, RunEinsumProduct(ctx, *plan, *operands[0], expanded[0], *operands[1],
                                                             expanded[1], out_labels, extent));
      return std::vector<Value>{std::move(result)};
    }
  }
  // Every label in one loop order: outputs first, then the summed ones.
  std::vector<int> loop_labels = out_labels;
  for (const auto& [label, size] : extent) {
    if (std::find(out_labels.begin(), out_labels.end(), label) == out_labels.end()) loop_labels.push_back(label);
  }
  std::map<int, size_t> position;
  for (size_t j = 0; j < loop_labels.size(); ++j) position[loop_labels[j]] = j;
  Shape out_shape;
  for (int label : out_labels) out_shape.push_back(extent[label]);
  std::vector<int64_t> loop_sizes;
  for (int label : loop_labels) loop_sizes.push_back(extent[label]);
  // Per operand and loop label, the stride that label moves the operand's
  // flat index by (0 for broadcast size-1 dimensions).
  std::vector<std::vector<int64_t>> strides(terms.size(), std::vector<int64_t>(loop_labels.size(), 0));
  for (size_t i = 0; i < terms.size(); ++i) {
    const std::vector<int64_t> s = Strides(operands[i]->shape());
    for (size_t d = 0; d < expanded[i].size(); ++d) {
      if (operands[i]->dim(static_cast<int64_t>(d)) == 1) continue;
      strides[i][position[expanded[i][d]]] += s[d];
    }
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, dtype, out_shape));
  const int64_t out_count = out.size();
  std::vector<double> fout(is_float ? out_count : 0, 0.0);
  std::vector<uint64_t> iout(is_float ? 0 : out_count, 0);
  const int64_t total = Product(loop_sizes, 0, loop_sizes.size());
  const int64_t summed = out_count == 0 ? 0 : total / out_count;
  std::vector<int64_t> counter(loop_labels.size(), 0);
  std::vector<int64_t> offset(terms.size(), 0);
  for (int64_t step = 0; step < total; ++step) {
    // The loop runs the output labels outermost, so output index = step / summed.
    const int64_t o = step / summed;
    if (is_float) {
      double p = 1.0;
      for (size_t i = 0; i < terms.size(); ++i) p *= operands[i]->GetDouble(offset[i]);
      fout[o] += p;
    } else {
      uint64_t p = 1;
      for (size_t i = 0; i < terms.size(); ++i) p = WrapMul(p, operands[i]->GetUint64(offset[i]));
      iout[o] = WrapAdd(iout[o], p);
    }
    for (int64_t j = static_cast<int64_t>(counter.size()) - 1; j >= 0; --j) {
      for (size_t i = 0; i < terms.size(); ++i) offset[i] += strides[i][j];
      if (++counter[j] < loop_sizes[j]) break;
      for (size_t i = 0; i < terms.size(); ++i) offset[i] -= strides[i][j] * loop_sizes[j];
      counter[j] = 0;
    }
  }
  for (int64_t o = 0; o < out_count; ++o) {
    if (is_float) out.SetDouble(o, fout[o]);
    else out.SetUint64(o, iout[o]);
  }
  return Single(std::move(out));
}

}  // namespace parity::ops
