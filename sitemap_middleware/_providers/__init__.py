"""URL providers: the protocol and the built-in sources of entries."""
