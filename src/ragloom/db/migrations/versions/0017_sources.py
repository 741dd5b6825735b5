"""sources (issue 30): a knowledge base's sources (a folder, a web site, ...) with their settings, encrypted
credentials, filters and schedule; the items a sync made documents of (source_item); and the syncs, a job
kind of the queue (source_sync)

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-06 11:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0017'
down_revision = '0016'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'source',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('kb_id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=128), nullable=False),
        sa.Column('type', sa.String(length=32), nullable=False),
        sa.Column('settings', sa.JSON(), nullable=False),
        sa.Column('secret', sa.Text(), nullable=False),
        sa.Column('filters', sa.JSON(), nullable=False),
        sa.Column('schedule_minutes', sa.Integer(), nullable=True),
        sa.Column('paused', sa.Boolean(), nullable=False),
        sa.Column('next_run_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('last_sync_id', sa.String(length=32), nullable=True),
        sa.Column('last_synced_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_by', sa.String(length=32), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['kb_id'], ['knowledgebase.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('kb_id', 'name'),
    )
    with op.batch_alter_table('source', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_source_kb_id'), ['kb_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_source_next_run_at'), ['next_run_at'], unique=False)
        batch_op.create_index(batch_op.f('ix_source_tenant_id'), ['tenant_id'], unique=False)
    op.create_table(
        'source_item',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('source_id', sa.String(length=32), nullable=False),
        sa.Column('item_key', sa.String(length=64), nullable=False),
        sa.Column('item_id', sa.Text(), nullable=False),
        sa.Column('document_id', sa.String(length=32), nullable=False),
        sa.Column('change_token', sa.String(length=255), nullable=False),
        sa.Column('path', sa.Text(), nullable=False),
        sa.Column('title', sa.Text(), nullable=False),
        sa.Column('url', sa.Text(), nullable=False),
        sa.Column('synced_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['document_id'], ['document.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['source_id'], ['source.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('source_id', 'item_key'),
    )
    with op.batch_alter_table('source_item', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_source_item_document_id'), ['document_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_source_item_source_id'), ['source_id'], unique=False)
    op.create_table(
        'source_sync',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('kb_id', sa.String(length=32), nullable=False),
        sa.Column('source_id', sa.String(length=32), nullable=False),
        sa.Column('trigger', sa.String(length=16), nullable=False),
        sa.Column('created_by', sa.String(length=32), nullable=True),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('stage', sa.String(length=32), nullable=False),
        sa.Column('progress', sa.Float(), nullable=False),
        sa.Column('message', sa.Text(), nullable=False),
        sa.Column('stats', sa.JSON(), nullable=False),
        sa.Column('errors', sa.JSON(), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('cancel_requested', sa.Boolean(), nullable=False),
        sa.Column('claimed_by', sa.String(length=255), nullable=True),
        sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('not_before', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['kb_id'], ['knowledgebase.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['source_id'], ['source.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('source_sync', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_source_sync_source_id'), ['source_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_source_sync_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_source_sync_tenant_id'), ['tenant_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('source_sync', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_source_sync_tenant_id'))
        batch_op.drop_index(batch_op.f('ix_source_sync_status'))
        batch_op.drop_index(batch_op.f('ix_source_sync_source_id'))
    op.drop_table('source_sync')
    with op.batch_alter_table('source_item', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_source_item_source_id'))
        batch_op.drop_index(batch_op.f('ix_source_item_document_id'))
    op.drop_table('source_item')
    with op.batch_alter_table('source', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_source_tenant_id'))
        batch_op.drop_index(batch_op.f('ix_source_next_run_at'))
        batch_op.drop_index(batch_op.f('ix_source_kb_id'))
    op.drop_table('source')
