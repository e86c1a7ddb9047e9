#pragma once

#include "restapi.h"

#include <nlohmann/json.hpp>

namespace leasehold {

// An OpenAPI 3.1 document of `routes`: the same table the server dispatches on, so the
// document cannot list a route the server lacks or miss one it has.
nlohmann::json openApiDocument(const std::vector<Route> &routes, const QString &version);

} // namespace leasehold
