"""coverage of each task, version and document (words of the parsed text the chunks keep)

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-03 08:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

_TABLES = ('task', 'document_version', 'document')


def upgrade() -> None:
    for table in _TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(sa.Column('coverage', sa.JSON(), nullable=True))


def downgrade() -> None:
    for table in reversed(_TABLES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('coverage')
