#!/usr/bin/env python3
"""The library's shape, from its includes and its zkr__ calls
(DESIGN.md section 9, docs/architecture.md).

    scripts/layers.py [--check] [--dir zkroute]

Reads every .c and .h file under the library's folder and prints:
  - the files per folder;
  - the largest circle of .c files (a strongly connected component of the
    graph "A calls a zkr__ function defined in B"), the pairs of files that
    call each other, and the largest circle left without its two biggest
    hubs;
  - the calls between files sorted by layer: downward, within a layer,
    upward (each upward call is listed);
  - the include lines that break the rule: a file includes public headers
    (<...>, "zkroute.h", "zkroute/..."), headers of its own folder, and
    headers of the folders of lower layers, written with the folder;
  - how many files include the handle's header;
  - in folders, the lines of model/ that name the handle's types
    (zhandle_t, zkr_t, struct zkr): the model layer knows none of them.
A file's layer is its folder when the library is in folders by layer
(model < zk < core < route < session < api < dropin); for a flat folder,
the table LAYER_OF below (the layers the code had before they became
folders).  With --check it exits 1 when an include line breaks the rule,
a call goes upward, a model/ line names a handle's type, or the largest circle is larger than 6 files (the
route/ pipeline around completion); `make check` runs it
(tests/lint/layers.sh).  While the folder is flat, the include rule has
no folders to check: only the calls are checked then.  It reads text
only: a name defined in two files, a call in a comment or a macro may
mislead it, and it says nothing of what runs.  A call through a table of
callbacks (hooks.h) names no function, and is no call here.
"""
import os
import re
import sys

LAYERS = ["model", "zk", "core", "route", "session", "api", "dropin"]

# The flat folder's files, by the layer the code had (issue table of the
# layering step): stem -> layer.
LAYER_OF = {
    "hosts": "model", "srvr": "model", "health": "model", "hedge": "model",
    "dynconfig": "model", "inflight": "model", "options": "model", "errors": "model", "path": "model",
    "base": "model", "strict": "model", "latency": "model", "stats_schema": "model",
    "zkapi": "zk", "srvr_fetch": "zk", "resolve": "zk", "runtime": "api",
    "op": "core", "member": "core", "auth": "core", "watch": "core", "watch_record": "core",
    "deliver": "core", "registry": "core", "policy": "core", "selector": "core",
    "internal": "core", "log": "core", "kick": "core", "hooks": "core",
    "router": "route", "dispatch": "route", "completion": "route", "barrier": "route",
    "pool": "route", "hedger": "route", "watch_rearm": "route",
    "watch_remove": "route",
    "session": "session", "monitor": "session", "rescue": "session", "carriers": "session",
    "poller": "session", "membership": "session", "ensemble": "session",
    "hostnames": "session",
    "api": "api", "api_check": "api", "api_read": "api", "api_write": "api", "stats": "api",
    "handle": "api", "waiter": "api",
    "stats_json": "api", "stats_prom": "api", "metrics": "api",
    "env": "dropin", "preload": "dropin", "preload_calls": "dropin", "preload_detect": "dropin",
    "compat_check": "dropin",
}

# A definition: the name and its "(" at the start of a line, then either
# nothing with a ";" (the parameters go on), or the parameters and the "{"
# of a body on the same line (a one-line function).
DEF_RE = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(zkr__\w+)\s*\(([^;{]*$|[^;{]*\)\s*\{)")
STATIC_DEF_RE = re.compile(r"^static\b")
CALL_RE = re.compile(r"\b(zkr__\w+)\s*\(")
INCLUDE_RE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\\n])*"', '""', text)


def layer_of(root, path):
    rel = os.path.relpath(path, root)
    parts = rel.split(os.sep)
    if len(parts) > 1 and parts[0] in LAYERS:
        return parts[0]
    stem = os.path.splitext(os.path.basename(path))[0]
    return LAYER_OF.get(stem)


def scc(nodes, edges):
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
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
            out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    args = sys.argv[1:]
    check = "--check" in args
    root = "zkroute"
    if "--dir" in args:
        root = args[args.index("--dir") + 1]
    files = []
    for d, _, names in os.walk(root):
        for n in names:
            if n.endswith((".c", ".h")):
                files.append(os.path.join(d, n))
    files.sort()
    texts = {f: strip_comments(open(f, encoding="utf-8", errors="replace").read()) for f in files}
    raw = {f: open(f, encoding="utf-8", errors="replace").read() for f in files}
    cfiles = [f for f in files if f.endswith(".c")]

    # Definitions: name -> file (non-static zkr__ functions of .c files).
    defined = {}
    for f in cfiles:
        for line in texts[f].split("\n"):
            m = DEF_RE.match(line)
            if m and not STATIC_DEF_RE.match(line):
                defined.setdefault(m.group(1), f)
    # Calls between files.
    calls = {}
    for f in cfiles:
        for name in set(CALL_RE.findall(texts[f])):
            g = defined.get(name)
            if g and g != f:
                calls.setdefault((f, g), set()).add(name)
    edges = {}
    for (a, b) in calls:
        edges.setdefault(a, set()).add(b)

    folders = {}
    for f in files:
        folders.setdefault(os.path.dirname(f), []).append(f)
    print("files per folder:")
    for d in sorted(folders):
        c = sum(1 for f in folders[d] if f.endswith(".c"))
        print(f"  {d}: {c} .c, {len(folders[d]) - c} .h")

    comps = sorted(scc(cfiles, edges), key=len, reverse=True)
    big = comps[0] if comps else []
    pairs = sorted({tuple(sorted((a, b))) for (a, b) in calls if (b, a) in calls})
    print(f"largest circle of .c files: {len(big)}")
    if len(big) > 1:
        for f in sorted(big):
            print(f"  {f}")
    print(f"pairs of files that call each other: {len(pairs)}")
    # Without the two biggest hubs (most calls in and out within the circle).
    if len(big) > 2:
        deg = {f: 0 for f in big}
        for (a, b) in calls:
            if a in deg and b in deg:
                deg[a] += 1
                deg[b] += 1
        hubs = sorted(deg, key=lambda f: (-deg[f], f))[:2]
        rest = [f for f in big if f not in hubs]
        sub = {a: {b for b in edges.get(a, ()) if b in rest} for a in rest}
        left = max((len(c) for c in scc(rest, sub)), default=0)
        print(f"largest circle without {', '.join(hubs)}: {left}")

    down = within = 0
    up = []
    unknown = set()
    for (a, b), names in sorted(calls.items()):
        la, lb = layer_of(root, a), layer_of(root, b)
        if la is None or lb is None:
            unknown.update(x for x, l in ((a, la), (b, lb)) if l is None)
            continue
        ia, ib = LAYERS.index(la), LAYERS.index(lb)
        if ia > ib:
            down += len(names)
        elif ia == ib:
            within += len(names)
        else:
            up.append((a, b, sorted(names)))
    n_up = sum(len(n) for (_, _, n) in up)
    print(f"calls between files: {down + within + n_up} ({down} downward, {within} within a layer, "
          f"{n_up} upward)")
    for (a, b, names) in up:
        print(f"  up: {a} -> {b}: {', '.join(names)}")
    if unknown:
        print(f"files of no known layer: {', '.join(sorted(unknown))}")

    bad = []
    in_folders = any(os.path.isdir(os.path.join(root, l)) for l in LAYERS)
    handle_includes = 0
    for f in files:
        lf = layer_of(root, f)
        for line in raw[f].split("\n"):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            kind, name = m.groups()
            if name.endswith("handle.h"):
                handle_includes += 1
            if kind == "<" or name == "zkroute.h" or name.startswith("zkroute/"):
                continue
            if not in_folders:
                continue
            folder = name.split("/")[0] if "/" in name else None
            if folder is None:
                # A bare name: only a header of the file's own folder.
                if not os.path.exists(os.path.join(os.path.dirname(f), name)):
                    bad.append((f, line.strip(), "not in its folder"))
                elif os.path.dirname(f) != root and lf:
                    pass
                continue
            if folder not in LAYERS:
                bad.append((f, line.strip(), "not a layer folder"))
            elif lf and LAYERS.index(folder) > LAYERS.index(lf):
                bad.append((f, line.strip(), "an upper layer"))
    # In folders, a file outside the layer folders has no layer.
    if in_folders:
        for f in files:
            rel = os.path.relpath(f, root).split(os.sep)
            if len(rel) < 2 or rel[0] not in LAYERS:
                bad.append((f, "(the file itself)", "not in a layer folder"))
    model_names = []
    if in_folders:
        for f in files:
            if layer_of(root, f) != "model":
                continue
            for i, line in enumerate(texts[f].split("\n"), 1):
                if re.search(r"\bzhandle_t\b|\bzkr_t\b|\bstruct\s+zkr\b", line):
                    model_names.append((f, i, line.strip()))
    print(f"files including the handle's header: {handle_includes} of {len(files)}")
    print(f"include lines that break the rule: {len(bad)}")
    for (f, line, why) in bad:
        print(f"  {f}: {line} ({why})")

    if in_folders:
        print(f"model/ lines naming zhandle_t, zkr_t or struct zkr: {len(model_names)}")
        for (f, i, line) in model_names:
            print(f"  {f}:{i}: {line}")

    if check and (bad or up or model_names):
        print("layers: FAILED (the rule of DESIGN.md section 9)")
        return 1
    if check and len(big) > 6:
        print(f"layers: FAILED (a circle of {len(big)} files; at most 6)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
