"""ragloom: a document knowledge base that answers questions with cited, verifiable evidence."""

__version__ = "0.1.0"
