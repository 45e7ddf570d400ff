// Registration of the ml family's kernels, at each version where an
// operator's signature or semantics changed.
#include "reference/ops/families.h"
#include "reference/ops/ml/ml.h"

namespace parity::ops {

void RegisterMlOps(OpRegistry& registry) {
  using namespace ml;
  // LabelEncoder-2 adds float keys/values, 4 the tensor attributes; one kernel.
  registry.Register("ai.onnx.ml", "LabelEncoder", 1, LabelEncoder);
  registry.Register("ai.onnx.ml", "Binarizer", 1, Binarizer);
  registry.Register("ai.onnx.ml", "ArrayFeatureExtractor", 1, ArrayFeatureExtractor);
  registry.Register("ai.onnx.ml", "TreeEnsemble", 5, TreeEnsemble);
}

}  // namespace parity::ops
