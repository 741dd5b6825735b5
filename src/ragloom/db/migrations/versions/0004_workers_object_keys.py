"""worker registry; task start time; per-tenant object keys of versions; longer page image keys

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02 22:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'worker',
        sa.Column('id', sa.String(length=64), nullable=False),
        sa.Column('host', sa.String(length=255), nullable=False),
        sa.Column('pid', sa.Integer(), nullable=False),
        sa.Column('supervisor', sa.String(length=64), nullable=True),
        sa.Column('task_id', sa.String(length=32), nullable=True),
        sa.Column('rss_mb', sa.Float(), nullable=False),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('last_seen', sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_worker_last_seen', 'worker', ['last_seen'])
    with op.batch_alter_table('task', schema=None) as batch_op:
        batch_op.add_column(sa.Column('started_at', sa.DateTime(timezone=True), nullable=True))
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.add_column(sa.Column('object_key', sa.String(length=160), nullable=True))
    with op.batch_alter_table('version_page', schema=None) as batch_op:
        batch_op.alter_column('image_key', existing_type=sa.String(length=64), type_=sa.String(length=160),
                              existing_nullable=True)


def downgrade() -> None:
    with op.batch_alter_table('version_page', schema=None) as batch_op:
        batch_op.alter_column('image_key', existing_type=sa.String(length=160), type_=sa.String(length=64),
                              existing_nullable=True)
    with op.batch_alter_table('document_version', schema=None) as batch_op:
        batch_op.drop_column('object_key')
    with op.batch_alter_table('task', schema=None) as batch_op:
        batch_op.drop_column('started_at')
    op.drop_index('ix_worker_last_seen', table_name='worker')
    op.drop_table('worker')
