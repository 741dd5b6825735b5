"""assistants' applicability scope (issue 27): required document metadata keys (model, firmware ...)
and how a value matches; {} = no scope

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06 03:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0015'
down_revision = '0014'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('assistant', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scope', sa.JSON(), nullable=False, server_default='{}'))


def downgrade() -> None:
    with op.batch_alter_table('assistant', schema=None) as batch_op:
        batch_op.drop_column('scope')
