// How an exception from OpenVINO becomes an ABI status: which failures say
// "OpenVINO cannot run this" (UNSUPPORTED, naming the operators), and the
// message cut down to what a reader needs (no source paths of OpenVINO).
#pragma once

#include <string>

#include "spec/abi/parity_adapter.h"

namespace parity::adapters::openvino {

// The step of the session an exception came from: it decides how a message
// that names no operator is read.
enum class OvStep { kRead, kCompile, kQuery, kInfer };

struct OvFailure {
  parity_status_code code;
  std::string message;
};

// `what` is the exception's what(); `case_name` opens the message.
OvFailure ClassifyOvError(OvStep step, const std::string& what, const std::string& case_name);

// OpenVINO's text without its "Exception from src/...:N:" and "Check '...'
// failed at src/...:" lines, on one line, at most about 700 characters.
std::string CleanOvMessage(const std::string& what);

}  // namespace parity::adapters::openvino
