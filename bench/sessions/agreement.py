"""How far two labellers of the same sessions agree (issues 33/34): labeller G's labels (labels/) against an
independent second labeller's copies (labels-second/, one YAML a session, labelled without reading G's).

Entries (episodes and unfixed failures) are matched by call id: two entries match when their failing calls
(`failed` + `also`) share an id. Over the sample it reports
- failing calls: the union of every entry's ids per session, precision/recall of the second labeller
  against G and their F1;
- episode F1: episodes (fixed failures) matched one to one;
- status: matched entries that one labeller calls an episode and the other unfixed;
- over matched episode pairs: fix kind, `passed` call and `useful` (Cohen's kappa);
- over matched entries: `kind`, `transient`, `seen_in_output` (agreement and kappa);
- worth-keeping fixes scored as capture is: the second labeller's as stored, the first's as the truth
  (precision, recall, and the share of fixes both keep with the same passing call);
- cause pairs: over pairs of matched entries of one project, whether both labellers give the pair one cause
  slug (same-cause pairs in both / G only / second only, and their F1), all pairs and the cross-session
  pairs the recurrence replay scores (neither transient nor scratch in G's label).

    python3 bench/sessions/agreement.py [--labeller G] [--json bench/results/label_agreement.json]
    python3 bench/sessions/agreement.py --labeller P --json bench/results/label_agreement_P_T.json   # T's of P's
    python3 bench/sessions/agreement.py --swecb    # SWE-ContextBench: A's labels of the sessions C labelled again
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import labels as L

RESULTS = L.HERE.parent / "results" / "label_agreement.json"
Entry = dict[str, Any]


def kappa(pairs: list[tuple[Any, Any]]) -> float | None:
    """Cohen's kappa of two raters' categorical values (None when undefined: no pairs or no variation)."""
    n = len(pairs)
    if not n:
        return None
    observed = sum(a == b for a, b in pairs) / n
    left, right = Counter(a for a, _ in pairs), Counter(b for _, b in pairs)
    expected = sum(left[k] * right[k] for k in left) / (n * n)
    return None if expected == 1 else round((observed - expected) / (1 - expected), 3)


def agree(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    n = len(pairs)
    same = sum(a == b for a, b in pairs)
    return {"n": n, "agree": same, "rate": round(same / n, 3) if n else None, "kappa": kappa(pairs)}


def f1(common: int, left: int, right: int) -> float | None:
    return round(2 * common / (left + right), 3) if left + right else None


def entries(label: L.Label) -> list[tuple[str, Entry]]:
    return [("episode", e) for e in label.episodes] + [("unfixed", e) for e in label.unfixed]


def match(first: list[tuple[str, Entry]], second: list[tuple[str, Entry]]) -> list[tuple[int, int]]:
    """One-to-one pairs of entries: first those citing the same `failed` call, then those sharing any
    failing call id (`failed` or `also`)."""
    pairs: list[tuple[int, int]] = []
    left, right = set(range(len(first))), set(range(len(second)))
    rules = (
        lambda a, b: str(a.get("failed")) == str(b.get("failed")),
        lambda a, b: bool(L.Label.episode_ids(a) & L.Label.episode_ids(b)),
    )
    for same in rules:
        for i in sorted(left):
            j = next((j for j in sorted(right) if same(first[i][1], second[j][1])), None)
            if j is not None:
                pairs.append((i, j))
                left.discard(i)
                right.discard(j)
    return sorted(pairs)


def fix_kind(entry: Entry) -> str | None:
    fix = entry.get("fix")
    return str(fix.get("kind")) if isinstance(fix, dict) and fix.get("kind") else None


def differences(s1: str, a: Entry, s2: str, b: Entry) -> dict[str, tuple[Any, Any]]:
    """The judged fields on which two matched entries differ (first labeller's value, second's)."""
    values = {
        "status": (s1, s2),
        "kind": (a.get("kind"), b.get("kind")),
        "transient": (L.transient(a), L.transient(b)),
        "seen_in_output": (L.seen_in_output(a), L.seen_in_output(b)),
        "cause": (L.cause(a), L.cause(b)),
    }
    if s1 == s2 == "episode":
        values |= {
            "fix_kind": (fix_kind(a), fix_kind(b)),
            "passed": (a.get("passed"), b.get("passed")),
            "useful": (a.get("useful") is True, b.get("useful") is True),
        }
    return {k: v for k, v in values.items() if v[0] != v[1]}


def paired(first: list[L.Label], second: list[L.Label]) -> list[L.Label]:
    """The second copies of sessions the first labeller labelled: labels-second/ holds several second
    labellers' samples (I's of G's projects, T's of P's), so the second labeller is named and counted from
    the copies of the first labeller's sessions only."""
    keys = {(lab.corpus, lab.session) for lab in first}
    return [lab for lab in second if (lab.corpus, lab.session) in keys]


def compare(first: list[L.Label], second: list[L.Label]) -> dict[str, Any]:
    by_key = {(lab.corpus, lab.session): lab for lab in first}
    calls = Counter()
    episodes = Counter()
    keep = Counter()  # worth-keeping fixes (labels.worth_keeping), as capture is scored
    status, kinds, fixes, passed, useful, transient, seen = [], [], [], [], [], [], []
    only: dict[str, list[dict[str, Any]]] = {"first": [], "second": []}
    disagreements: list[dict[str, Any]] = []  # matched entries whose fields differ
    matched_rows: list[dict[str, Any]] = []  # per matched entry: project, session, both causes, G's filters
    sessions = []
    for lab2 in second:
        lab1 = by_key.get((lab2.corpus, lab2.session))
        if lab1 is None:
            continue
        sessions.append(f"{lab2.corpus}/{lab2.session}")
        ids1, ids2 = lab1.failed_ids(), lab2.failed_ids()
        calls.update(first=len(ids1), second=len(ids2), both=len(ids1 & ids2))
        e1, e2 = entries(lab1), entries(lab2)
        pairs = match(e1, e2)
        ep1 = [(s, e) for s, e in e1 if s == "episode"]
        ep2 = [(s, e) for s, e in e2 if s == "episode"]
        episodes.update(first=len(ep1), second=len(ep2), both=len(match(ep1, ep2)))
        kept1 = [(s, e) for s, e in ep1 if L.worth_keeping(e)]
        kept2 = [(s, e) for s, e in ep2 if L.worth_keeping(e)]
        both = match(kept1, kept2)
        keep.update(first=len(kept1), second=len(kept2), both=len(both))
        keep.update(
            same_passed=sum(str(kept1[i][1].get("passed")) == str(kept2[j][1].get("passed")) for i, j in both)
        )
        for i, j in pairs:
            (s1, a), (s2, b) = e1[i], e2[j]
            status.append((s1, s2))
            kinds.append((a.get("kind"), b.get("kind")))
            transient.append((L.transient(a), L.transient(b)))
            seen.append((L.seen_in_output(a), L.seen_in_output(b)))
            if s1 == s2 == "episode":
                fixes.append((fix_kind(a), fix_kind(b)))
                passed.append((str(a.get("passed")), str(b.get("passed"))))
                useful.append((a.get("useful") is True, b.get("useful") is True))
            diff = differences(s1, a, s2, b)
            if diff:
                disagreements.append(
                    {"session": f"{lab2.corpus}/{lab2.session[:8]}", "failed": b.get("failed"), **diff}
                )
            matched_rows.append(
                {
                    "project": lab2.project,
                    "session": lab2.session,
                    "first": L.cause(a),
                    "second": L.cause(b),
                    "recurrence": L.transient(a) is not True and a.get("kind") != "scratch",
                }
            )
        for side, mine, other in (
            ("first", e1, {i for i, _ in pairs}),
            ("second", e2, {j for _, j in pairs}),
        ):
            for k, (s, e) in enumerate(mine):
                if k not in other:
                    only[side].append(
                        {
                            "session": f"{lab2.corpus}/{lab2.session[:8]}",
                            "status": s,
                            "failed": e.get("failed"),
                            "kind": e.get("kind"),
                            "cause": L.cause(e),
                            "error": str(e.get("error"))[:100],
                        }
                    )
    return {
        "sessions": sessions,
        "failing_calls": {
            **calls,
            "precision_second": round(calls["both"] / calls["second"], 3) if calls["second"] else None,
            "recall_second": round(calls["both"] / calls["first"], 3) if calls["first"] else None,
            "f1": f1(calls["both"], calls["first"], calls["second"]),
        },
        "episodes": {**episodes, "f1": f1(episodes["both"], episodes["first"], episodes["second"])},
        "as_capture": as_capture(keep),
        "matched_entries": len(status),
        "status": agree(status) | {"confusion": Counter(f"{a}/{b}" for a, b in status)},
        "kind": agree(kinds) | {"confusion": Counter(f"{a}/{b}" for a, b in kinds)},
        "fix_kind": agree(fixes) | {"confusion": Counter(f"{a}/{b}" for a, b in fixes)},
        "passed": agree(passed),
        "useful": agree(useful) | {"confusion": Counter(f"{a}/{b}" for a, b in useful)},
        "transient": agree(transient) | {"confusion": Counter(f"{a}/{b}" for a, b in transient)},
        "seen_in_output": agree(seen) | {"confusion": Counter(f"{a}/{b}" for a, b in seen)},
        "cause_pairs": cause_pairs(matched_rows),
        "cause_pairs_cross_session": cause_pairs(matched_rows, cross_session=True),
        "disagreements": disagreements,
        "only_first": only["first"],
        "only_second": only["second"],
    }


def as_capture(keep: Counter) -> dict[str, Any]:
    """The second labeller scored the way capture is (bench_capture.judge): its worth-keeping fixes as the
    stored ones, the first labeller's as the truth. Precision, recall, and of the fixes both keep, the share
    whose passing call is the same one (what a right resolution needs): how far the targets are from what a
    second careful reader of the same transcripts reaches."""

    def ratio(a: int, b: int) -> float | None:
        return round(a / b, 3) if b else None

    return {
        **keep,
        "precision": ratio(keep["both"], keep["second"]),
        "recall": ratio(keep["both"], keep["first"]),
        "right": ratio(keep["same_passed"], keep["both"]),
    }


def cause_pairs(rows: list[dict[str, Any]], cross_session: bool = False) -> dict[str, Any]:
    """Pairs of matched entries of one project: does each labeller give both the same cause slug?
    `cross_session` keeps pairs from two sessions whose entries G counts as recurrences."""
    both = first = second = total = 0
    for a, b in combinations(rows, 2):
        if a["project"] != b["project"]:
            continue
        if cross_session and (a["session"] == b["session"] or not (a["recurrence"] and b["recurrence"])):
            continue
        total += 1
        same1 = a["first"] is not None and a["first"] == b["first"]
        same2 = a["second"] is not None and a["second"] == b["second"]
        both += same1 and same2
        first += same1
        second += same2
    return {
        "pairs": total,
        "same_first": first,
        "same_second": second,
        "same_both": both,
        "f1": f1(both, first, second),
    }


def table(result: dict[str, Any], first: str, second: str) -> str:
    def pct(x: float | None) -> str:
        return "-" if x is None else f"{x:.2f}"

    c, e = result["failing_calls"], result["episodes"]
    rows = [
        (
            "failing calls (ids)",
            f"{first} {c['first']}, {second} {c['second']}, both {c['both']}",
            pct(c["f1"]),
            "",
        ),
        (
            "episodes (fixed)",
            f"{first} {e['first']}, {second} {e['second']}, both {e['both']}",
            pct(e["f1"]),
            "",
        ),
    ]
    k = result["as_capture"]
    rows.append((
        "worth keeping, scored as capture",
        f"{first} {k['first']}, {second} {k['second']}, both {k['both']} (same passing call {k['same_passed']})",
        f"P {pct(k['precision'])} R {pct(k['recall'])} right {pct(k['right'])}",
        "",
    ))  # fmt: skip
    for key in ("status", "kind", "fix_kind", "passed", "useful", "transient", "seen_in_output"):
        r = result[key]
        rows.append((key, f"{r['agree']}/{r['n']} agree", pct(r["rate"]), pct(r["kappa"])))
    for key in ("cause_pairs", "cause_pairs_cross_session"):
        r = result[key]
        detail = f"{r['pairs']} pairs; same: {first} {r['same_first']}, {second} {r['same_second']}, both {r['same_both']}"
        rows.append((key, detail, pct(r["f1"]), ""))
    width = max(len(r[1]) for r in rows)
    out = ["| measure | counts | F1 / agreement | kappa |", "|---|---|---|---|"]
    out += [f"| {name} | {detail:<{width}} | {score} | {k} |" for name, detail, score, k in rows]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--labeller", default="G", help="the first labeller, in labels/ (default G)")
    parser.add_argument("--json", type=Path, default=RESULTS, help="where to save the result")
    parser.add_argument(
        "--swecb",
        action="store_true",
        help="SWE-ContextBench instead: its tuning labels against labeller C's second copies (tune-second)",
    )
    args = parser.parse_args(argv)
    halves = ("tune", "heldout", "heldout-fresh")
    if args.swecb:
        second = L.load(("tune-second",))
        copied = {lab.session for lab in second}
        first = [lab for lab in L.load(("tune",)) if lab.corpus == "swecb" and lab.session in copied]
        args.labeller = ",".join(sorted({str(lab.data.get("labeller")) for lab in first}))
        if args.json == RESULTS:
            args.json = RESULTS.with_name("label_agreement_swecb.json")
    else:
        first = [lab for lab in L.load(halves) if lab.data.get("labeller") == args.labeller]
        second = paired(first, L.load(halves, root=L.SECOND_LABELS))
    if not second:
        parser.error(
            f"no labels in {L.SECOND_LABELS} of {args.labeller}'s sessions with transcripts in {L.CACHE}"
        )
    name2 = ",".join(sorted({str(lab.data.get("labeller")) for lab in second}))
    result = compare(first, second)
    print(f"{len(result['sessions'])} sessions labelled by {args.labeller} and {name2}\n")
    print(table(result, args.labeller, name2))
    halves_out = {}
    for half in ("heldout", "tune"):  # split by project (split.json), reported apart
        part = compare(first, [lab for lab in second if L.project_half(lab.corpus) == half])
        if not part["sessions"]:
            continue
        halves_out[half] = {
            k: v for k, v in part.items() if k not in ("only_first", "only_second", "disagreements")
        }
        print(f"\n{half} projects ({len(part['sessions'])} sessions)\n")
        print(table(part, args.labeller, name2))
    for side, who in (("only_first", args.labeller), ("only_second", name2)):
        print(f"\nentries only {who} labelled ({len(result[side])}):")
        for row in result[side]:
            print(f"  {row['session']} {row['failed']} {row['status']:<8} {row['kind']:<12} {row['cause']}")
    result = {"first": args.labeller, "second": name2, **result, "halves": halves_out}
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(result, indent=1, default=dict) + "\n")
    print(f"\nsaved {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
