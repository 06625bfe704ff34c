"""`recall push [on|off KIND]`: show or switch what recall tells agents before anything failed."""

from __future__ import annotations

import argparse
import sys

KIND_NAMES = {"session-start": "session_start", "prompt": "prompt"}


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(
        prog="recall push",
        description="Show or switch recall's pushed context: the repository's known pitfalls at session "
        "start (session-start) and the code a task prompt is about (prompt). Kept in "
        "$RECALL_HOME/config.json; RECALL_PUSH_SESSION_START / RECALL_PUSH_PROMPT (on/off) override it.",
    )
    p.add_argument("action", nargs="?", choices=("on", "off", "show"), default="show")
    p.add_argument("kind", nargs="?", choices=sorted(KIND_NAMES), help="which push to switch")
    args = p.parse_args(argv)
    from recall_agent.push import ledger, settings

    if args.action != "show":
        if not args.kind:
            print(f"recall push {args.action}: name what to switch: session-start or prompt", file=sys.stderr)
            return 2
        try:
            path = settings.set_enabled(KIND_NAMES[args.kind], args.action == "on")
        except OSError as exc:
            print(f"recall push: cannot write the setting: {exc}", file=sys.stderr)
            return 1
        print(f"push {args.kind}: {args.action} ({path})")
        return 0
    totals = ledger.totals()
    for name, kind in KIND_NAMES.items():
        state = "on" if settings.enabled(kind) else "off"
        t = totals[kind]
        print(f"{name:14} {state:3}  ({settings.source(kind)})  injected {t['count']}, {t['tokens']} tokens")
    return 0
