#include "historychecker.h"

std::vector<std::string> checkHistory(const std::vector<GrantRecord> &history)
{
    std::vector<std::string> wrong;
    auto describe = [](const GrantRecord &g) {
        return g.holder + " token " + std::to_string(g.token) + " [" + std::to_string(g.ackedMs) +
               ", " + std::to_string(g.untilMs) + "] ms";
    };
    for (std::size_t i = 0; i < history.size(); ++i) {
        const GrantRecord &a = history[i];
        for (std::size_t j = 0; j < history.size(); ++j) {
            if (i == j)
                continue;
            const GrantRecord &b = history[j];
            if (i < j && a.resource == b.resource && a.ackedMs < b.untilMs && b.ackedMs < a.untilMs)
                wrong.push_back("overlapping grants of " + a.resource + ": " + describe(a) +
                                " and " + describe(b));
            if (a.ackedMs < b.sentMs && a.token >= b.token)
                wrong.push_back("tokens went back: " + describe(a) + " was acknowledged before " +
                                describe(b) + " was asked for");
        }
    }
    return wrong;
}
