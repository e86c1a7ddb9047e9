#!/usr/bin/env python3
"""The house rules, checked on the tree and on what was built from it (docs/architecture.md).

  check_house.py SOURCE_DIR BUILD_DIR

What is still owed is listed in tests/house/owed.txt, one problem's first line each: the
check fails on any problem not listed there, and on a listed one that is gone (take it off
the list), so the list only shrinks.

1. No source file over 500 lines.
2. No class over 600 lines with its header: a part X.cpp and its X.h together.
3. No circle between files: in the objects built from engine/, ui/ and app/, file A calls into
   file B (an undefined symbol of A.o that B.o defines) and B, by any path, back into A. A class
   split across files must be split into layers: the shared piece in a file of its own that both
   sides call, never calling back. Moc's and the resource compiler's objects are left out (a
   signal is defined by moc and called by the class; that is Qt's circle, not ours), and so are
   vtables and type information (every part of a class refers to those).
"""
import json
import os
import subprocess
import sys

SOURCES = ('.cpp', '.h', '.mjs', '.py', '.sh', '.lua')
PARTS = ('engine/', 'ui/', 'app/')
IGNORED = ('vtable for', 'typeinfo', 'VTT for', 'construction vtable')


def tracked(source):
    out = subprocess.run(['git', '-C', source, 'ls-files'], capture_output=True, text=True)
    if out.returncode == 0 and out.stdout:
        return out.stdout.split()
    # Not a git checkout (a source package): every file but build trees and installed modules.
    found = []
    for d, dirs, files in os.walk(source):
        dirs[:] = [x for x in dirs if x not in ('.git', 'node_modules') and
                   not os.path.exists(os.path.join(d, x, 'CMakeCache.txt'))]
        found += [os.path.relpath(os.path.join(d, f), source) for f in files]
    return found


def lines(path):
    with open(path, 'rb') as f:
        return f.read().count(b'\n')


def sizes(source, files):
    problems = []
    for f in files:
        if f.endswith(SOURCES) and os.path.exists(os.path.join(source, f)):
            n = lines(os.path.join(source, f))
            if n > 500:
                problems.append(f'{f}: {n} lines (at most 500)')
        if f.endswith('.cpp') and f[:-4] + '.h' in files:
            n = lines(os.path.join(source, f)) + lines(os.path.join(source, f[:-4] + '.h'))
            if n > 600:
                problems.append(f'{f[:-4]}: {n} lines with its header (at most 600)')
    return problems


def symbols(obj):
    out = subprocess.run(['nm', '-C', obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        kind, name = (line[:1], line[2:].strip()) if line.startswith(' ') else (None, None)
        if line.startswith(' '):
            kind, name = line.split(None, 1) if len(line.split(None, 1)) == 2 else (None, None)
            if kind == 'U' and not name.startswith(IGNORED):
                undefined.add(name)
            continue
        parts = line.split(' ', 2)
        if len(parts) == 3 and parts[1] in 'TDBR' and not parts[2].startswith(IGNORED):
            defined.add(parts[2])
    return defined, undefined


SOURCE_OF = {}  # object -> its source, relative to the tree


def objects(source, build):
    # The objects this build makes (compile_commands.json), not whatever lies in the directory:
    # a file moved away leaves its old object behind.
    with open(os.path.join(build, 'compile_commands.json')) as f:
        commands = json.load(f)
    found = []
    for c in commands:
        rel = os.path.relpath(c['file'], source).replace(os.sep, '/')
        words = c.get('arguments') or c['command'].split()
        out = c.get('output') or (words[words.index('-o') + 1] if '-o' in words else '')
        obj = os.path.join(c['directory'], out)
        if rel.startswith(PARTS) and '_autogen' not in obj and 'qrc_' not in obj \
                and os.path.exists(obj):
            found.append(obj)
            SOURCE_OF[obj] = rel
    return sorted(set(found))


def circles(source, build):
    objs = objects(source, build)
    if not objs:
        return [f'no objects of {", ".join(PARTS)} under {build}: build first']
    defs, undefs = {}, {}
    for o in objs:
        defs[o], undefs[o] = symbols(o)
    owner = {}
    for o in objs:
        for s in defs[o]:
            owner.setdefault(s, o)
    edges = {o: {owner[s] for s in undefs[o] if s in owner and owner[s] != o} for o in objs}

    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components, iteratively
        work = [(v, iter(sorted(edges[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges[w]))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    found.append(comp)

    for o in sorted(objs):
        if o not in index:
            visit(o)

    def name(o):
        return SOURCE_OF[o]

    problems = []
    for comp in found:
        lines_ = [f'circle: {", ".join(sorted(name(o) for o in comp))}']
        for a in sorted(comp):
            for b in sorted(edges[a] & set(comp)):
                why = sorted(undefs[a] & defs[b])
                lines_.append(f'    {name(a)} -> {name(b)}: {why[0][:120]}' +
                              (f' (and {len(why) - 1} more)' if len(why) > 1 else ''))
        problems.append('\n'.join(lines_))
    return problems


def main():
    source, build = sys.argv[1], sys.argv[2]
    problems = sizes(source, tracked(source)) + circles(source, build)
    owed_file = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'owed.txt')
    owed = set()
    if os.path.exists(owed_file):
        with open(owed_file) as f:
            owed = {l.strip() for l in f if l.strip() and not l.startswith('#')}
    new = [p for p in problems if p.split('\n')[0] not in owed]
    seen = {p.split('\n')[0] for p in problems}
    paid = sorted(owed - seen)
    for p in problems:
        print(('owed: ' if p.split('\n')[0] in owed else '') + p)
    for p in paid:
        print(f'no longer a problem, take it off {owed_file}: {p}')
    print(f'check_house: {len(problems)} problem(s), {len(new)} not owed, {len(paid)} paid')
    return 1 if new or paid else 0


if __name__ == '__main__':
    sys.exit(main())
