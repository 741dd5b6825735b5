"""Retrieval: scope -> query -> recall -> prune -> score -> threshold -> page."""
