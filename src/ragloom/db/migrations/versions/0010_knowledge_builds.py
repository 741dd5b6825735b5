"""knowledge builds: the knowledge_build queue, knowledge_part (what is built per document), the LLM
response cache, and knowledgebase.build_config (RAPTOR settings)

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-20 10:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.add_column(sa.Column('build_config', sa.JSON(), nullable=False, server_default='{}'))
    op.create_table(
        'knowledge_build',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('kb_id', sa.String(length=32), nullable=False),
        sa.Column('document_id', sa.String(length=32), nullable=True),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('trigger', sa.String(length=16), nullable=False),
        sa.Column('created_by', sa.String(length=32), nullable=True),
        sa.Column('status', sa.String(length=16), nullable=False),
        sa.Column('stage', sa.String(length=32), nullable=False),
        sa.Column('progress', sa.Float(), nullable=False),
        sa.Column('message', sa.Text(), nullable=False),
        sa.Column('estimate', sa.JSON(), nullable=True),
        sa.Column('stats', sa.JSON(), nullable=False),
        sa.Column('attempts', sa.Integer(), nullable=False),
        sa.Column('cancel_requested', sa.Boolean(), nullable=False),
        sa.Column('claimed_by', sa.String(length=64), nullable=True),
        sa.Column('heartbeat_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('started_at', sa.DateTime(timezone=True), nullable=True),
        sa.Column('not_before', sa.DateTime(timezone=True), nullable=True),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('finished_at', sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(['document_id'], ['document.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['kb_id'], ['knowledgebase.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    with op.batch_alter_table('knowledge_build', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_knowledge_build_kb_id'), ['kb_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_knowledge_build_status'), ['status'], unique=False)
        batch_op.create_index(batch_op.f('ix_knowledge_build_tenant_id'), ['tenant_id'], unique=False)
    op.create_table(
        'knowledge_part',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('kb_id', sa.String(length=32), nullable=False),
        sa.Column('kind', sa.String(length=16), nullable=False),
        sa.Column('scope', sa.String(length=32), nullable=False),
        sa.Column('document_id', sa.String(length=32), nullable=True),
        sa.Column('version_id', sa.String(length=32), nullable=True),
        sa.Column('recipe', sa.String(length=64), nullable=False),
        sa.Column('root_ids', sa.JSON(), nullable=False),
        sa.Column('rows', sa.Integer(), nullable=False),
        sa.Column('layers', sa.Integer(), nullable=False),
        sa.Column('build_id', sa.String(length=32), nullable=True),
        sa.Column('built_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['document_id'], ['document.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['kb_id'], ['knowledgebase.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('kb_id', 'kind', 'scope'),
    )
    with op.batch_alter_table('knowledge_part', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_knowledge_part_kb_id'), ['kb_id'], unique=False)
    op.create_table(
        'llm_cache',
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('key', sa.String(length=64), nullable=False),
        sa.Column('model', sa.String(length=200), nullable=False),
        sa.Column('reply', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('tenant_id', 'key'),
    )


def downgrade() -> None:
    op.drop_table('llm_cache')
    with op.batch_alter_table('knowledge_part', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_knowledge_part_kb_id'))
    op.drop_table('knowledge_part')
    with op.batch_alter_table('knowledge_build', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_knowledge_build_tenant_id'))
        batch_op.drop_index(batch_op.f('ix_knowledge_build_status'))
        batch_op.drop_index(batch_op.f('ix_knowledge_build_kb_id'))
    op.drop_table('knowledge_build')
    with op.batch_alter_table('knowledgebase', schema=None) as batch_op:
        batch_op.drop_column('build_config')
