#!/usr/bin/env python3
"""Which source files the edges a corpus covers belong to, and how that grew over a campaign.

libFuzzer's `cov:` counts every instrumented edge of the binary. With `ours-only-rustc` the
dependencies are built without instrumentation, but their generic code (serde_json's parser
instantiated for our types, hashbrown's probing for our maps, core's iterators) is compiled
inside our crate and counted as ours. This script splits the covered edges by the source file
each one was compiled from:

  ours        src/ and fuzz/fuzz_targets/ (placewise and the targets)
  serde_json, serde, hashbrown, ... another crate's generic code instantiated in ours
  std         the standard library's generic code (core, alloc, std)

An edge is charged to the innermost inlined frame that is not the standard library's, so an
iterator's or a sort's branch inlined into our function counts as ours. The column `our_text`
counts, of all edges, those whose innermost frame is in our source text: the branches we wrote.

How: the binary's `__sancov_pcs` table lists every edge's address (as relocations, since the
binary is position-independent); libFuzzer's merge writes which table entries each input covers
for the first time (`COV` lines); `llvm-symbolizer` names each address's innermost source file.
The script runs the merge's inner pass itself, on a control file listing the inputs oldest
first, so each edge is charged to the oldest input that covers it: one pass answers every time
cut. `JOBS=N` splits the pass into N at once, each over a consecutive share of the inputs.

Usage (from fuzz/):
  python3 edges_by_source.py BIN DIR... [TIME ...] [--since TIME]
DIR: corpus directories, read together (a name in two of them is one input, as libFuzzer names
inputs by their content). TIME is a `date -d` text (UTC); for each one, the edges covered by the
inputs whose modification time is at or before it (libFuzzer writes a file once; a file it later
replaced by a smaller one with the same features is gone, so an edge may be charged to a later
moment than the one it was found at, never to an earlier one). Without a TIME: all inputs.
--since TIME also lists every edge first covered after TIME, oldest first: when, where from,
whether its own code is ours (`our_text`), and its source line (the innermost frame that is not
the standard library's).
"""
import collections
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile
import time


def pc_table(binary):
    """Edge index -> address, from the `__sancov_pcs` section's RELATIVE relocations."""
    sections = subprocess.run(["readelf", "-S", "-W", binary], capture_output=True, text=True, check=True).stdout
    m = re.search(r"__sancov_pcs\s+PROGBITS\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", sections)
    if not m:
        sys.exit(f"{binary}: no __sancov_pcs section (not a libFuzzer build?)")
    start, size = int(m.group(1), 16), int(m.group(2), 16)
    pcs = {}
    relocs = subprocess.run(["readelf", "-r", "-W", binary], capture_output=True, text=True, check=True).stdout
    for line in relocs.splitlines():
        f = line.split()
        if len(f) >= 4 and f[2] == "R_X86_64_RELATIVE":
            off = int(f[0], 16)
            # Each entry is (address, flags), 16 bytes; the address is the relocated word.
            if start <= off < start + size and (off - start) % 16 == 0:
                pcs[(off - start) // 16] = int(f[3], 16)
    return pcs


def origin(path):
    """The crate (or `ours`, `std`) a source path belongs to."""
    if "/.cargo/registry/" in path or "/.cargo/git/" in path:
        m = re.search(r"/src/[^/]+/([^/]+?)-\d[^/]*/", path)
        return m.group(1) if m else "dependency"
    if path.startswith("/rustc/") or "/lib/rustlib/src/" in path:
        return "std"
    m = re.search(r"/rust/deps/([^/]+?)-\d[^/]*/", path)
    if m:
        return m.group(1)
    if "/src/" in path or "/fuzz_targets/" in path:
        return "ours"
    return "unknown"


def frames(binary, addresses):
    """Each address's inlined frames' source positions, innermost first, through
    llvm-symbolizer."""
    text = "\n".join(hex(a) for a in addresses) + "\n"
    out = subprocess.run(["llvm-symbolizer", f"--obj={binary}", "--functions=none", "--inlining=true"],
                         input=text, capture_output=True, text=True, check=True).stdout
    # One block per address, blocks separated by an empty line.
    blocks = [b.strip().splitlines() for b in out.split("\n\n") if b.strip()]
    if len(blocks) != len(addresses):
        sys.exit(f"llvm-symbolizer answered {len(blocks)} blocks for {len(addresses)} addresses")
    return blocks


def describe(binary, pcs):
    """Edge index -> (origin, our text, source line). The origin is that of the innermost
    inlined frame that is not the standard library's (core's iterators and `Option` methods
    inlined into our function are our function's branches; hashbrown inlined through std's
    `HashMap` is hashbrown's), and the source line is that frame's (`file:line:column`, a
    registry crate's path from the crate's folder on; the innermost frame if all are the standard
    library's). Our text: whether the edge's own code, its innermost frame, is in our source text
    (a sort or a `Vec` inlined into our function is not)."""
    order = sorted(pcs)

    def decide(block):
        kinds = [origin(f) for f in block]
        at = next((i for i, o in enumerate(kinds) if o != "std"), 0)
        line = re.sub(r".*/\.cargo/registry/src/[^/]+/", "", block[at])
        return kinds[at], kinds[0] == "ours", line

    return {i: decide(b) for i, b in zip(order, frames(binary, [pcs[i] for i in order]))}


def inner_pass(binary, files, offset):
    """Edge index -> the position (from `offset`) of the first of `files` that covers it:
    libFuzzer's inner merge pass (`-merge_inner=1`, what `-merge=1` runs in a child process)
    over a control file we write, so the inputs run in our order rather than smallest first. An
    input that crashes the target ends a pass; the next pass resumes after it."""
    with tempfile.TemporaryDirectory() as tmp:
        # Links, so a file a running fuzzer deletes meanwhile is still read; each named by its
        # position.
        names = []
        for i, f in enumerate(files, offset):
            name = os.path.join(tmp, f"{i:08}")
            try:
                os.link(f, name)
            except FileNotFoundError:
                continue
            names.append(name)
        if not names:
            return {}
        control = os.path.join(tmp, "control")
        with open(control, "w") as c:
            c.write(f"{len(names)}\n0\n" + "".join(n + "\n" for n in names))
        started = -1
        while started < len(names) - 1:
            subprocess.run([binary, "-merge_inner=1", f"-merge_control_file={control}",
                            "-rss_limit_mb=2048", "-max_len=16384", "-timeout=600"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            before, started = started, max(
                [int(line.split()[1]) for line in open(control) if line.startswith("STARTED ")],
                default=-1)
            if started == before:
                sys.exit(f"{binary}: the merge pass made no progress at input {started + 1}")
        first = {}
        with open(control) as c:
            for line in c:
                if line.startswith("COV "):
                    fields = line.split()
                    at = int(os.path.basename(names[int(fields[1])]))
                    for e in fields[2:]:
                        first.setdefault(int(e), at)
        return first


def first_seen(binary, files, jobs):
    """Edge index -> the position in `files` of the first input that covers it. With `jobs`
    passes at once, each over a consecutive share of the files: an edge's first input is its
    first input in the earliest share that covers it."""
    size = -(-len(files) // max(jobs, 1)) or 1
    shares = [(files[i:i + size], i) for i in range(0, len(files), size)]
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(jobs, 1)) as pool:
        passes = list(pool.map(lambda share: inner_pass(binary, *share), shares))
    first = {}
    for found in passes:
        for e, at in found.items():
            first.setdefault(e, at)
    return first


def moment(text):
    """A `date -d` text as seconds since the epoch."""
    return int(subprocess.run(["date", "-u", "-d", text, "+%s"], capture_output=True, text=True,
                              check=True).stdout)


def main():
    args = sys.argv[1:]
    since = None
    if "--since" in args:
        at = args.index("--since")
        since = args[at + 1] if at + 1 < len(args) else sys.exit(__doc__)
        del args[at:at + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    binary = args[0]
    dirs = [a for a in args[1:] if os.path.isdir(a)]
    times = [a for a in args[1:] if not os.path.isdir(a)]
    # A running fuzzer replaces files: read each file's time once, and skip any that vanish.
    mtimes = {}
    for d in dirs:
        for name in os.listdir(d):
            try:
                mtime = os.stat(os.path.join(d, name)).st_mtime
            except FileNotFoundError:
                continue
            if name not in mtimes or mtime < mtimes[name][1]:
                mtimes[name] = (os.path.join(d, name), mtime)
    files = sorted(mtimes.values(), key=lambda fm: fm[1])
    pcs = pc_table(binary)
    described = describe(binary, pcs)
    where = {e: o for e, (o, _, _) in described.items()}
    written = {e for e, (_, ours, _) in described.items() if ours}
    first = first_seen(binary, [f for f, _ in files], int(os.environ.get("JOBS", "1")))
    cuts = [(t, moment(t)) for t in times] or [("all", None)]
    kinds = [k for k, _ in collections.Counter(where.get(e, "unknown") for e in first).most_common()]
    print("files\t" + "\t".join(kinds) + "\tall\tour_text\ttime")
    for label, cut in cuts:
        chosen = sum(1 for _, mtime in files if cut is None or mtime <= cut)
        edges = [e for e, at in first.items() if at < chosen]
        counts = collections.Counter(where.get(e, "unknown") for e in edges)
        text = sum(1 for e in edges if e in written)
        print(f"{chosen}\t" + "\t".join(str(counts.get(k, 0)) for k in kinds)
              + f"\t{sum(counts.values())}\t{text}\t{label}", flush=True)
    if since is not None:
        cut = moment(since)
        late = sorted((files[at][1], e) for e, at in first.items() if files[at][1] > cut)
        print(f"\n{len(late)} edges first covered after {since}:")
        for mtime, e in late:
            when = time.strftime("%H:%M:%S", time.gmtime(mtime))
            kind, _, line = described.get(e, ("unknown", False, "?"))
            print(f"{when}\t{kind}\t{'our_text' if e in written else '-'}\t{line}")


if __name__ == "__main__":
    main()
