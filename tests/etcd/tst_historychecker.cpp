// The checker finds what it is there to find (so that its silence means something).

#include "historychecker.h"

#include <QTest>

class TstHistoryChecker : public QObject
{
    Q_OBJECT

private slots:
    void aConsistentHistoryPasses()
    {
        QVERIFY(checkHistory({{"r", "a", 1, 0, 10, 50},
                              {"r", "b", 3, 40, 60, 90}, // asked before a's release, granted after
                              {"s", "c", 2, 5, 15, 100}})
                    .empty());
    }
    void overlappingGrantsAreFound()
    {
        const auto wrong = checkHistory({{"r", "a", 1, 0, 10, 50}, {"r", "b", 2, 20, 30, 80}});
        QCOMPARE(wrong.size(), std::size_t(1));
        QVERIFY(wrong[0].find("overlapping grants of r") != std::string::npos);
    }
    void tokensGoingBackAreFound()
    {
        const auto wrong = checkHistory({{"r", "a", 7, 0, 10, 50}, {"s", "b", 5, 20, 30, 80}});
        QCOMPARE(wrong.size(), std::size_t(1));
        QVERIFY(wrong[0].find("tokens went back") != std::string::npos);
    }
};

QTEST_MAIN(TstHistoryChecker)
#include "tst_historychecker.moc"
