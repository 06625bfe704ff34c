"""The team server: `recall serve` wraps the two nodes in an ASGI app with auth, guards and a shared store."""
