// `parity check MODEL`: validates a model and prints every problem found.
#pragma once

#include <string>

namespace parity {

// Returns 0 for a valid model, 1 when problems were found, 2 when the file
// cannot be read or parsed at all.
int RunCheckCommand(const std::string& path);

}  // namespace parity
