#!/usr/bin/env python3
"""Combines `walseg bench --json` results of several filesystems into report.md and plots.

Usage: fs_report.py WORK_DIR NAME...   (reads WORK_DIR/NAME.json, writes WORK_DIR/report.md,
creation.png, commit.png and amplification.png; appends WORK_DIR/mdev14425.md and pg2013.md,
the seed experiments' sections, when present). Called by fs_matrix.sh; standard library only,
plus gnuplot. The device figures (device_report.py) are null where not measurable.
"""
import json
import os
import subprocess
import sys

import device_report

APPEND_METHODS = {"none", "fallocate_keep_size"}  # the file grows with each commit


def load(work, names):
    out = {}
    for n in names:
        path = os.path.join(work, n + ".json")
        if os.path.exists(path):
            with open(path) as f:
                out[n] = json.load(f)
    return out


def rows(doc, phase):
    return [r for r in doc["rows"] if r["phase"] == phase]


def verdict(name, doc):
    """Append or preallocate, from the append phase (or the write phase without it)."""
    phase = "append" if rows(doc, "append") else "write"
    cands = [r for r in rows(doc, phase) if not r.get("reference") and r["method"] not in ("recycle", "recycled")]
    if not cands:
        return f"- **{name}**: no commit measurements"
    pre = [r for r in cands if r["method"] not in APPEND_METHODS]
    app = [r for r in cands if r["method"] in APPEND_METHODS]
    best = lambda rs: max(rs, key=lambda r: r["ops_per_s"]) if rs else None
    bp, ba = best(pre), best(app)
    if not bp or not ba:
        return f"- **{name}**: only one kind measured"
    used = f" (really {bp['method_used']})" if bp["method_used"] not in ("", bp["method"]) else ""
    if bp["ops_per_s"] >= ba["ops_per_s"]:
        return (f"- **{name}**: preallocate with {bp['method']}{used}: {bp['ops_per_s']:.0f} commits/s "
                f"({bp['io']}) vs {ba['ops_per_s']:.0f} appending with {ba['method']} "
                f"({bp['ops_per_s'] / max(ba['ops_per_s'], 1e-9):.2f}x)")
    return (f"- **{name}**: append with {ba['method']}: {ba['ops_per_s']:.0f} commits/s ({ba['io']}) vs "
            f"{bp['ops_per_s']:.0f} preallocating with {bp['method']}{used}")


def table(docs, phase, key, label, fmt="{:.0f}"):
    names = list(docs)
    keys = []
    for d in docs.values():
        for r in rows(d, phase):
            k = key(r)
            if k not in keys:
                keys.append(k)
    if not keys:
        return ""
    out = [f"\n### {phase}: {label}\n", "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for k in keys:
        cells = []
        for n in names:
            m = [r for r in rows(docs[n], phase) if key(r) == k]
            cells.append(fmt.format(m[0]["_value"]) if m else "-")
        out.append(f"| {k} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def with_value(docs, phase, field):
    for d in docs.values():
        for r in rows(d, phase):
            r["_value"] = r[field]


def plot(work, docs, phase, field, title, png, ylabel="microseconds (log)", log=True):
    names = list(docs)
    methods = []
    for d in docs.values():
        for r in rows(d, phase):
            if r.get("io", "pwrite") == "pwrite" and r["method"] not in methods:
                methods.append(r["method"])
    if not methods:
        return
    dat = os.path.join(work, png.replace(".png", ".dat"))
    with open(dat, "w") as f:
        f.write("method " + " ".join(names) + "\n")
        for m in methods:
            vals = []
            for n in names:
                v = [r[field] for r in rows(docs[n], phase) if r["method"] == m and r.get("io", "pwrite") == "pwrite"]
                vals.append(f"{v[0]:.2f}" if v and v[0] is not None else "NaN")
            f.write(m + " " + " ".join(vals) + "\n")
    series = f"'{dat}' using 2:xtic(1) title columnhead" + "".join(
        f", '' using {i + 2} title columnhead" for i in range(1, len(names)))
    script = f"""set terminal pngcairo size 1200,600 noenhanced
set output '{os.path.join(work, png)}'
set title '{title}'
set style data histogram
set style histogram cluster gap 1
set style fill solid border -1
{"set logscale y" if log else "set yrange [0:*]"}
set ylabel '{ylabel}'
set xtics rotate by -30
plot {series}
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)


def main():
    work, names = sys.argv[1], sys.argv[2:]
    docs = load(work, names)
    lines = ["# walseg filesystem matrix", "", "Append or preallocate, per filesystem (commits/s of the append phase):", ""]
    lines += [verdict(n, d) for n, d in docs.items()]
    lines += ["", "What preallocation costs or saves, per filesystem (write phase, against appending with none):", ""]
    lines += [device_report.prealloc_line(n, d) for n, d in docs.items()]
    lines.append("")
    for n, d in docs.items():
        v = d.get("verdict") or {}
        fs = d["filesystem"]
        lines.append(f"- {n}: {fs['type']} ({fs['mount_options']}); bench verdict: cheapest creation "
                     f"{v.get('cheapest_creation', '-')}, fastest commits {v.get('fastest_commits', '-')}, "
                     f"both {v.get('both', '-')}")
    with_value(docs, "create", "median_us")
    lines.append(table(docs, "create", lambda r: r["method"], "median microseconds per durable segment creation"))
    with_value(docs, "write", "median_us")
    lines.append(table(docs, "write", lambda r: r["method"], "median microseconds per commit (pwrite + fdatasync) into a new segment"))
    with_value(docs, "switch", "p999_us")
    lines.append(table(docs, "switch", lambda r: f"{r['config']} {r['kind']}", "p99.9 microseconds per append"))
    with_value(docs, "append", "ops_per_s")
    lines.append(table(docs, "append", lambda r: f"{r['method']} ({r['io']})", "commits/s, one writer"))
    with_value(docs, "commit", "ops_per_s")
    lines.append(table(docs, "commit", lambda r: f"{r['clients']} clients ({r['io']})", "commits/s with group commit"))
    lines += device_report.sections(docs)
    lines.append("\nPlots: creation.png (create phase), commit.png (write phase), both pwrite rows, log scale; "
                 "amplification.png (write phase: device bytes / bytes committed, linear).\n")
    for seed in ("mdev14425.md", "pg2013.md"):
        path = os.path.join(work, seed)
        if os.path.exists(path):
            with open(path) as f:
                lines += ["", f.read()]
    with open(os.path.join(work, "report.md"), "w") as f:
        f.write("\n".join(lines))
    plot(work, docs, "create", "median_us", "Durable segment creation per method and filesystem", "creation.png")
    plot(work, docs, "write", "median_us", "Commit latency (8 kB pwrite + fdatasync) in a new segment", "commit.png")
    plot(work, {n: d for n, d in docs.items() if device_report.measured(d)}, "write", "write_amplification",
         "Write amplification per commit (device bytes / bytes committed), write phase", "amplification.png",
         ylabel="device bytes / bytes committed", log=False)
    print("\n".join(lines[:3 + len(docs)]))


if __name__ == "__main__":
    main()
