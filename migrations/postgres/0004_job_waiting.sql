-- Why a job nobody runs is waiting, when a server knows (NULL otherwise): a server that claims a job naming an
-- external engine it is not configured with lets the job go and writes here which server and engine; a claim
-- clears it. `GET /v1/annotations/{id}` shows it while the job is not over. (SQLite has no such column: its one
-- server refuses an engine it lacks when the job is made, and fails a resumed job whose engine is gone.)
ALTER TABLE annotation_jobs ADD COLUMN waiting TEXT;
