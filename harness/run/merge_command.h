// `parity merge DIR... --out DIR`: joins the run folders of the shards of
// one run into one run folder, as if it had run unsharded.
#pragma once

#include <string>
#include <vector>

namespace parity {

// Exit status 0 on success; 2 when the folders are not shards of one run
// (other adapter, device, cases or settings), a case appears twice, or a
// file cannot be read or written; each with a message naming the folder.
int RunMergeCommand(const std::vector<std::string>& dirs, const std::string& out_dir);

}  // namespace parity
