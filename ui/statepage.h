#pragma once

#include <QWidget>

class ConsoleState;

// A console page drawn from ConsoleState that does its work only while shown: showState()
// keeps the state and refreshes now when the page is visible, else once it is shown, so a
// busy engine costs a hidden page nothing.
//
// Thread: the UI thread.
class StatePage : public QWidget
{
public:
    using QWidget::QWidget;

    // Takes in `state`'s frame; `state` must outlive the page.
    void showState(const ConsoleState &state)
    {
        m_state = &state;
        m_stale = true;
        if (isVisible())
            refreshNow();
    }

protected:
    // Works the page out from `state` (called only while visible, or when asked).
    virtual void refresh(const ConsoleState &state) = 0;
    const ConsoleState *state() const { return m_state; }
    void refreshNow()
    {
        if (!m_state)
            return;
        m_stale = false;
        refresh(*m_state);
    }
    void showEvent(QShowEvent *event) override
    {
        QWidget::showEvent(event);
        if (m_stale)
            refreshNow();
    }

private:
    const ConsoleState *m_state = nullptr;
    bool m_stale = true; // a frame came since the page was last worked out
};
