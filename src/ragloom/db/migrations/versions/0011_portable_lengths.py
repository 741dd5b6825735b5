"""lengths PostgreSQL enforces (SQLite never did): knowledge base embedding model names of a workspace
provider ('provider:<workspace id>:<model>', up to 142 characters), chat message model names, worker
ids ('<host>:<pid>:<index>', a container's host name alone may have 63 characters); file sizes as
64-bit integers

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-04 17:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0011'
down_revision = '0010'
branch_labels = None
depends_on = None

# (table, column, old type, new type, nullable)
_CHANGES = (
    ('knowledgebase', 'embedding_model', sa.String(length=128), sa.String(length=255), False),
    ('chat_message', 'model', sa.String(length=128), sa.String(length=255), True),
    ('task', 'claimed_by', sa.String(length=64), sa.String(length=255), True),
    ('knowledge_build', 'claimed_by', sa.String(length=64), sa.String(length=255), True),
    ('worker', 'id', sa.String(length=64), sa.String(length=255), False),
    ('worker', 'supervisor', sa.String(length=64), sa.String(length=255), True),
    ('document_version', 'size', sa.Integer(), sa.BigInteger(), False),
)


def upgrade() -> None:
    for table, column, old, new, nullable in _CHANGES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(column, existing_type=old, type_=new, existing_nullable=nullable)


def downgrade() -> None:
    for table, column, old, new, nullable in reversed(_CHANGES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.alter_column(column, existing_type=new, type_=old, existing_nullable=nullable)
