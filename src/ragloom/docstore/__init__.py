"""Search store: interface and engines."""
