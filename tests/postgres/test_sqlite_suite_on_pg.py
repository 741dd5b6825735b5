"""Tests of the SQLite suite run again on PostgreSQL: imported here, where the ``settings`` fixture and
``RAGLOOM_DATABASE_URL`` name a fresh PostgreSQL database (``conftest.py``). Chosen for what they do to
the metadata DB — the job queue's lifecycle (tasks, builds and source syncs) and batched claims, a
source's sync (its items' rows written with their documents, a killed sync resumed), the ingestion
pipeline's transactions, keys and the audit log on every API route, manual chunk edits — and kept to the
quick ones (the command-line and long-PDF tests run on SQLite only)."""

from __future__ import annotations

from tests.sources.conftest import shared  # noqa: F401
from tests.sources.test_sync import (  # noqa: F401
    reads,
    test_a_sync_killed_midway_resumes_without_duplicates,
    test_new_changed_deleted_and_unchanged_items,
    test_one_sync_at_a_time_per_source,
    test_the_schedule_queues_due_syncs_and_leaves_paused_sources_alone,
)
from tests.test_api_keys import (  # noqa: F401 - collected by pytest
    served,
    test_a_key_is_created_listed_without_its_secret_and_refused_at_once_when_revoked,
    test_a_read_only_key_may_read_and_ask_but_every_route_that_changes_data_answers_403,
    test_an_expired_key_is_refused_and_an_expiry_in_the_past_is_a_bad_request,
    test_members_may_not_read_the_audit_log_and_no_workspace_reads_another_s,
    test_members_see_and_revoke_only_their_own_keys_and_no_other_workspace_s,
    test_the_audit_log_says_who_did_what_from_where_and_never_a_secret,
)
from tests.test_batching import (  # noqa: F401
    test_a_batch_leaves_the_other_workers_their_share,
    test_a_document_cancelled_in_a_batch_is_cancelled_and_the_others_published,
    test_one_claim_ingests_every_small_document_waiting_in_the_knowledge_base,
)
from tests.test_chunk_edits import (  # noqa: F401
    doc,
    test_an_edit_is_searchable_at_once_and_survives_a_reparse,
    test_bad_requests_and_read_only_callers,
)
from tests.test_pipeline import (  # noqa: F401
    test_cancelled_task_discards_its_chunks_and_keeps_the_active_version,
    test_parse_failure_keeps_reason_and_previous_version,
    test_reindex_rebuilds_the_search_store_from_the_stored_files,
)
from tests.test_queue import (  # noqa: F401
    kind,
    test_a_cancel_is_seen_at_the_next_report,
    test_a_finished_job_is_done_with_its_message,
    test_a_job_handed_back_on_shutdown_keeps_its_attempts,
    test_a_job_whose_worker_keeps_vanishing_fails_after_its_retries,
    test_a_transient_failure_is_retried_later_until_the_attempts_run_out,
    test_each_job_is_claimed_once_by_concurrent_workers,
    test_progress_never_goes_back_and_a_failure_keeps_its_reason,
)
from tests.test_tasks import (  # noqa: F401
    test_cancel_request_is_seen_by_the_running_task,
)
