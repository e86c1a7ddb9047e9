#pragma once

#include "ledgerevent.h"
#include "snapshot.h"
#include "storeops.h"

#include <optional>
#include <string>
#include <string_view>

// How cluster mode writes the engine's state into etcd values: JSON an operator can read with
// `etcdctl get --prefix leasehold/` (a ledger event's typed facts ride along in the store's
// own binary encoding, base64). Decoding checks every field and refuses, never guesses: a
// value some other writer left there is skipped by the caller, not trusted.
namespace leasehold::etcd {

std::string encodeLease(const LeaseInfo &lease);
std::optional<LeaseInfo> decodeLease(std::string_view json);

std::string encodeAgent(const AgentState &agent);
std::optional<AgentState> decodeAgent(std::string_view json);

std::string encodeKey(const StoredKey &key);
std::optional<StoredKey> decodeKey(std::string_view json);

std::string encodeEvent(const LedgerEvent &event);
std::optional<LedgerEvent> decodeEvent(std::string_view json);
// A run of events as one value (a JSON array), so that the ring costs a transaction one
// operation per run, not one per event; decoding passes over an element it cannot read.
std::string encodeEvents(const std::vector<const LedgerEvent *> &events);
std::vector<LedgerEvent> decodeEvents(std::string_view json);

// Sequence numbers as keys that sort as numbers (20 digits).
std::string sequenceKey(std::uint64_t seq);

} // namespace leasehold::etcd
