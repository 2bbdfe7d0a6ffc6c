// Resolution of the stack graph: which provider each `consumes` entry reaches, on which local
// port, the start order (depends_on plus consumes), cycles and host-port clashes. Pure: works
// on plain descriptions of the blocks, so every rule is unit-tested without files.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "base/error.h"
#include "stack/stack_file.h"
#include "stack/stack_model.h"

namespace stackie {

struct GraphBlock {
  std::string name;
  SourceLocation where;
  std::vector<ServedPort> serves;
  std::vector<SourceLocation> serve_where;  // parallel to serves (port positions)
  std::vector<ConsumeDecl> consumes;
  std::vector<std::pair<std::string, SourceLocation>> depends_on;
};

struct ResolvedGraph {
  std::vector<size_t> order;                         // indices into the input, start order
  std::vector<std::vector<ConsumedPort>> consumes;   // per input block
  std::vector<std::vector<std::string>> depends_on;  // per input block: explicit + providers
};

// Start order: a block starts after everything it depends on or consumes; among blocks that
// are ready at the same time, the one declared first in the stack file starts first. A cycle
// is an error naming it ("dependency cycle: api -> worker -> api").
Result<ResolvedGraph> resolve_graph(const std::vector<GraphBlock>& blocks);

}  // namespace stackie
