#include "supervisor/port_memory.h"

#include "base/directories.h"
#include "base/fs_path.h"
#include "stack/yaml_node.h"
#include "supervisor/host_ports.h"

namespace stackie {

namespace {

std::string stack_key(const std::string& stack, const std::string& project_dir) {
  return stack + " " + project_dir;
}

}  // namespace

PortMemory::PortMemory(std::string path) : path_(std::move(path)), entries_(Json::object()) {
  auto text = read_text_file(path_);
  if (!text.ok()) return;
  auto parsed = parse_json(*text);
  if (parsed.ok() && parsed->is_object()) entries_ = std::move(parsed).value();
}

int PortMemory::recall(const HostPortRequest& request) const {
  const Json& entry = entries_[stack_key(request.stack, request.project_dir)]
                              [request.block + "/" + request.port_name];
  if (entry["wanted"].int_or(0) != request.wanted) return 0;
  return static_cast<int>(entry["host"].int_or(0));
}

void PortMemory::remember(const ResolvedStack& stack) {
  Json ports = Json::object();
  for (const auto& block : stack.blocks)
    for (const auto& port : block.serves) {
      int wanted = port.host_port;
      for (const auto& moved : block.moved_ports)
        if (moved.port == port.name) wanted = moved.wanted;
      if (port.host_port != 0)
        ports.set(block.name + "/" + port.name,
                  Json::object({{"wanted", wanted}, {"host", port.host_port}}));
    }
  std::string key = stack_key(stack.name, directory_of(stack.file));
  if (entries_[key] == ports) return;
  entries_.set(key, std::move(ports));
  // A lost write costs only a moved port at the next up: not worth failing the up for.
  (void)write_file_atomically(path_, to_json(entries_) + "\n");
}

Result<HostPortGrant> choose_host_port(const HostPortRequest& request,
                                       const std::vector<BlockStatus>& running,
                                       const PortMemory* memory) {
  const std::string wanted = std::to_string(request.wanted);
  int remembered = memory != nullptr && !request.exact ? memory->recall(request) : 0;
  if (remembered != 0 && remembered != request.wanted) {
    HostPortRequest again = request;
    again.wanted = remembered;
    again.exact = true;
    if (allocate_host_port(again, running).ok()) {
      std::string holder = who_holds(request, request.wanted, running);
      std::string using_it = "using " + std::to_string(remembered);
      return HostPortGrant{remembered, holder.empty()
                                           ? using_it + " as before (" + wanted +
                                                 " was taken when it was first given)"
                                           : wanted + " is taken by " + holder + "; " + using_it};
    }
  }
  std::string holder = who_holds(request, request.wanted, running);
  STACKIE_TRY_ASSIGN(port, allocate_host_port(request, running));
  if (port == request.wanted) return HostPortGrant{port, ""};
  return HostPortGrant{port, wanted + " is taken by " + holder + "; using " + std::to_string(port)};
}

}  // namespace stackie
