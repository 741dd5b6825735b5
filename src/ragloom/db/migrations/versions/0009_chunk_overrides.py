"""chunk overrides: manual chunk edits, additions and deletions that survive a re-parse

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 15:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'chunk_override',
        sa.Column('id', sa.String(length=32), nullable=False),
        sa.Column('document_id', sa.String(length=32), nullable=False),
        sa.Column('anchor', sa.String(length=64), nullable=False),
        sa.Column('action', sa.String(length=8), nullable=False),
        sa.Column('content', sa.Text(), nullable=True),
        sa.Column('available', sa.Boolean(), nullable=True),
        sa.Column('applied', sa.JSON(), nullable=False),
        sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
        sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(['document_id'], ['document.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('id'),
        sa.UniqueConstraint('document_id', 'anchor'),
    )
    with op.batch_alter_table('chunk_override', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_chunk_override_document_id'), ['document_id'], unique=False)


def downgrade() -> None:
    with op.batch_alter_table('chunk_override', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_chunk_override_document_id'))
    op.drop_table('chunk_override')
