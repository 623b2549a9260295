#!/usr/bin/env python3
"""Import cycles between the files of src/, and the store's backend layer.

Each file is a node; an edge runs from a file to every module file it
names (`use` lines, and paths in code through crate::, super::, self:: or
a child module), resolved to the deepest file that exists. A child naming
its parent's items, and a parent re-exporting its children (`pub use`),
are the module tree, not a cycle, and are left out; a parent's own code
that calls into its child (a plain `use child::...`, or `child::f()`) is
an edge like any other, and so is every `use` of a sibling or a cousin
through `super::` or `crate::`. Prints each set of files that import each
other.

The store's backend layer (the files under BACKEND) imports nothing else
of store/: the rest of the store builds on it, never the other way round.
Prints each import of the layer that does.

Exits 1 when there is any cycle or any such import.

    scripts/import-cycles.py [SRC_DIR]
"""
import os, re, sys
root = sys.argv[1] if len(sys.argv) > 1 else 'src'
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)[:-3].split(os.sep)
            if rel[-1] == 'mod': rel = rel[:-1]
            if rel == ['lib'] or rel == ['main']: rel = []
            files[tuple(rel)] = p
def related(a, b):
    n = min(len(a), len(b))
    return a[:n] == b[:n]
def resolve(path):
    for n in range(len(path), -1, -1):
        if tuple(path[:n]) in files: return tuple(path[:n])
def expand(s):
    s = s.strip()
    m = re.match(r'^(.*?)::\{(.*)\}$', s, re.S)
    if not m: return [s]
    base, inner = m.group(1), m.group(2)
    parts, depth, cur = [], 0, ''
    for ch in inner:
        if ch == '{': depth += 1
        if ch == '}': depth -= 1
        if ch == ',' and depth == 0: parts.append(cur); cur = ''
        else: cur += ch
    parts.append(cur)
    out = []
    for p in parts:
        p = p.strip()
        if not p: continue
        for e in expand(p): out.append(base if e == 'self' else base + '::' + e)
    return out
edges = {k: set() for k in files}
for mod, p in files.items():
    src = open(p).read()
    src = re.sub(r'#\[cfg\(test\)\]\s*mod tests\s*\{.*', '', src, flags=re.S)
    is_dir = p.endswith('mod.rs') or p.endswith('lib.rs') or p.endswith('main.rs')
    for m in re.finditer(r'^\s*(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);', src, re.M):
        reexport = m.group(1) is not None
        for u in expand(m.group(2)):
            segs = [x.strip() for x in u.split(' as ')[0].split('::')]
            if segs[0] == 'crate': path = segs[1:]
            elif segs[0] in ('super', 'self'):
                base = list(mod)
                while segs and segs[0] == 'super':
                    base = base[:-1]; segs = segs[1:]
                if segs and segs[0] == 'self': segs = segs[1:]
                path = base + segs
            elif tuple(list(mod) + segs[:1]) in files: path = list(mod) + segs
            else: continue
            t = resolve(path)
            if t is None or t == mod: continue
            if not related(t, mod) or (len(t) > len(mod) and not reexport): edges[mod].add(t)
    body = re.sub(r'^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+[^;]+;', '', src, flags=re.M)
    body = re.sub(r'//[^\n]*', '', body)
    for m in re.finditer(r'(?<![A-Za-z0-9_:])([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)+)', body):
        segs = m.group(1).split('::')
        if segs[0] == 'crate': path = segs[1:]
        elif segs[0] not in ('super', 'self'):
            if tuple(list(mod) + segs[:1]) not in files: continue
            path = list(mod) + segs
        else:
            base = list(mod)
            while segs and segs[0] == 'super': base = base[:-1]; segs = segs[1:]
            if segs and segs[0] == 'self': segs = segs[1:]
            path = base + segs
        t = resolve(path)
        if t is None or t == mod: continue
        if not related(t, mod) or len(t) > len(mod): edges[mod].add(t)
# Tarjan
idx, low, st, on, out, c = {}, {}, [], set(), [], [0]
sys.setrecursionlimit(10000)
def sc(v):
    idx[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges[v]:
        if w not in idx: sc(w); low[v] = min(low[v], low[w])
        elif w in on: low[v] = min(low[v], idx[w])
    if low[v] == idx[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: out.append(comp)
for v in files:
    if v not in idx: sc(v)
for comp in out:
    print(len(comp), ' '.join(sorted('/'.join(x) or 'lib' for x in comp)))
print(f'{len(out)} import cycles between files of {root}')
# The store's backend layer: the seam over both databases (sql, param),
# PostgreSQL's connection and schema (pg), and the DDL both share (ddl).
BACKEND = [('store', 'sql'), ('store', 'param'), ('store', 'ddl'), ('store', 'pg')]
def in_backend(m): return any(m[:len(b)] == b for b in BACKEND)
above = sorted((a, b) for a in files if in_backend(a) for b in edges[a]
               if b[:1] == ('store',) and not in_backend(b) and not related(a, b))
for a, b in above:
    print('the backend layer imports above it:', '/'.join(a), '->', '/'.join(b))
sys.exit(1 if out or above else 0)
