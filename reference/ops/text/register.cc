// Registration of the text family's kernels, at each version where an
// operator's signature or semantics changed.
#include "reference/ops/families.h"
#include "reference/ops/text/text.h"

namespace parity::ops {

void RegisterTextOps(OpRegistry& registry) {
  using namespace text;
  registry.Register("StringConcat", 20, StringConcat);
  registry.Register("StringSplit", 20, StringSplit);
  registry.Register("StringNormalizer", 10, StringNormalizer);
  registry.Register("RegexFullMatch", 20, RegexFullMatch);
  registry.Register("TfIdfVectorizer", 9, TfIdfVectorizer);
}

}  // namespace parity::ops
