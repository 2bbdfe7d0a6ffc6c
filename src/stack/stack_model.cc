#include "stack/stack_model.h"

namespace stackie {

std::string_view to_string(RestartPolicy policy) {
  switch (policy) {
    case RestartPolicy::no: return "no";
    case RestartPolicy::on_failure: return "on-failure";
    case RestartPolicy::always: return "always";
  }
  return "?";
}

std::string_view to_string(DependCondition condition) {
  switch (condition) {
    case DependCondition::healthy: return "healthy";
    case DependCondition::started: return "started";
    case DependCondition::completed_successfully: return "completed_successfully";
  }
  return "?";
}

std::string_view to_string(HealthCheck::Kind kind) {
  switch (kind) {
    case HealthCheck::Kind::none: return "none";
    case HealthCheck::Kind::tcp: return "tcp";
    case HealthCheck::Kind::http: return "http";
    case HealthCheck::Kind::exec: return "exec";
  }
  return "?";
}

}  // namespace stackie
