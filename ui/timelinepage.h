#pragma once

#include "consolecommands.h"
#include "timelinemodel.h"

#include "statepage.h"

#include <functional>

class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;
class TimelineView;

// The console's timeline: what happened to this resource (or this agent) over the last 30 s to
// 60 minutes? A lane per resource or per agent (switchable), a filter, the window's width, and
// whether it follows live time. Every frame's events are taken in whether or not the page is
// shown; the picture is worked out only while it is.
//
// What the console did not see comes from the store: with a resource (or a DID) in the filter,
// that name's ledger over the window, a page at a time; with none, the newest events before
// the console started. The reader is asked through setHistoryReader and answers through
// takeHistory, so the page never waits for it.
//
// Thread: the UI thread.
class TimelinePage : public StatePage
{
    Q_OBJECT

public:
    // Asks for up to `limit` events after `since` that match `filter`; returns the request's
    // number, which comes back with its page through takeHistory().
    using HistoryReader = std::function<quint64(std::uint64_t since, std::size_t limit,
                                                const leasehold::LedgerFilter &filter)>;

    explicit TimelinePage(QWidget *parent = nullptr);

    void absorb(const leasehold::ConsoleFrame &frame);
    void setHistoryReader(HistoryReader reader) { m_reader = std::move(reader); }
    void takeHistory(quint64 request, const leasehold::LedgerPagePtr &page);
    // Shows `path`'s lanes (by resource), as the resource tree asks; empty shows all.
    void showResource(const QString &path);

    const TimelineModel &model() const { return m_model; }
    TimelineView *view() const { return m_view; }
    QLineEdit *filterEdit() const { return m_filter; }
    QString summary() const;
    // Events read from the store for the current filter so far.
    std::size_t historyEvents() const { return m_historyEvents; }
    // Whether a read of the store is under way.
    bool readingHistory() const { return m_pending != 0; }

    static constexpr std::size_t kHistoryPage = 5'000;
    static constexpr std::size_t kMaxHistory = 50'000;
    static constexpr std::size_t kFleetHistory = 20'000;

signals:
    // A held bar was chosen: select its lease in Holders (live) or show its ledger (ended).
    void leaseActivated(const QString &leaseId, const QString &resource, bool live);

protected:
    void changeEvent(QEvent *event) override;

private:
    void refresh(const ConsoleState &state) override;
    // The store read the window and filter call for, if it differs from what is held or asked.
    void readHistoryIfNeeded();
    void updateSummary();

    TimelineModel m_model;
    TimelineView *m_view;
    QComboBox *m_by;
    QLineEdit *m_filter;
    QComboBox *m_span;
    QToolButton *m_live;
    QLabel *m_summary;
    HistoryReader m_reader;
    quint64 m_pending = 0;           // the request under way (0: none)
    leasehold::LedgerFilter m_asked; // what the current chain of reads is for
    bool m_askedAny = false;
    std::size_t m_historyEvents = 0;
};
