// Binding a driver's entry points found at run time (dlopen): the device
// adapters open their vendor's driver themselves, so that they build and
// load, and say what is missing, on machines without it.
#pragma once
#include <dlfcn.h>

#include <string>

namespace parity::adapters {

// Points `slot` at `symbol` in `library`; when it is absent, appends the
// symbol's name to `missing` (comma separated) and returns false.
template <typename Fn>
bool BindSymbol(void* library, const char* symbol, Fn* slot, std::string* missing) {
  *slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (!*slot) *missing += (missing->empty() ? "" : ", ") + std::string(symbol);
  return *slot != nullptr;
}

}  // namespace parity::adapters
