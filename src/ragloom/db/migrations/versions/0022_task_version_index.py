"""an index on task.version_id (issue 32): a version's tasks are read at each change of one of them (the
document mirrors them) and when it is published — without it, a scan of every task ever queued

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07 16:20:00.000000
"""
from alembic import op

revision = '0022'
down_revision = '0021'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('task', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_task_version_id'), ['version_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('task', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_task_version_id'))
