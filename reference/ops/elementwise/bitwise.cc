// Bit operations on integers: BitShift, BitwiseAnd/Or/Xor/Not. Signed values
// are two's complement; results wrap to the width of the type.
#include <cstdint>
#include <string>

#include "reference/ops/elementwise/kernels.h"

namespace parity::ops::elementwise {
namespace {

// Bits of an integer type (8 per byte of storage; BitShift allows no 4/2-bit types).
int64_t BitWidth(DataType dtype) { return static_cast<int64_t>(StorageSize(dtype)) * 8; }

}  // namespace

// BitShift-28: a right shift of a signed value is arithmetic; a shift by a
// negative amount or by the width or more leaves only the sign fill (-1 for
// a right shift of a negative value, else 0). BitShift-11 (unsigned types
// only) left wide shifts unspecified; the same rule applies, as in numpy.
Result BitShift(const KernelContext& ctx, const OpVersion& version) {
  const std::string direction = ctx.GetString("direction");
  PARITY_KERNEL_CHECK(ctx, direction == "LEFT" || direction == "RIGHT",
                      "attribute direction must be \"LEFT\" or \"RIGHT\", got \"", direction, "\"");
  const bool left = direction == "LEFT";
  PARITY_ASSIGN_OR_RETURN(BinaryOperands in, ReadBinaryOperands(ctx, version));
  const int64_t width = BitWidth(in.a->dtype());
  return Single(MapBinary(ctx, *in.a, in.b, in.a->dtype(), [left, width](std::integral auto x, std::integral auto y) {
    using T = decltype(x);
    const bool in_range = !IsNegative(y) && static_cast<uint64_t>(y) < static_cast<uint64_t>(width);
    if (left) {
      // Shift as unsigned so that bits leaving the top are dropped, never overflow.
      return in_range ? static_cast<T>(static_cast<uint64_t>(x) << static_cast<uint64_t>(y)) : T(0);
    }
    if (!in_range) return IsNegative(x) ? static_cast<T>(-1) : T(0);
    return static_cast<T>(x >> y);  // arithmetic for int64_t (C++20), logical for uint64_t
  }));
}

Result BitwiseAnd(const KernelContext& ctx, const OpVersion& version) {
  return BinaryKernel(ctx, version, [](std::integral auto x, std::integral auto y) { return x & y; });
}

Result BitwiseOr(const KernelContext& ctx, const OpVersion& version) {
  return BinaryKernel(ctx, version, [](std::integral auto x, std::integral auto y) { return x | y; });
}

Result BitwiseXor(const KernelContext& ctx, const OpVersion& version) {
  return BinaryKernel(ctx, version, [](std::integral auto x, std::integral auto y) { return x ^ y; });
}

Result BitwiseNot(const KernelContext& ctx, const OpVersion& version) {
  return UnaryKernel(ctx, version, [](std::integral auto x) { return ~x; });
}

}  // namespace parity::ops::elementwise
