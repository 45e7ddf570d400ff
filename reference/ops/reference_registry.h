// The registry with every kernel of the reference evaluator, built once on
// first use. The evaluator takes its registry from the caller
// (EvalOptions::registry); the layers above pass this one.
#pragma once

#include "reference/eval/evaluator.h"
#include "reference/eval/registry.h"

namespace parity {

const OpRegistry& ReferenceRegistry();

// `options` with the reference's kernels as their registry.
inline EvalOptions WithReferenceKernels(EvalOptions options = {}) {
  options.registry = &ReferenceRegistry();
  return options;
}

}  // namespace parity
