"""Metadata DB: SQLAlchemy 2 models, sessions and Alembic migrations."""
