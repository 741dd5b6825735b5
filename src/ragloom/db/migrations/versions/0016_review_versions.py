"""knowledge bases' review_versions (issue 27): new versions of their documents wait, built, as ready
for a reviewer to publish or discard them; false (the default): published when built

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-06 04:40:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0016'
down_revision = '0015'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.add_column(sa.Column('review_versions', sa.Boolean(), nullable=False, server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.drop_column('review_versions')
