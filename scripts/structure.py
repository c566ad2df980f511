#!/usr/bin/env python3
"""scripts/structure.py - the circles among the C files of the four process
folders (proto/, supervisor/, worker/, relay/), as issue 38 measures them.

    scripts/structure.py [BUILD_DIR]      (default: build; any build of the tree)

A file A depends on file B when A includes B's header (B.h beside B.c) or
calls or reads a name that only B defines (from `nm` on the build's objects:
A's undefined symbols against every object's defined ones; a name two files
define is nobody's). A circle is a strongly connected set of two or more
files: each reaches every other. Prints each circle, largest first, and a
summary line; exits 0 (a measurement, not a check).
"""
import os
import re
import subprocess
import sys
from collections import defaultdict

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ('proto/', 'supervisor/', 'worker/', 'relay/')


def objects(build):
    """source path (relative to ROOT) -> object file, for the folders' .c files."""
    out = {}
    for d, _, files in os.walk(build):
        for f in files:
            if not f.endswith('.c.o'):
                continue
            path = os.path.join(d, f)
            m = re.search(r'\.dir/(.*)\.o$', path)
            if not m:
                continue
            src = m.group(1)
            if src.startswith(FOLDERS) and '/gen/' not in src and not src.endswith('/main.c'):
                out.setdefault(src, path)
    return out


def symbols(obj):
    """(defined, undefined) external symbols of one object."""
    res = subprocess.run(['nm', obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in res.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == 'U':
            undefined.add(parts[1])
        elif len(parts) == 3 and parts[1] in 'TDBRCGSV':
            defined.add(parts[2])
    return defined, undefined


def includes(src, srcs):
    """Files of srcs whose header src includes: "x.h" is the x.c beside it
    when there is one, else the one x.c of the tree whose folder has x.h."""
    deps = set()
    here = os.path.dirname(src)
    with open(os.path.join(ROOT, src), errors='replace') as f:
        for line in f:
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            name = os.path.normpath(os.path.join(here, m.group(1)))
            if os.path.exists(os.path.join(ROOT, name)):
                cands = [os.path.splitext(name)[0] + '.c']
            else:
                base = os.path.splitext(os.path.basename(m.group(1)))[0]
                cands = [s for s in srcs if os.path.basename(s) == base + '.c' and
                         os.path.exists(os.path.join(ROOT, os.path.splitext(s)[0] + '.h'))]
            if len(cands) == 1 and cands[0] in srcs and cands[0] != src:
                deps.add(cands[0])
    return deps


def tarjan(nodes, edges):
    index, low, on, stack, out = {}, {}, set(), [], []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in nodes:
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, 'build')
    objs = objects(build)
    srcs = sorted(objs)
    owner = defaultdict(set)
    undef = {}
    for s in srcs:
        d, u = symbols(objs[s])
        for name in d:
            owner[name].add(s)
        undef[s] = u
    edges = defaultdict(set)
    for s in srcs:
        for name in undef[s]:
            if len(owner.get(name, ())) == 1:
                (b,) = owner[name]
                if b != s:
                    edges[s].add(b)
        edges[s] |= includes(s, srcs)
    circles = [c for c in tarjan(srcs, edges) if len(c) > 1]
    circles.sort(key=len, reverse=True)
    for c in circles:
        print(f'{len(c)} files: ' + ' '.join(c))
    held = sum(len(c) for c in circles)
    print(f'{len(circles)} circles hold {held} of the {len(srcs)} C files')


if __name__ == '__main__':
    main()
