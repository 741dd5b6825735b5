"""a chunk edit's keywords and questions (issue 31): a manual edit or an added chunk may set the chunk's
important keywords and the questions it answers, and a re-parse re-applies them with its text

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06 18:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0019'
down_revision = '0018'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('chunk_override', schema=None) as batch_op:
        batch_op.add_column(sa.Column('keywords', sa.JSON(), nullable=True))
        batch_op.add_column(sa.Column('questions', sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('chunk_override', schema=None) as batch_op:
        batch_op.drop_column('questions')
        batch_op.drop_column('keywords')
