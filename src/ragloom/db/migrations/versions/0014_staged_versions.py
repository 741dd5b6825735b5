"""staged publish (issue 27): a version made with ``stage`` waits as ready for a reviewer to publish or
discard it instead of going live when built; the embedding model a version's vectors were made with (a
version of another model than its knowledge base's cannot be made live again; NULL: before this revision)

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06 02:20:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0014'
down_revision = '0013'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.add_column(sa.Column('staged', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('embedding_model', sa.String(length=255), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.drop_column('embedding_model')
        batch_op.drop_column('staged')
