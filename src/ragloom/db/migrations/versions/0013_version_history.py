"""document versions' history (issue 27): why each was made (upload, reparse, settings, rollback, reindex) and by
whom, who made it live by hand (a rollback), whether its chunks are still in the search store (``indexed``: the
last RAGLOOM_KEEP_VERSIONS versions of a document keep theirs) and, while it is not the one readers see, which of
its rows were matchable (``parked``)

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-06 02:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0013'
down_revision = '0012'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.add_column(sa.Column('reason', sa.String(length=16), nullable=False, server_default='upload'))
        batch_op.add_column(sa.Column('created_by', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('published_by', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('indexed', sa.Boolean(), nullable=False, server_default=sa.true()))
        batch_op.add_column(sa.Column('parked', sa.JSON(), nullable=True))
    # before this revision a superseded, failed or cancelled version's chunks were dropped at once
    op.execute(sa.text("UPDATE document_version SET indexed = :no WHERE status IN ('superseded', 'failed', "
                       "'cancelled')").bindparams(no=False))


def downgrade() -> None:
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.drop_column('parked')
        batch_op.drop_column('indexed')
        batch_op.drop_column('published_by')
        batch_op.drop_column('created_by')
        batch_op.drop_column('reason')
