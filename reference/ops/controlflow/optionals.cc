// The optional operators (Operators.md: Optional-15, OptionalHasElement and
// OptionalGetElement 15 and 18; version 18 also accepts a plain tensor or
// sequence, and OptionalHasElement-18 an absent input).
#include "reference/ops/common.h"
#include "reference/ops/controlflow/controlflow.h"

namespace parity::ops::controlflow {

StatusOr<std::vector<Value>> Optional(const KernelContext& ctx) {
  if (!ctx.has_input(0)) {
    if (!ctx.has_attribute("type")) return ctx.Error("an Optional without input needs the attribute 'type'");
    return std::vector<Value>{Value::NoneOptional()};
  }
  const Value& input = ctx.input(0);
  if (input.is_optional()) return ctx.Error("the input of Optional must be a tensor or a sequence, got an optional");
  return std::vector<Value>{Value::SomeOptional(input)};
}

StatusOr<std::vector<Value>> OptionalHasElement(const KernelContext& ctx) {
  const bool since_18 = ctx.opset() >= 18;
  bool has = false;
  if (!ctx.has_input(0)) {
    if (!since_18) return ctx.Error("input is required before opset 18");
  } else if (ctx.input(0).is_optional()) {
    has = ctx.input(0).has_element();
  } else {
    if (!since_18) return ctx.Error("input must be an optional before opset 18, got ", ctx.input(0).Description());
    has = true;
  }
  PARITY_ASSIGN_OR_RETURN(Tensor out, Allocate(ctx, DataType::kBool, {}));
  out.SetInt64(0, has ? 1 : 0);
  return Single(std::move(out));
}

StatusOr<std::vector<Value>> OptionalGetElement(const KernelContext& ctx) {
  if (!ctx.has_input(0)) return ctx.Error("input is required");
  const Value& input = ctx.input(0);
  if (!input.is_optional()) {
    if (ctx.opset() < 18) return ctx.Error("input must be an optional before opset 18, got ", input.Description());
    return std::vector<Value>{input};
  }
  if (!input.has_element()) return ctx.Error("the optional input holds no value");
  return std::vector<Value>{input.element()};
}

}  // namespace parity::ops::controlflow
