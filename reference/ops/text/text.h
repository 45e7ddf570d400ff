// Kernels of the text family: StringConcat, StringSplit, StringNormalizer,
// RegexFullMatch, TfIdfVectorizer.
#pragma once

#include "reference/eval/kernel.h"

namespace parity::ops::text {

StatusOr<std::vector<Value>> StringConcat(const KernelContext& ctx);
StatusOr<std::vector<Value>> StringSplit(const KernelContext& ctx);
StatusOr<std::vector<Value>> StringNormalizer(const KernelContext& ctx);
StatusOr<std::vector<Value>> RegexFullMatch(const KernelContext& ctx);
StatusOr<std::vector<Value>> TfIdfVectorizer(const KernelContext& ctx);

}  // namespace parity::ops::text
