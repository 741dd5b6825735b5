"""Ingestion: parse -> chunk -> embed -> index -> publish."""
