"""API keys: a scope (read or read-write), an optional expiry, and revocation

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


def downgrade() -> None:
    with op.batch_alter_table('api_key', schema=None) as batch_op:
        batch_op.drop_column('revoked_at')
        batch_op.drop_column('expires_at')
        batch_op.drop_column('scope')
