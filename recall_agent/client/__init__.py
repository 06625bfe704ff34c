"""The /recall client: parse the seed's flags, read the session context, fan out to the two nodes, display."""
