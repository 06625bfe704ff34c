"""Markdown blocks for architecture answers: short, ranked, ready to sit under a `**Content:**` line.

Each block starts with a one-line headline (what, where, the counts that matter), then at most a few
capped lists. Lists end with "(+N more)" rather than growing with the repository.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from recall_agent.architecture.queries import TEST_ORDER, TEST_TRANSITIVE, CallHit, Dependent, Radius
from recall_agent.architecture.target import Target

if TYPE_CHECKING:  # types only: an answer that lists no concepts or error origins loads neither module
    from recall_agent.architecture.concepts import Hit
    from recall_agent.architecture.origins import Origins

LIST_CAP = 8


def _cap(items: list[str], cap: int = LIST_CAP, total: int | None = None) -> str:
    """The first `cap` items, then how many more there are (`total`: of a longer list than `items`)."""
    total = len(items) if total is None else total
    shown = ", ".join(items[:cap])
    return shown + (f" (+{total - cap} more)" if total > cap else "")


def _code(text: str) -> str:
    return f"`{text}`"


def _plural(n: int, word: str) -> str:
    if n == 1:
        return f"{n} {word}"
    if word.endswith(("s", "sh", "ch")):
        return f"{n} {word}es"
    return f"{n} {word[:-1]}ies" if word.endswith("y") else f"{n} {word}s"


def where(t: Target) -> str:
    if t.is_file:
        return f"{t.path} ({t.lines} lines)" if t.lines else t.path
    span = f"{t.line}-{t.end_line}" if t.end_line > t.line else str(t.line)
    return f"{t.path}:{span}"


def headline(t: Target) -> str:
    kind = (
        f"{t.lang} module" if t.is_file and t.lang == "python" else f"{t.lang} file" if t.is_file else t.kind
    )
    return f"{_code(t.display)} — {kind}, {where(t)}"


def dependent_label(d: Dependent) -> str:
    mark = " [TYPE_CHECKING only]" if d.typing_only else ""
    if d.names and d.names not in ("*", "calls") and d.depth == 1:
        names = d.names.split(",")
        shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
        return f"{d.path} ({shown}){mark}"
    return d.path + mark


def card(
    t: Target,
    *,
    defines: list[tuple[str, str]],
    imports: int,
    direct: list[Dependent],
    radius_size: int,
    tests: list[Dependent],
    call_sites: list[CallHit] | None = None,
) -> str:
    """What a file or symbol is, with its dependency counts and top dependents (repowise answers)."""
    lines = [headline(t)]
    if not t.is_file and t.signature:
        lines.append(_code(t.signature))
    if t.doc:
        lines.append(f"> {t.doc}")
    if defines:
        kinds = Counter(kind for _, kind in defines)
        summary = ", ".join(_plural(n, k) for k, n in kinds.most_common(3))
        lines.append(f"Defines {summary}: {_cap([name for name, _ in defines], 6)}")
    counts = []
    if t.is_file:
        counts.append(f"imports {_plural(imports, 'repo file')}")
    counts.append(f"{len(direct)} direct dependents")
    if call_sites is not None:
        sure = [c for c in call_sites if c.confidence >= 0.5]
        counts.append(f"{_plural(len(sure), 'call site')} in {len({c.path for c in sure})} files")
    counts.append(f"blast radius {_plural(radius_size, 'file')}")
    counts.append(_plural(len(tests), "test file"))
    lines.append(" · ".join(counts))
    if direct:
        lines.append("Top dependents: " + _cap([dependent_label(d) for d in direct], 6))
    return "\n".join(lines)


def blast(t: Target, radius: Radius, tests: list[Dependent], depth_limit: int | None) -> str:
    direct = [d for d in radius.dependents if d.depth == 1]
    limit = f" (depth ≤ {depth_limit})" if depth_limit else ""
    lines = [
        f"Blast radius of {_code(t.display)} ({t.location}): {len(direct)} direct dependents, "
        f"{_plural(radius.size, 'file')} in total{limit}; {_plural(len(tests), 'test file')}",
    ]
    if radius.size:
        lines.append(" · ".join(f"depth {d}: {n}" for d, n in sorted(radius.depths.items())))
    if direct:
        lines.append("Direct: " + _cap([dependent_label(d) for d in direct], 12))
    deeper = [d for d in radius.dependents if d.depth > 1 and not d.is_test]
    if deeper:
        shown = [f"{d.path} (via {d.via.rsplit('/', 1)[-1]})" for d in deeper[:6]]  # of 36,000 in the kernel
        lines.append("Indirect: " + _cap(shown, 6, radius.deeper))
    if tests:
        lines.append("Tests: " + _cap([d.path for d in tests], 6))
    if not radius.size:
        lines.append("Nothing in the repository depends on it.")
    return "\n".join(lines)


def dependents(t: Target, direct: list[Dependent], radius_size: int) -> str:
    lines = [
        f"{_code(t.display)} ({t.location}) has {len(direct)} direct dependents"
        f" ({_plural(radius_size, 'file')} transitively)"
    ]
    if direct:
        lines.append(_cap([dependent_label(d) for d in direct], 12))
    return "\n".join(lines)


def dependencies(t: Target, internal: list[tuple[str, str]], external: list[str]) -> str:
    lines = [
        f"{_code(t.display)} ({t.location}) imports {_plural(len(internal), 'repo file')}"
        f" and {len(external)} external modules"
    ]
    if internal:
        shown = [f"{p} ({n.replace(',', ', ')})" if n and len(n) < 60 else p for p, n in internal]
        lines.append("Repo: " + _cap(shown, 12))
    if external:
        lines.append("External: " + _cap(external, 12))
    return "\n".join(lines)


def callers(t: Target, hits: list[CallHit]) -> str:
    files = {h.path for h in hits}
    sure = sum(1 for h in hits if h.confidence >= 0.5)
    lines = [
        f"{_code(t.display)} ({t.location}) — {_plural(len(hits), 'call site')} in "
        f"{_plural(len(files), 'file')} ({sure} resolved with confidence ≥ 0.5)"
    ]
    confident = [h for h in hits if h.confidence >= 0.5]
    shown = [f"{h.path}:{h.line} in {h.caller or '<module>'} ({h.confidence:.2f})" for h in confident or hits]
    if shown:
        lines.append(_cap(shown, 10))
        if confident and len(hits) > len(confident):
            lines.append(f"(+{len(hits) - len(confident)} more calls of the same name, confidence < 0.5)")
    else:
        lines.append("No call sites found (it may be used only through references or dynamic dispatch).")
    return "\n".join(lines)


def callees(t: Target, hits: list[CallHit]) -> str:
    inside = [h for h in hits if h.target]
    outside = [h.name for h in hits if not h.target]
    lines = [
        f"{_code(t.display)} ({t.location}) calls {_plural(len(inside), 'repo definition')}"
        f" and {len(outside)} external names"
    ]
    if inside:
        lines.append(_cap([f"{h.caller} → {h.target} ({h.confidence:.2f})" for h in inside], 10))
    if outside:
        lines.append("External: " + _cap(outside, 10))
    return "\n".join(lines)


def cycles(cycles_found: list[list[str]], total: int, scope: str) -> str:
    if not cycles_found:
        return f"No import cycles among the indexed files of {scope}."
    lines = [f"{_plural(total, 'import cycle')} (strongly connected groups of files) in {scope}:"]
    for i, cyc in enumerate(cycles_found, 1):
        *path, note = cyc
        shown = path if len(path) <= 8 else path[:7] + ["…", path[-1]]
        lines.append(f"{i}. {' → '.join(shown)} {note}")
    return "\n".join(lines)


def tests(t: Target, found: list[Dependent]) -> str:
    """Test files, most direct first, with how many touch it in each way."""
    if not found:
        return f"No test file depends on {_code(t.display)} ({t.location})."
    ways = Counter(d.how for d in found)
    counted = ", ".join(f"{ways[w]} {w}" for w in TEST_ORDER if ways[w])
    head = f"{_plural(len(found), 'test file')} touch {_code(t.display)} ({t.location}): {counted}"
    labels = [f"{d.path} ({d.how if d.how != TEST_TRANSITIVE else f'depth {d.depth}'})" for d in found]
    return head + "\n" + _cap(labels, 10)


def unknown(subject: str, closest: list[str], repo: str) -> str:
    hint = f" Closest names: {', '.join(_code(c) for c in closest)}." if closest else ""
    return f"No file or symbol named {_code(subject)} in the index of {repo}.{hint}"


def other_matches(subject: str, targets: list[Target]) -> str:
    """The other definitions an ambiguous name could mean, one line each at most."""
    shown = [f"{_code(t.display)} ({t.kind}, {t.location})" for t in targets]
    return f"{_plural(len(targets), 'other match')} for {_code(subject)}: " + _cap(shown, 8)


def concepts(question: str, hits: list[Hit]) -> str:
    """Files about a question asked in words, best first, one line each on why."""
    lines = [f"Code about “{' '.join(question.split())[:120]}”, best match first:"]
    for i, h in enumerate(hits, 1):
        why = []
        if h.symbols:
            why.append(", ".join(_code(s) for s in h.symbols))
        if h.matched:
            why.append("mentions " + ", ".join(h.matched))
        if h.doc:
            why.append(f"“{h.doc}”")
        lines.append(f"{i}. {h.path}" + (" — " + " · ".join(why) if why else ""))
    return "\n".join(lines)


# --------------------------------------------------------------------------- history answers (evolution.py)


def _day(ts: int) -> str:
    import time

    return time.strftime("%Y-%m-%d", time.gmtime(ts)) if ts else "?"


def _link(p, near: list[str]) -> str:
    """How a partner is tied to the files asked about besides history: nothing to say when an import joins
    them; a Go file of the same package needs no import (its files share one namespace)."""
    if p.imports:
        return ""
    return " [same Go package]" if same_go_package(p.path, near) else " [no import]"


def same_go_package(path: str, near: list[str]) -> bool:
    folder = path.rpartition("/")[0]
    return path.endswith(".go") and any(n.endswith(".go") and n.rpartition("/")[0] == folder for n in near)


def _partner(p, near: list[str]) -> str:
    mark = _link(p, near)
    together = (
        f"{_plural(p.support, 'commit')} together ({p.confidence:.0%}), last {_day(p.last)}"
        if p.support
        else "no commit together yet"
    )
    return f"{p.path} — {together}; next time {p.score:.0%}{mark}"


def cochange(path: str, commits: int, since: int, partners: list, how: str = "") -> str:
    """Files that change with a file, best first, each with support, confidence, recency and whether an
    import explains it."""
    head = (
        f"Files that change with `{path}` ({_plural(commits, 'commit')} since {_day(since)}; next time: the "
        "chance each is in its next change):"
    )
    lines = [f"{how}." if how else "", head] if how else [head]
    if not partners:
        lines.append("Nothing changes with it often enough to say (it changes alone).")
    for i, p in enumerate(partners, 1):
        lines.append(f"{i}. {_partner(p, [path])}")
    unexplained = sum(1 for p in partners if _link(p, [path]) == " [no import]")
    if partners:
        lines.append(
            f"{unexplained} of {len(partners)} have no import edge to it: history, not the graph, links them."
            if unexplained
            else "Every one of them is joined to it by an import or its Go package."
        )
    return "\n".join(line for line in lines if line)


def changes_with(partners: list, path: str) -> str:
    """The blast radius answer's history line."""
    if not partners:
        return ""
    tie = {" [no import]": ", no import", " [same Go package]": ", same Go package", "": ""}
    shown = [f"{p.path} ({p.support}×{tie[_link(p, [path])]})" for p in partners]
    return "Changes with it: " + ", ".join(shown)


def hotspots(scope: str, ranked: list, hot_p: float, cap: int = 10) -> str:
    hot = [s for s in ranked if s.p_fix >= hot_p]
    if not ranked:
        return f"No commit in the history of {scope} touches a file that exists now."
    head = (
        f"{_plural(len(hot), 'hotspot')} in {scope} (probability of a fix within 90 days ≥ {hot_p:.0%}) "
        f"among {_plural(len(ranked), 'file')} with history:"
    )
    lines = [head]
    for i, s in enumerate((hot or ranked)[:cap], 1):
        mark = "" if s.p_fix >= hot_p else " (below the hotspot line)"
        lines.append(
            f"{i}. {s.path} — fix within 90 days {s.p_fix:.0%}{mark}; {s.changes_90d} changes in 90 days, {s.changes_1y} in a "
            f"year, {s.changes} in all; {s.fixes} fixes ({s.fix_share:.0%}); {_plural(s.authors, 'author')}"
        )
    if not hot:
        lines.insert(1, "None is likely to need a fix soon; the most active files:")
    elif len(hot) > cap:
        lines.append(f"(+{len(hot) - cap} more hotspots)")
    return "\n".join(lines)


def owners(scope: str, found: list, total: int, factor: int, now: int, how: str = "") -> str:
    lines = [f"{how}."] if how else []
    if not found:
        return "\n".join([*lines, f"No author has changed `{scope}` outside bulk commits."])
    lines.append(
        f"Who knows `{scope}`: {_plural(total, 'commit')} by {_plural(len(found), 'author')}; bus factor {factor}"
        f" (authors covering 80% of its changes)"
    )
    for o in found[:6]:
        lines.append(
            f"- {o.name}: {_plural(o.changes, 'commit')} ({o.changes / total:.0%}), last {_day(o.last)}"
        )
    if len(found) > 6:
        lines.append(f"(+{len(found) - 6} more authors)")
    recent = sorted((o for o in found if o.changes_1y), key=lambda o: -o.changes_1y)
    if recent:
        lines.append(
            "Most active in the last year: " + ", ".join(f"{o.name} ({o.changes_1y})" for o in recent[:3])
        )
    else:
        lines.append(f"Nobody changed it in the year before {_day(now)}.")
    return "\n".join(lines)


def risk(
    label: str,
    paths: list[str],
    new: list[str],
    left_out: list,
    stats: list,
    radius: dict,
    tests: list,
    hot_p: float,
) -> str:
    """What is risky in a change: usual partners left out, hotspots touched, fixes, dependents, tests."""
    lines = [f"Change risk of {label}: {_plural(len(paths), 'file')} changed ({_cap(paths, 6)})"]
    if left_out:
        lines.append("Usually changes with them, left out of this change:")
        lines += [f"- {_partner(p, paths)}" for p in left_out]
    else:
        lines.append("No usual partner of these files is missing from the change.")
    hot = [s for s in stats if s.p_fix >= hot_p]
    if hot:
        lines.append(
            "Hotspots touched: "
            + ", ".join(
                f"{s.path} (fix within 90 days {s.p_fix:.0%}, {s.fixes} fixes in {s.changes} commits)"
                for s in hot[:6]
            )
        )
    fixes = [s for s in stats if s.fixes]
    if fixes:
        lines.append(
            "Fix density: "
            + ", ".join(f"{s.path} {s.fix_share:.0%} ({s.fixes}/{s.changes})" for s in fixes[:6])
        )
    if new:
        lines.append(f"New to history: {_cap(new, 6)}")
    wide = sorted(((n, p) for p, n in radius.items() if n), reverse=True)
    if wide:
        lines.append(
            "Dependents (blast radius): " + ", ".join(f"{p} {_plural(n, 'file')}" for n, p in wide[:6])
        )
    if tests:
        lines.append("Tests to run: " + _cap([_test(t) for t in tests], 8))
    return "\n".join(lines)


def _test(t) -> str:
    why = []
    if t.together:
        why.append(f"changed with them {t.together}×")
    if t.how:
        why.append(t.how)
    return f"{t.path} ({', '.join(why)})" if why else t.path


def tests_to_run(label: str, paths: list[str], tests: list) -> str:
    if not tests:
        return f"No test reaches {label} ({_cap(paths, 4)}) through imports or history."
    head = f"{_plural(len(tests), 'test file')} to run for {label} ({_cap(paths, 4)}), most likely first:"
    return (
        head
        + "\n"
        + "\n".join(f"{i}. {_test(t)}" for i, t in enumerate(tests[:12], 1))
        + (f"\n(+{len(tests) - 12} more)" if len(tests) > 12 else "")
    )


def origins(found: Origins) -> str:
    """Where an error is raised (the site whose literal text it carries) and its frames in the repository."""
    lines = []
    for i, h in enumerate(found.sites[:3]):
        where = f"{h.path}:{h.line}" + (f" in {_code(h.scope)}" if h.scope else "")
        when = f" (when {_code(h.cond)})" if h.cond else ""
        verb = {"raise": "Raised", "error": "Error built", "log": "Logged", "message": "Message defined"}[
            h.kind
        ]
        head = f"{verb} at {where}{when}" if i == 0 else f"Also at {where}{when}"
        code = f": {_code(h.code)}" if h.code else ""
        shared = ", ".join(f"“{m}”" for m in h.matched[:3])
        lines.append(f"{head}{code} — the message's {shared}" + (" [test file]" if h.is_test else ""))
    if len(found.sites) > 3:
        lines.append(f"(+{len(found.sites) - 3} more sites with the same text)")
    if found.frames:
        lines.append("Traceback frames in this repository:")
        for f in found.frames[:6]:
            func = f" in {_code(f.func)}" if f.func else ""
            code = f" — {_code(f.code)}" if f.code else ""
            lines.append(f"  {f.repo_path}:{f.line}{func}{code}")
        if len(found.frames) > 6:
            lines.append(f"  (+{len(found.frames) - 6} more frames)")
    return "\n".join(lines)
