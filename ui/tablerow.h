#pragma once

#include <QString>
#include <QVariant>

#include <vector>

// How a column shows its raw value. Times are engine milliseconds since the epoch and shown
// relative to the model's "now" ("12 s ago", "in 4 s"), so they stay live between frames.
// Agent is text naming the agent a row is about: the holder levers act on it.
enum class ColumnKind { Text, Agent, Number, Score, Since, Until, Duration, Flag };

struct TableColumn
{
    TableColumn(QString title_, ColumnKind kind_ = ColumnKind::Text, QString toolTip_ = {})
        : title(std::move(title_))
        , kind(kind_)
        , toolTip(std::move(toolTip_))
    {}
    QString title;
    ColumnKind kind;
    QString toolTip;
};

// How a row asks to be drawn.
enum class RowMark { None, Attention, Incident };

// One row of a console table: a stable key (lease id, agent DID, ...) and one raw value per
// column. Rows are compared by key across frames, values to find what changed.
struct TableRow
{
    QString key;
    std::vector<QVariant> values;
    RowMark mark = RowMark::None;

    bool operator==(const TableRow &other) const = default;
};
