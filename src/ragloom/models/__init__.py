"""Models: embeddings, chat LLMs, rerankers — local offline defaults and HTTP providers."""
