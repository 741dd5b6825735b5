"""chat assistants, sessions and messages (with version-locked references)

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-12 10:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'assistant',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=128), nullable=False),
        sa.Column('description', sa.Text(), nullable=False),
        sa.Column('created_by', sa.String(length=32), nullable=True),
        sa.Column('knowledge_bases', sa.JSON(), nullable=False),
        sa.Column('llm', sa.JSON(), nullable=False),
        sa.Column('prompt', sa.JSON(), nullable=False),
        sa.Column('retrieval', sa.JSON(), nullable=False),
        sa.Column('top_n', sa.Integer(), nullable=False),
        sa.Column('rerank', sa.Boolean(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('tenant_id', 'name'),
    )
    op.create_index('ix_assistant_tenant_id', 'assistant', ['tenant_id'])
    op.create_table(
        'chat_session',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('tenant_id', sa.String(length=32), nullable=False),
        sa.Column('assistant_id', sa.String(length=32), nullable=False),
        sa.Column('user_id', sa.String(length=32), nullable=False),
        sa.Column('name', sa.String(length=255), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['tenant_id'], ['tenant.id'], ondelete='CASCADE'),
        sa.ForeignKeyConstraint(['assistant_id'], ['assistant.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
    )
    op.create_index('ix_chat_session_tenant_id', 'chat_session', ['tenant_id'])
    op.create_index('ix_chat_session_assistant_id', 'chat_session', ['assistant_id'])
    op.create_index('ix_chat_session_user_id', 'chat_session', ['user_id'])
    op.create_index('ix_chat_session_updated_at', 'chat_session', ['updated_at'])
    op.create_table(
        'chat_message',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('session_id', sa.String(length=32), nullable=False),
        sa.Column('seq', sa.Integer(), nullable=False),
        sa.Column('turn', sa.Integer(), nullable=False),
        sa.Column('role', sa.String(length=16), nullable=False),
        sa.Column('content', sa.Text(), nullable=False),
        sa.Column('model', sa.String(length=128), nullable=True),
        sa.Column('insufficient', sa.Boolean(), nullable=False),
        sa.Column('refs', sa.JSON(), nullable=False),
        sa.Column('citations', sa.JSON(), nullable=False),
        sa.Column('explain', sa.JSON(), nullable=True),
        sa.Column('feedback', sa.String(length=8), nullable=True),
        sa.Column('feedback_comment', sa.Text(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['session_id'], ['chat_session.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('session_id', 'seq'),
    )
    op.create_index('ix_chat_message_session_id', 'chat_message', ['session_id'])


def downgrade() -> None:
    op.drop_index('ix_chat_message_session_id', table_name='chat_message')
    op.drop_table('chat_message')
    for column in ('updated_at', 'user_id', 'assistant_id', 'tenant_id'):
        op.drop_index(f'ix_chat_session_{column}', table_name='chat_session')
    op.drop_table('chat_session')
    op.drop_index('ix_assistant_tenant_id', table_name='assistant')
    op.drop_table('assistant')
