#include "waitgraphlayout.h"

#include <algorithm>
#include <cmath>
#include <functional>

namespace {

// Tarjan's strongly connected components, each a list of its nodes.
std::vector<std::vector<QString>> components(const std::set<QString> &nodes,
                                             const std::map<QString, std::set<QString>> &out)
{
    std::map<QString, int> index, low;
    std::vector<QString> stack;
    std::set<QString> onStack;
    std::vector<std::vector<QString>> found;
    int next = 0;
    std::function<void(const QString &)> visit = [&](const QString &v) {
        index[v] = low[v] = next++;
        stack.push_back(v);
        onStack.insert(v);
        if (auto it = out.find(v); it != out.end()) {
            for (const QString &w : it->second) {
                if (!index.count(w)) {
                    visit(w);
                    low[v] = std::min(low[v], low[w]);
                } else if (onStack.count(w)) {
                    low[v] = std::min(low[v], index[w]);
                }
            }
        }
        if (low[v] == index[v]) {
            std::vector<QString> c;
            QString w;
            do {
                w = stack.back();
                stack.pop_back();
                onStack.erase(w);
                c.push_back(w);
            } while (w != v);
            std::sort(c.begin(), c.end());
            found.push_back(std::move(c));
        }
    };
    for (const QString &v : nodes)
        if (!index.count(v))
            visit(v);
    return found;
}

} // namespace

std::map<QString, QPointF>
WaitGraphLayout::place(const std::set<QString> &nodes,
                       const std::vector<std::pair<QString, QString>> &edges)
{
    std::map<QString, std::set<QString>> out;
    for (const auto &[from, to] : edges)
        if (from != to)
            out[from].insert(to);
    // Columns: a component's is one more than the furthest one it waits for (Tarjan yields
    // components after every one they reach, so one pass in that order settles them).
    const std::vector<std::vector<QString>> comps = components(nodes, out);
    std::map<QString, int> compOf;
    for (std::size_t i = 0; i < comps.size(); ++i)
        for (const QString &v : comps[i])
            compOf[v] = int(i);
    std::vector<int> column(comps.size(), 0);
    m_cycles.clear();
    for (std::size_t i = 0; i < comps.size(); ++i) {
        for (const QString &v : comps[i])
            for (const QString &w : out[v])
                if (compOf[w] != int(i))
                    column[i] = std::max(column[i], column[std::size_t(compOf[w])] + 1);
        if (comps[i].size() > 1)
            m_cycles.push_back(comps[i]);
    }

    // Rows: kept while a node stays in its column; a cycle's members stay together.
    for (auto it = m_slots.begin(); it != m_slots.end();) {
        const bool keep =
            nodes.count(it->first) && column[std::size_t(compOf[it->first])] == it->second.column;
        it = keep ? std::next(it) : m_slots.erase(it);
    }
    std::map<int, std::set<int>> taken;
    for (const auto &[v, slot] : m_slots)
        taken[slot.column].insert(slot.row);
    // Newcomers column by column from the left, so the rows they aim at are settled.
    std::vector<std::size_t> order(comps.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return column[a] < column[b]; });
    for (std::size_t i : order) {
        std::vector<QString> fresh;
        double aim = 0;
        int targets = 0;
        for (const QString &v : comps[i]) {
            if (!m_slots.count(v))
                fresh.push_back(v);
            for (const QString &w : out[v])
                if (auto s = m_slots.find(w); s != m_slots.end() && compOf[w] != int(i)) {
                    aim += s->second.row;
                    ++targets;
                }
        }
        if (fresh.empty())
            continue;
        const int c = column[i];
        const int want = targets ? int(std::lround(aim / targets)) : 0;
        const int need = int(fresh.size());
        // The free run of `need` rows nearest to `want` (a cycle's members side by side).
        auto freeRun = [&](int from) {
            for (int r = from; r < from + need; ++r)
                if (r < 0 || taken[c].count(r))
                    return false;
            return true;
        };
        int row = want;
        for (int d = 0;; ++d) {
            if (freeRun(want + d)) {
                row = want + d;
                break;
            }
            if (want - d >= 0 && freeRun(want - d)) {
                row = want - d;
                break;
            }
        }
        for (const QString &v : fresh) {
            m_slots[v] = {c, row};
            taken[c].insert(row++);
        }
    }
    std::map<QString, QPointF> at;
    for (const QString &v : nodes) {
        const Slot &s = m_slots[v];
        at[v] = QPointF(s.column * kColumnWidth, s.row * kRowHeight);
    }
    return at;
}
