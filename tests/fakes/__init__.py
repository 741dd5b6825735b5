"""Real (small) stand-ins for external services, for tests."""

from .openai_server import FakeOpenAIServer, RecordedRequest, hashed_embedding

__all__ = ["FakeOpenAIServer", "RecordedRequest", "hashed_embedding"]
