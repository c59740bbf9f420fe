-- What the last publish made of the objects readers use (recon.warehouse.published): the
-- fingerprint of the statements that made them and of the catalog they left. The checks that
-- find the same fingerprint on the working copy make nothing again.
CREATE TABLE IF NOT EXISTS reader_objects (
    fingerprint VARCHAR NOT NULL,      -- sha256 hex
    made_at     TIMESTAMPTZ NOT NULL   -- when the objects were last made
);
