#!/usr/bin/env python3
"""The filesystem gate's cost, inside / outside, on the same tree in one run.

A tree of the project's own sources (COPIES copies of `git archive HEAD`, one git repository)
is put in a backing folder and the gate (gatefs_harness: an allow-everything policy that still
locks and looks up per call) is mounted over it elsewhere. Each workload runs on the backing
folder directly ("outside") and through the mount ("inside"), rounds interleaved and the order
rotated every round; the ratio is of the medians. Then the gate's memory once 100 000 files
have been stat'ed through it. Not a test: it prints figures.

Several gate configurations side by side, in one sitting: CONFIGS="name=flags;name=flags"
mounts one gate per configuration (each its own mount point and bus, so none waits on another),
and every round runs outside and inside each of them, in rotated order. Workloads that write
use names of their own per place, so no gate's caches see another's changes. "@PATH" as the
first flag runs another harness binary (an older build, say). With COUNT=1 (root, Linux 6.16+
for the fuse_request_send tracepoint) one more run per workload and gate counts the FUSE
requests it caused, by opcode.

Run through run.sh, as root (mounting, allow_other, RLIMIT_NOFILE for 100 000 descriptors).
"""

import argparse
import collections
import os
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from fusecount import FuseCounter, describe

GOALS = {
    "git status": 1.5,
    "git grep": 2.0,
    "find": 1.5,
    "compile engine/core": 1.1,
    "2000 small files": 2.0,
}


class Gate:
    def __init__(self, harness, backing, mount, bus, flags):
        os.makedirs(mount, exist_ok=True)
        self.mount = mount
        self.proc = subprocess.Popen(
            [harness, "--backing", backing, "--mount", mount, "--bus", bus] + flags,
            stdout=subprocess.PIPE, stderr=sys.stderr)
        line = b""
        deadline = time.monotonic() + 15
        while not line.endswith(b"\n") and time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 256)
                if not chunk:
                    break
                line += chunk
        if not line.startswith(b"mounted"):
            self.proc.kill()
            raise SystemExit("gate did not mount: %r" % line)

    def status(self):
        fields = {}
        with open("/proc/%d/status" % self.proc.pid) as f:
            for line in f:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        with open("/proc/%d/stat" % self.proc.pid) as f:
            stat = f.read().rsplit(")", 1)[1].split()
        tick = os.sysconf("SC_CLK_TCK")
        fields["cpu"] = (int(stat[11]) + int(stat[12])) / tick
        fields["fds"] = len(os.listdir("/proc/%d/fd" % self.proc.pid))
        return fields

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            subprocess.run(["fusermount3", "-u", "-z", self.mount])


def run(cmd, cwd):
    subprocess.run(["bash", "-c", cmd], cwd=cwd, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def build_tree(source, ws, copies):
    os.makedirs(ws)
    for i in range(copies):
        dest = os.path.join(ws, "copy%02d" % i)
        os.makedirs(dest)
        archive = subprocess.Popen(["git", "-C", source, "archive", "HEAD"],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", dest], stdin=archive.stdout, check=True)
        archive.wait()
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@invalid"]
    subprocess.run(git + ["init", "-q", ws], check=True)
    subprocess.run(git + ["-C", ws, "add", "-A"], check=True)
    subprocess.run(git + ["-C", ws, "commit", "-q", "-m", "tree"], check=True)
    # A few untracked and modified files, as in a real workspace.
    for i in range(20):
        with open(os.path.join(ws, "copy00", "untracked%d.txt" % i), "w") as f:
            f.write("x\n")
    with open(os.path.join(ws, "copy01", "CMakeLists.txt"), "a") as f:
        f.write("# touched\n")


COMPILE = ("mkdir -p obj{t} && for f in ws/copy00/engine/core/*.cpp; do "
           "g++ -std=c++20 -O0 -c \"$f\" -I ws/copy00/engine/core "
           "-o obj{t}/$(basename \"$f\" .cpp).o || exit 1; done")
GREP = "git -C ws grep -c -e namespace -e include >/dev/null"

# name, setup (untimed), timed command, teardown (untimed), rounds; {t}: the place's own names
WORKLOADS = [
    ("git status", None, "git -C ws status --porcelain >/dev/null", None, None),
    ("git grep", None, GREP, None, None),
    # How many requests "git grep" costs depends on how long ago the same place last ran it (so
    # on how many gates run side by side): both ends. Just after another run, every name and
    # attribute is still cached; once they ran out, it is a lookup per file. They run out after
    # 1 s only where the gate has no inotify watch on the folder; watched, after 30 s
    # (GateFs::Options::watchedTimeout), so "names expired" is cached too.
    ("git grep, names cached", GREP, GREP, None, None),
    ("git grep, names expired", "sleep 1.2", GREP, None, None),
    ("find", None, "find ws >/dev/null", None, None),
    ("find -ls (stat all)", None, "find ws -ls >/dev/null", None, None),
    ("compile engine/core", None, COMPILE, "rm -rf obj{t}", 3),
    ("2000 small files", "mkdir -p small{t}",
     "for i in $(seq 2000); do echo \"$i\" > small{t}/f$i; done", "rm -rf small{t}", None),
    ("cp -r", None, "cp -r ws/copy00 cpdest{t}", "rm -rf cpdest{t}", None),
    ("rm -rf", "cp -r ws/copy00 rmdest{t}", "rm -rf rmdest{t}", None, None),
]


def measure(name, setup, cmd, teardown, where, tag="", counter=None):
    """The command's time, or with `counter` the FUSE requests it caused (a Counter)."""
    if setup:
        run(setup.format(t=tag), where)
    if counter:
        with counter:
            run(cmd.format(t=tag), where)
            result = counter.stop()[0]
    else:
        start = time.perf_counter()
        run(cmd.format(t=tag), where)
        result = time.perf_counter() - start
    if teardown:
        run(teardown.format(t=tag), where)
    return result


def parse_configs(text, harness, default_flags):
    """[(name, harness, flags)] from "name=flags;name=@harness flags"."""
    if not text:
        return [("gate", harness, default_flags)]
    configs = []
    for item in text.split(";"):
        name, _, flags = item.partition("=")
        flags = flags.split()
        binary = harness
        if flags and flags[0].startswith("@"):
            binary = flags.pop(0)[1:]
        configs.append((name.strip(), binary, flags))
    return configs


def many_files(backing, count):
    root = os.path.join(backing, "many")
    per = 1000
    for d in range(count // per):
        folder = os.path.join(root, "d%03d" % d)
        os.makedirs(folder)
        for i in range(per):
            os.close(os.open(os.path.join(folder, "f%04d" % i), os.O_CREAT | os.O_WRONLY, 0o644))
    return root


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser()
    parser.add_argument("--harness", required=True)
    parser.add_argument("--source", default=os.path.abspath(os.path.join(here, "../../..")))
    parser.add_argument("--rounds", type=int, default=int(os.environ.get("ROUNDS", "5")))
    parser.add_argument("--copies", type=int, default=int(os.environ.get("COPIES", "16")))
    parser.add_argument("--files", type=int, default=100_000)
    parser.add_argument("--only", default=os.environ.get("ONLY", ""))
    parser.add_argument("--gate-flags", default=os.environ.get("GATE_FLAGS", ""))
    parser.add_argument("--configs", default=os.environ.get("CONFIGS", ""))
    parser.add_argument("--count", action="store_true", default=os.environ.get("COUNT") == "1")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    configs = parse_configs(args.configs, args.harness, args.gate_flags.split())
    if args.count and not FuseCounter.available():
        raise SystemExit("COUNT=1: no fuse_request_send tracepoint here")

    work = tempfile.mkdtemp(prefix="gatefs-bench.")
    backing = os.path.join(work, "backing")
    os.makedirs(backing)
    build_tree(args.source, os.path.join(backing, "ws"), args.copies)
    files = int(subprocess.run(["git", "-C", os.path.join(backing, "ws"), "ls-files"],
                               capture_output=True, check=True).stdout.count(b"\n"))
    print("tree: %d copies of %s, %d tracked files; %d rounds; gates: %s"
          % (args.copies, args.source, files, args.rounds,
             "; ".join("%s (%s)" % (n, " ".join(([] if b == args.harness else ["@" + b]) + f)
                                    or "defaults") for n, b, f in configs)))

    gates = []
    results = []  # (workload, outside, {config: inside})
    try:
        for name, binary, flags in configs:
            gates.append(Gate(binary, backing, os.path.join(work, "mnt-" + name),
                              os.path.join(work, "bus-" + name), flags))
        places = [("outside", backing, "-out")] + [
            (name, gate.mount, "-" + name) for (name, _, _), gate in zip(configs, gates)]
        workloads = [w for w in WORKLOADS if not args.only or args.only in w[0]]
        for name, setup, cmd, teardown, rounds in workloads:  # warm every place's caches
            for _, where, tag in places:
                measure(name, setup, cmd, teardown, where, tag)
        for name, setup, cmd, teardown, rounds in workloads:
            times = collections.defaultdict(list)
            for r in range(rounds or args.rounds):
                shift = r % len(places)
                for place, where, tag in places[shift:] + places[:shift]:
                    times[place].append(measure(name, setup, cmd, teardown, where, tag))
            out = statistics.median(times["outside"])
            inside = {place: statistics.median(times[place]) for place, _, _ in places[1:]}
            results.append((name, out, inside))
            print("  %-24s outside %8.1f ms  %s" % (name, out * 1e3, "  ".join(
                "%s %8.1f ms (%.2f)" % (p, t * 1e3, t / out) for p, t in inside.items())),
                flush=True)
            if args.count:
                for place, where, tag in places[1:]:
                    counts = measure(name, setup, cmd, teardown, where, tag,
                                     FuseCounter(where))
                    print("  %-24s %s: %s" % ("", place, describe(counts)), flush=True)

        if not args.only:
            # The cost of a second gate over the same tree: every change waits for its ack.
            name, binary, flags = configs[0]
            second = Gate(binary, backing, os.path.join(work, "mnt2"),
                          os.path.join(work, "bus-" + name), flags)
            try:
                w = next(w for w in WORKLOADS if w[0] == "2000 small files")
                inside = [measure(w[0], w[1], w[2], w[3], gates[0].mount, "-2")
                          for _ in range(args.rounds)]
                outside = [measure(w[0], w[1], w[2], w[3], backing, "-2")
                           for _ in range(args.rounds)]
                results.append(("2000 small files, 2 gates", statistics.median(outside),
                                {name: statistics.median(inside)}))
            finally:
                second.stop()

        names = [n for n, _, _ in configs]
        print("\n%-26s %10s %s %6s" % ("workload", "outside ms", " ".join(
            "%10s %6s" % (n[:10] + " ms", "ratio") for n in names), "goal"))
        for name, out, inside in results:
            goal = GOALS.get(name)
            cells = " ".join("%10.1f %6.2f" % (inside[n] * 1e3, inside[n] / out)
                             if n in inside else "%10s %6s" % ("", "") for n in names)
            print("%-26s %10.1f %s %6s" % (name, out * 1e3, cells,
                                          "≤%.1f" % goal if goal else ""))

        if args.files and not args.only:
            gate = gates[0]
            many = many_files(backing, args.files)
            before = gate.status()
            start = time.perf_counter()
            subprocess.run("find %s -type f -printf '%%s\\n' | wc -l" % os.path.join(gate.mount, "many"),
                           shell=True, check=True, stdout=subprocess.DEVNULL)
            elapsed = time.perf_counter() - start
            after = gate.status()
            print("\n%d files stat'ed through the gate in %.2f s: VmRSS %s (before %s), VmHWM %s, "
                  "%d open fds, gate CPU %.1f s total"
                  % (args.files, elapsed, after["VmRSS"], before["VmRSS"], after["VmHWM"],
                     after["fds"], after["cpu"]))
            shutil.rmtree(many)
    finally:
        for gate in gates:
            gate.stop()
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
