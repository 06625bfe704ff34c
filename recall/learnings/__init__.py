"""Learnings node: how an agent fixed this same error before (store, signatures, retrieval)."""
