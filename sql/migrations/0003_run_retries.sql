-- Migration 0003: the retries table, created lazily by the first --retry-failed before migrations
-- were numbered; IF NOT EXISTS, so a warehouse that has it takes this harmlessly.
-- Each `recon nightly --retry-failed` of a run: when, how many pages it fetched again, how
-- many still failed, and the request ids of the pages it fetched (recon.night.refetch).
CREATE TABLE IF NOT EXISTS run_retries (
    run_id        VARCHAR NOT NULL,
    retry_id      VARCHAR NOT NULL,
    started_at    TIMESTAMPTZ NOT NULL,
    pages_fetched INTEGER NOT NULL,
    still_failing INTEGER NOT NULL,
    request_ids   VARCHAR[],
    PRIMARY KEY (run_id, retry_id)
);
