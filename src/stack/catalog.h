// The block catalog: directories of `<name>.yml` definition files, searched in order
// (paths.h default_block_path()). The first directory holding a name wins, so a user's
// STACKIE_BLOCK_PATH can shadow a built-in block.
#pragma once

#include <string>
#include <vector>

namespace stackie {

// The file defining `name` (NAME.yml, then NAME.yaml), or "" when no directory has it.
std::string find_block_file(const std::string& name, const std::vector<std::string>& dirs);

// Every block name available in `dirs` (for "did you mean" hints), sorted, unique.
std::vector<std::string> catalog_names(const std::vector<std::string>& dirs);

}  // namespace stackie
