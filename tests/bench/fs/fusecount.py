#!/usr/bin/env python3
"""Counts the FUSE requests one mount receives while a command runs, by opcode.

Uses the kernel's fuse_request_send tracepoint (6.16 and later) in a tracing instance of its
own, so it neither needs the gate's cooperation nor disturbs other users of the global trace
buffer. Needs root and tracefs at /sys/kernel/tracing.

    fusecount.py MOUNT -- COMMAND...        (prints "OPCODE count" lines, then the total)

bench.py imports FuseCounter to count one run of each workload inside the gate.
"""

import collections
import os
import re
import subprocess
import sys

TRACING = "/sys/kernel/tracing"
EVENT = "events/fuse/fuse_request_send"
LINE = re.compile(r"connection (\d+) req \d+ opcode \d+ \((\w+)\)")


def connection_of(mount):
    """The mount's device number as the tracepoint prints it (the kernel's MKDEV encoding)."""
    st = os.stat(mount)
    return (os.major(st.st_dev) << 20) | os.minor(st.st_dev)


class FuseCounter:
    def __init__(self, mount):
        self.connection = connection_of(mount)
        self.instance = os.path.join(TRACING, "instances", "gatefs-count-%d" % os.getpid())

    @staticmethod
    def available():
        return os.path.exists(os.path.join(TRACING, EVENT))

    def _write(self, rel, value):
        with open(os.path.join(self.instance, rel), "w") as f:
            f.write(value)

    def __enter__(self):
        os.makedirs(self.instance, exist_ok=True)
        self._write("buffer_size_kb", "16384")  # per CPU: ~200 000 requests
        self._write(EVENT + "/filter", "connection == %d" % self.connection)
        self._write(EVENT + "/enable", "1")
        return self

    def stop(self):
        """Stops counting: a Counter of opcode names (FUSE_ prefix dropped), and lost events."""
        self._write(EVENT + "/enable", "0")
        counts = collections.Counter()
        with open(os.path.join(self.instance, "trace")) as f:
            for line in f:
                m = LINE.search(line)
                if m and int(m.group(1)) == self.connection:
                    counts[m.group(2).replace("FUSE_", "")] += 1
        lost = 0
        for cpu in os.listdir(os.path.join(self.instance, "per_cpu")):
            with open(os.path.join(self.instance, "per_cpu", cpu, "stats")) as f:
                for line in f:
                    if line.startswith("overrun:"):
                        lost += int(line.split()[1])
        return counts, lost

    def __exit__(self, *exc):
        try:
            self._write(EVENT + "/enable", "0")
        finally:
            os.rmdir(self.instance)


def describe(counts):
    total = sum(counts.values())
    return "%d requests: %s" % (total, ", ".join(
        "%s %d" % (op, n) for op, n in counts.most_common()))


def main():
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        raise SystemExit(__doc__)
    if not FuseCounter.available():
        raise SystemExit("no fuse_request_send tracepoint in %s" % TRACING)
    with FuseCounter(sys.argv[1]) as counter:
        subprocess.run(sys.argv[3:], check=False)
        counts, lost = counter.stop()
    print(describe(counts) + (" (%d events lost)" % lost if lost else ""))


if __name__ == "__main__":
    main()
