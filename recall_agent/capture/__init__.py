"""The capture engine: what a Claude Code session fixed, read from its transcript (`engine.py`).

Used live by the hooks at Stop / SessionEnd (`recall_agent.hooks.capture`) and on old sessions by
`recall import-sessions` (`recall_agent.hooks.importer`): one engine, so the two cannot drift apart.
"""

# the last line of a captured resolution says where it came from; the on-error hook leaves it out
SOURCE_PREFIX = "From the session's "
# the first line says the fix: built to fit whole in what the on-error hook shows of a learning
FIX_LINE_MAX = 360
