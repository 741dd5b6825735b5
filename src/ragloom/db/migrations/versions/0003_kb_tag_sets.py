"""knowledge base tag sets: tag_kb_ids and topn_tags

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-10 10:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.add_column(sa.Column('tag_kb_ids', sa.JSON(), nullable=False, server_default='[]'))
        batch_op.add_column(sa.Column('topn_tags', sa.Integer(), nullable=False, server_default='3'))


def downgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.drop_column('topn_tags')
        batch_op.drop_column('tag_kb_ids')
