"""source permissions (issue 30): documents' readers at their source, a workspace's groups and their
members, a knowledge base's choice to apply them (``source_permissions``, ``admins_see_all``), a source's
own readers and what its items' documents were given (``readers_digest``)

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-06 14:40:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0018'
down_revision = '0017'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.add_column(sa.Column('source_permissions', sa.Boolean(), nullable=False, server_default=sa.false()))
        batch_op.add_column(sa.Column('admins_see_all', sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.add_column(sa.Column('restricted', sa.Boolean(), nullable=False, server_default=sa.false()))
    with op.batch_alter_table('source', schema=None) as batch_op:
        batch_op.add_column(sa.Column('readers', sa.JSON(), nullable=False, server_default='[]'))
    with op.batch_alter_table('source_item', schema=None) as batch_op:
        batch_op.add_column(sa.Column('readers_digest', sa.String(length=64), nullable=False, server_default=''))
    op.create_table(
        'document_reader',
        sa.Column('document_id', sa.String(length=32), nullable=False),
        sa.Column('principal', sa.String(length=400), nullable=False),
        sa.ForeignKeyConstraint(['document_id'], ['document.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('document_id', 'principal'),
    )
    with op.batch_alter_table('document_reader', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_document_reader_principal'), ['principal'], unique=False)
    op.create_table(
        'member_group',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=200), nullable=False),
        sa.Column('description', sa.Text(), nullable=False),
        sa.Column('source_id', sa.String(length=32), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['source_id'], ['source.id'], ondelete='SET NULL'),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('tenant_id', 'name'),
    )
    with op.batch_alter_table('member_group', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_member_group_tenant_id'), ['tenant_id'], unique=False)
    op.create_table(
        'group_member',
        sa.Column('group_id', sa.String(length=32), nullable=False),
        sa.Column('email', sa.String(length=320), nullable=False),
        sa.ForeignKeyConstraint(['group_id'], ['member_group.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('group_id', 'email'),
    )
    with op.batch_alter_table('group_member', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_group_member_email'), ['email'], unique=False)


def downgrade() -> None:
    op.drop_table('group_member')
    op.drop_table('member_group')
    op.drop_table('document_reader')
    with op.batch_alter_table('source_item', schema=None) as batch_op:
        batch_op.drop_column('readers_digest')
    with op.batch_alter_table('source', schema=None) as batch_op:
        batch_op.drop_column('readers')
    with op.batch_alter_table('document', schema=None) as batch_op:
        batch_op.drop_column('restricted')
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.drop_column('admins_see_all')
        batch_op.drop_column('source_permissions')
