// Overflow-checked sizes (checked_size.h).
#include "reference/core/checked_size.h"

namespace parity {

StatusOr<int64_t> CheckedProduct(std::initializer_list<int64_t> factors, std::string_view what) {
  int64_t product = 1;
  for (const int64_t f : factors) {
    if (f < 0) return InvalidArgument(what, ": negative factor ", f);
    const std::optional<int64_t> next = CheckedMul(product, f);
    if (!next) return ResourceExhausted(what, " overflows a 64-bit size");
    product = *next;
  }
  return product;
}

StatusOr<int64_t> CheckedSum(int64_t a, int64_t b, std::string_view what) {
  if (a < 0 || b < 0) return InvalidArgument(what, ": negative term ", a < 0 ? a : b);
  const std::optional<int64_t> sum = CheckedAdd(a, b);
  if (!sum) return ResourceExhausted(what, " overflows a 64-bit size");
  return *sum;
}

StatusOr<int64_t> PackedByteCount(int64_t count, int bits, std::string_view what) {
  PARITY_ASSIGN_OR_RETURN(int64_t total_bits, CheckedProduct({count, bits}, what));
  return total_bits / 8 + (total_bits % 8 != 0);
}

}  // namespace parity
