// The text of `parity --help` and of `parity SUBCOMMAND --help`: one table
// of subcommands that both are made from, so that the two cannot drift.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace parity {

// One form of a subcommand; a subcommand may have several (corpus onnx-node
// and corpus malformed, check MODEL and check --cases).
struct CommandUsage {
  std::string_view name;         // the word after `parity`
  std::string_view synopsis;     // "parity NAME ARGS"; continuation lines carry their own alignment
  std::string_view description;  // lines, printed indented under the synopsis
};

// Every form of every subcommand, in the order `parity --help` prints them.
std::span<const CommandUsage> CommandUsages();

// The names of the subcommands, each once, in table order.
std::vector<std::string_view> CommandNames();

// `parity --help`: every form of every subcommand and the notes.
std::string FullUsage();

// `parity NAME --help`: the forms of NAME (and the notes that concern it);
// empty when NAME is not a subcommand.
std::string CommandHelp(std::string_view name);

// Whether the words after the subcommand ask for its help (--help or -h).
bool WantsHelp(const std::vector<std::string>& args);

// Prints "parity NAME: MESSAGE" and NAME's usage to stderr; returns 2, the
// exit status of a usage error.
int CommandUsageError(std::string_view name, std::string_view message);

}  // namespace parity
