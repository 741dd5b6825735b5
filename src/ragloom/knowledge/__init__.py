"""Knowledge built over a document or a knowledge base: table of contents (RAPTOR and graph to come)."""
