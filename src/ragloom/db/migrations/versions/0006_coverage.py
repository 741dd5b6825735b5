"""coverage of each task, version and document (words of the parsed text the chunks keep); the HTML
view of a version of a flowing format

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
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.add_column(sa.Column('view_key', sa.String(length=160), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.drop_column('view_key')
    for table in reversed(_TABLES):
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column('coverage')
