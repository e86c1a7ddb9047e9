#pragma once

#include "enginehost.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>

namespace leasehold {

// What an MCP client can read rather than call: the resources `leasehold://status` (the
// engine snapshot) and `leasehold://queue` (waiters and deadlock pairs), and the prompt
// `coordinate`, which explains the locking discipline to a model. Also the server's
// `instructions`, sent once at initialize.
//
// Thread: the engine thread.
class McpLibrary
{
public:
    explicit McpLibrary(EngineHost &host);

    // `workspace`: the fs_* tools are published too.
    static std::string instructions(bool workspace);

    nlohmann::json listResources() const;
    // The resources/read result for `uri`, or nothing when there is no such resource.
    std::optional<nlohmann::json> readResource(const std::string &uri) const;

    nlohmann::json listPrompts() const;
    // The prompts/get result for `name`, or nothing when there is no such prompt.
    std::optional<nlohmann::json> prompt(const std::string &name) const;

private:
    EngineHost &m_host;
};

} // namespace leasehold
