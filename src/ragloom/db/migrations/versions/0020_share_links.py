"""share links (issue 33): an assistant shared with visitors who have no account, and their sessions

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07 03:30:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0020'
down_revision = '0019'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('tenant', schema=None) as batch_op:
        batch_op.add_column(sa.Column('members_share', sa.Boolean(), server_default=sa.false(), nullable=False))
    op.create_table(
        'share_link',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('assistant_id', sa.String(length=32), nullable=False),
        sa.Column('created_by', sa.String(length=32), nullable=False),
        sa.Column('kind', sa.String(length=8), nullable=False),
        sa.Column('token', sa.String(length=64), nullable=False),
        sa.Column('name', sa.String(length=128), nullable=False),
        sa.Column('title', sa.String(length=128), nullable=False),
        sa.Column('welcome', sa.Text(), nullable=False),
        sa.Column('allowed_origins', sa.JSON(), nullable=False),
        sa.Column('per_minute', sa.Integer(), nullable=False),
        sa.Column('per_day', sa.Integer(), nullable=False),
        sa.Column('show_pages', sa.Boolean(), nullable=False),
        sa.Column('expires_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('revoked_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('questions', sa.Integer(), nullable=False),
        sa.Column('refused', sa.Integer(), nullable=False),
        sa.Column('last_used_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['assistant_id'], ['assistant.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('token'),
    )
    with op.batch_alter_table('share_link', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_share_link_tenant_id'), ['tenant_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_share_link_assistant_id'), ['assistant_id'], unique=False)
    with op.batch_alter_table('chat_session', schema=None) as batch_op:
        batch_op.add_column(sa.Column('share_id', sa.String(length=32), nullable=True))
        batch_op.add_column(sa.Column('visitor_id', sa.String(length=64), nullable=True))
        batch_op.create_index(batch_op.f('ix_chat_session_share_id'), ['share_id'], unique=False)
        batch_op.create_foreign_key('fk_chat_session_share_id', 'share_link', ['share_id'], ['id'],
                                    ondelete='SET NULL')


def downgrade() -> None:
    with op.batch_alter_table('chat_session', schema=None) as batch_op:
        batch_op.drop_constraint('fk_chat_session_share_id', type_='foreignkey')
        batch_op.drop_index(batch_op.f('ix_chat_session_share_id'))
        batch_op.drop_column('visitor_id')
        batch_op.drop_column('share_id')
    with op.batch_alter_table('share_link', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_share_link_assistant_id'))
        batch_op.drop_index(batch_op.f('ix_share_link_tenant_id'))
    op.drop_table('share_link')
    with op.batch_alter_table('tenant', schema=None) as batch_op:
        batch_op.drop_column('members_share')
