"""figures (issue 34): the picture of each figure chunk of a version, kept in the object store

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-07 07:00:00.000000
"""
import sqlalchemy as sa
from alembic import op

revision = '0021'
down_revision = '0020'
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        'version_figure',
        sa.Column('version_id', sa.String(length=32), nullable=False),
        sa.Column('chunk_id', sa.String(length=64), nullable=False),
        sa.Column('image_key', sa.String(length=160), nullable=False),
        sa.Column('width', sa.Integer(), nullable=False),
        sa.Column('height', sa.Integer(), nullable=False),
        sa.Column('page', sa.Integer(), nullable=True),
        sa.Column('described_by', sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(['version_id'], ['document_version.id'], ondelete='CASCADE'),
        sa.PrimaryKeyConstraint('version_id', 'chunk_id'),
    )


def downgrade() -> None:
    op.drop_table('version_figure')
