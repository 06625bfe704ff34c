"""Claude Code hooks: auto-recall on a failed tool call, capture of resolved errors as learnings.

`recall hook <Event>` (see `cli.py`) reads the hook JSON on stdin, does its work under a hard deadline and
always exits 0. Modules: `runtime` (stdin, deadline, log), `events` (hook JSON -> tool events, command
keys), `state` (the session record), `handlers` (one function per event), `retrieve` (learnings lookup and
the injected text), `capture` (resolved errors -> learnings), `install` (settings.json entries).
"""
