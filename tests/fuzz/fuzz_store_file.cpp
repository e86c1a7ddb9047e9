// A damaged leasehold.db, from outside bytes. At start-up a small database is written through
// the store itself (leases, agents, keys, ledger events, deterministic so an input replays
// exactly); each input is a run of patches to it — three bytes of offset (little-endian, taken
// modulo the file's size), one byte of length less one, then that many bytes to write there —
// and the patched file is opened as the next run would open it: SqliteStore::load, the engine
// restored from it (EngineHost::restoreFrom), the ledger read back, one more change committed,
// the store closed. Asserted:
//   - load either succeeds or refuses with a reason; never a crash, a hang or a sanitizer report;
//   - whatever is restored keeps the engine's invariants (no two conflicting leases, one
//     deadline each, tokens increasing) — a damaged row is skipped, not trusted;
//   - the ledger read back is in sequence order, each event after the one before.

#include "enginehost.h"
#include "sqlitestore.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include <sqlite3.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

using namespace leasehold;

namespace {

constexpr TimeMs kNow = 1'800'000'000'000;

[[noreturn]] void fail(const char *what, const std::string &detail = {})
{
    std::fprintf(stderr, "invariant broken: %s%s%s\n", what, detail.empty() ? "" : ": ",
                 detail.c_str());
    std::abort();
}

StoreOps templateOps()
{
    StoreOps ops;
    const char *holders[] = {"did:agent:a", "did:agent:b", "did:agent:c"};
    const char *resources[] = {"lock:deploy/production", "lock:db/primary", "lock:build/*/cache"};
    for (int i = 0; i < 3; ++i) {
        LeaseInfo lease;
        lease.leaseId = "ls_" + std::to_string(i + 1);
        lease.resource = resources[i];
        lease.holder = holders[i];
        lease.mode = i == 2 ? Mode::Read : Mode::Write;
        lease.token = std::uint64_t(i + 1);
        lease.grantedAt = kNow - 1'000;
        lease.expiresAt = kNow + 30'000 * (i + 1);
        lease.ttlMs = 30'000;
        ops.putLease(lease);
        ops.putAgent(holders[i], 0.9 - 0.1 * i, std::uint64_t(i), std::uint64_t(i % 2), i == 2);
        LedgerEvent e;
        e.seq = std::uint64_t(i + 1);
        e.at = kNow - 1'000 + i;
        e.kind = EventKind::Granted;
        e.actorDid = holders[i];
        e.resource = resources[i];
        e.leaseId = lease.leaseId;
        e.token = lease.token;
        e.ttlMs = lease.ttlMs;
        e.facts.mode = lease.mode;
        e.facts.waitedMs = 10 * i;
        ops.appendEvent(e);
    }
    LedgerEvent refused;
    refused.seq = 4;
    refused.at = kNow;
    refused.kind = EventKind::Refused;
    refused.actorDid = "did:agent:b";
    refused.resource = "lock:deploy/production";
    refused.reason = "deadlock";
    refused.facts.op = "acquire";
    refused.facts.holder = "did:agent:a";
    refused.facts.cycle = {{"did:agent:a", "lock:db/primary"},
                           {"did:agent:b", "lock:deploy/production"}};
    ops.appendEvent(refused);
    ops.reserveTokens(1'000);
    ops.putKey({std::string(64, 'a'), "did:agent:minted", "agent", kNow});
    return ops;
}

struct Template
{
    QTemporaryDir dir;
    QByteArray bytes;
    Template()
    {
        const QString path = dir.filePath(QStringLiteral("template.db"));
        {
            SqliteStore store(SqliteStore::Options{path});
            std::string error;
            if (!store.load(&error))
                fail("cannot create the template database", error);
            StoreOps ops = templateOps();
            store.submit(ops);
            store.close();
        }
        // Everything into the main file (the store keeps a write-ahead log beside it).
        sqlite3 *db = nullptr;
        if (sqlite3_open(QFile::encodeName(path).constData(), &db) != SQLITE_OK ||
            sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE",
                         nullptr, nullptr, nullptr) != SQLITE_OK)
            fail("cannot checkpoint the template database", sqlite3_errmsg(db));
        sqlite3_close(db);
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            fail("cannot read the template database");
        bytes = file.readAll();
    }
};

void checkEngine(EngineHost &host)
{
    try {
        host.engine().checkInvariants();
    } catch (const std::logic_error &e) {
        fail("engine invariant after restoring a damaged database", e.what());
    }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    static QCoreApplication app(*argc, *argv);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size)
{
    static const Template base;
    QByteArray db = base.bytes;
    for (std::size_t at = 0; at + 4 <= size;) {
        const std::size_t offset = (std::size_t(data[at]) | std::size_t(data[at + 1]) << 8 |
                                    std::size_t(data[at + 2]) << 16) %
                                   std::size_t(db.size());
        std::size_t length = std::size_t(data[at + 3]) + 1;
        at += 4;
        length = std::min({length, size - at, std::size_t(db.size()) - offset});
        std::memcpy(db.data() + offset, data + at, length);
        at += length;
    }
    static const QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("leasehold.db"));
    for (const char *suffix : {"", "-wal", "-shm"})
        QFile::remove(path + QLatin1String(suffix));
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(db) != db.size())
        fail("cannot write the damaged database");
    file.close();

    SqliteStore::Options options{path};
    options.closeTimeoutMs = 500;
    SqliteStore store(options);
    std::string error;
    const std::optional<StoredState> state = store.load(&error);
    if (!state) {
        if (error.empty())
            fail("a database refused without a reason");
        return 0;
    }
    if (size == 0 && (state->leases.size() != 3 || state->lastSeq != 4))
        fail("the undamaged template does not read back", std::to_string(state->leases.size()) +
                                                              " leases, last seq " +
                                                              std::to_string(state->lastSeq));
    ManualClock clock(kNow);
    EngineHost host(EngineConfig{}, &clock);
    const int restored = host.restoreFrom(store, *state);
    if (size == 0 && restored != 3)
        fail("the undamaged template's leases are not restored", std::to_string(restored));
    checkEngine(host);
    std::uint64_t last = 0;
    for (const LedgerEvent &e : store.ledger(0, 1'000, LedgerFilter{})) {
        if (e.seq <= last)
            fail("the ledger read back out of order",
                 std::to_string(e.seq) + " after " + std::to_string(last));
        last = e.seq;
    }
    clock.advance(3'600'000);
    host.tick();
    checkEngine(host);
    host.closeStore();
    return 0;
}
