// zygote_client.h where the lockbox has no zygote (macOS: lockbox_has_zygote() is false, so
// the spawner never asks for one). Nothing here runs.
#include "spawn/zygote_client.h"

namespace stackie::spawn_detail {

Result<std::unique_ptr<Zygote>> Zygote::start(uv_loop_t*, const std::string&) {
  return Error{UV_ENOTSUP, "the lockbox has no zygote on this platform"};
}

Zygote::~Zygote() = default;

Result<ChildProcess*> Zygote::spawn(const std::vector<std::string>&, const std::vector<int>&,
                                    uint32_t, ChildProcess::OnExit) {
  return Error{UV_ENOTSUP, "the lockbox has no zygote on this platform"};
}

Result<ChildProcess*> Zygote::start_child(const SpawnPlan&, uv_pipe_t*, uv_pipe_t*,
                                          const ChildProcess::OnExit&) {
  return Error{UV_ENOTSUP, "the lockbox has no zygote on this platform"};
}

void Zygote::on_readable() {}
void Zygote::dispatch(int, int) {}
void Zygote::on_gone() {}

}  // namespace stackie::spawn_detail
