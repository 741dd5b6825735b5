"""API keys: a scope (read or read-write), an optional expiry, and revocation; the audit log

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-03 11:15:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('api_key', schema=None) as batch_op:
        batch_op.add_column(sa.Column('scope', sa.String(length=16), nullable=False, server_default='read-write'))
        batch_op.add_column(sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True))
        batch_op.add_column(sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True))
    op.create_table(
        'audit_event',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=True),
        sa.Column('user_id', sa.String(length=32), nullable=True),
        sa.Column('action', sa.String(length=48), nullable=False),
        sa.Column('target', sa.String(length=200), nullable=False),
        sa.Column('detail', sa.Text(), nullable=False),
        sa.Column('origin', sa.String(length=80), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_audit_event_tenant_id', 'audit_event', ['tenant_id'])
    op.create_index('ix_audit_event_action', 'audit_event', ['action'])
    op.create_index('ix_audit_event_created_at', 'audit_event', ['created_at'])


def downgrade() -> None:
    op.drop_table('audit_event')
    with op.batch_alter_table('api_key', schema=None) as batch_op:
        batch_op.drop_column('revoked_at')
        batch_op.drop_column('expires_at')
        batch_op.drop_column('scope')
