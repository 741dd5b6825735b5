"""knowledge bases' min_relevance: chunks whose calibrated relevance is lower are dropped (issue 26);
null: the server's default (settings.min_relevance)

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-06 01:30:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0012'
down_revision = '0011'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.add_column(sa.Column('min_relevance', sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.drop_column('min_relevance')
